module github.com/autoagent-go/autoagent/plugins/src

go 1.26.0

require github.com/autoagent-go/autoagent/pdk/go v0.0.0

replace github.com/autoagent-go/autoagent/pdk/go => ../../pdk/go
