//go:build wasip1

// Command v1 is a hyper-mcp plugin of the v1 interface (exports describe
// and call, MCP-shaped), written with Extism's official Go PDK as
// hyper-mcp's v1 examples are. Its tool greet says hello.
package main

import (
	"encoding/json"
	"fmt"

	pdk "github.com/extism/go-pdk"
)

type callRequest struct {
	Params struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"params"`
}

//go:wasmexport describe
func describe() int32 {
	pdk.OutputString(`{"tools":[{"name":"greet","description":"Says hello.",` +
		`"inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}]}`)
	return 0
}

//go:wasmexport call
func call() int32 {
	var req callRequest
	if err := pdk.InputJSON(&req); err != nil {
		pdk.SetError(err)
		return 1
	}
	if req.Params.Name != "greet" {
		pdk.SetErrorString("unknown tool " + req.Params.Name)
		return 1
	}
	text, _ := json.Marshal(fmt.Sprintf("Hello, %v!", req.Params.Arguments["name"]))
	pdk.OutputString(`{"content":[{"type":"text","text":` + string(text) + `}]}`)
	return 0
}

func main() {}
