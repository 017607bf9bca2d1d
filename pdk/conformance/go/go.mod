module github.com/autoagent-go/autoagent/pdk/conformance/go

go 1.26.0

require github.com/autoagent-go/autoagent/pdk/go v0.0.0

replace github.com/autoagent-go/autoagent/pdk/go => ../../go
