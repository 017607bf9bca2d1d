//go:build wasip1

// Command v1 is a hyper-mcp plugin of the v1 interface (exports describe
// and call, MCP-shaped), written with Extism's official Go PDK as
// hyper-mcp's v1 examples are. Its tool greet says hello; add_tool adds a
// tool tool_N and says so with notify_tool_list_changed, as hyper-mcp's
// tool-list-changed example does.
package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	pdk "github.com/extism/go-pdk"
)

type callRequest struct {
	Params struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"params"`
}

//go:wasmimport extism:host/user notify_tool_list_changed
func notifyToolListChanged()

// added counts the tools add_tool made; the instance remembers it.
var added int

//go:wasmexport describe
func describe() int32 {
	doc := `{"tools":[{"name":"greet","description":"Says hello.",` +
		`"inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}},` +
		`{"name":"add_tool","description":"Adds a tool.","inputSchema":{"type":"object"}}`
	for i := 1; i <= added; i++ {
		doc += `,{"name":"tool_` + strconv.Itoa(i) + `","description":"Made by add_tool.","inputSchema":{"type":"object"}}`
	}
	pdk.OutputString(doc + `]}`)
	return 0
}

func text(s string) {
	t, _ := json.Marshal(s)
	pdk.OutputString(`{"content":[{"type":"text","text":` + string(t) + `}]}`)
}

//go:wasmexport call
func call() int32 {
	var req callRequest
	if err := pdk.InputJSON(&req); err != nil {
		pdk.SetError(err)
		return 1
	}
	switch name := req.Params.Name; {
	case name == "greet":
		text(fmt.Sprintf("Hello, %v!", req.Params.Arguments["name"]))
	case name == "add_tool":
		added++
		notifyToolListChanged()
		text(fmt.Sprintf("added tool_%d", added))
	case strings.HasPrefix(name, "tool_"):
		text("called " + name)
	default:
		pdk.SetErrorString("unknown tool " + name)
		return 1
	}
	return 0
}

func main() {}
