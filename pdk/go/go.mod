module github.com/autoagent-go/autoagent/pdk/go

go 1.26.0
