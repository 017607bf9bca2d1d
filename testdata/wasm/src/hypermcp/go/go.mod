module example.com/hypermcp

go 1.26.0

require github.com/extism/go-pdk v1.1.3
