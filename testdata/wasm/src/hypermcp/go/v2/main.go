//go:build wasip1

// Command v2 is a hyper-mcp plugin of the v2 interface, the one hyper-mcp
// recommends for new plugins (templates/plugins/go): tools (list_tools,
// call_tool), prompts (list_prompts, get_prompt), resources
// (list_resources, list_resource_templates, read_resource) and completion
// (complete), each taking {"request": ..., "context": ...} and answering
// with MCP's result shapes. Written with Extism's official Go PDK.
//
// Tools: greet {"name"} says hello; now reports the current year (the
// guest's clock); token returns 16 random bytes as hex.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	pdk "github.com/extism/go-pdk"
)

type text struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolResult struct {
	Content []text `json:"content"`
	IsError bool   `json:"isError,omitempty"`
}

func fail(err error) int32 {
	pdk.SetError(err)
	return 1
}

func output(v any) int32 {
	if err := pdk.OutputJSON(v); err != nil {
		return fail(err)
	}
	return 0
}

//go:wasmexport list_tools
func listTools() int32 {
	object := map[string]any{"type": "object"}
	return output(map[string]any{"tools": []map[string]any{
		{"name": "greet", "description": "Says hello.", "inputSchema": map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}},
		{"name": "now", "description": "Reports the current year.", "inputSchema": object},
		{"name": "token", "description": "Returns 16 random bytes as hex.", "inputSchema": object},
	}})
}

//go:wasmexport call_tool
func callTool() int32 {
	var in struct {
		Request struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"request"`
	}
	if err := pdk.InputJSON(&in); err != nil {
		return fail(err)
	}
	switch in.Request.Name {
	case "greet":
		return output(toolResult{Content: []text{{"text", fmt.Sprintf("Hello, %v!", in.Request.Arguments["name"])}}})
	case "now":
		return output(toolResult{Content: []text{{"text", strconv.Itoa(time.Now().Year())}}})
	case "token":
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		return output(toolResult{Content: []text{{"text", hex.EncodeToString(b)}}})
	}
	return output(toolResult{Content: []text{{"text", "unknown tool " + in.Request.Name}}, IsError: true})
}

//go:wasmexport list_prompts
func listPrompts() int32 {
	return output(map[string]any{"prompts": []map[string]any{{
		"name": "review", "description": "Asks for a code review.",
		"arguments": []map[string]any{{"name": "language", "description": "The code's language.", "required": true}},
	}}})
}

//go:wasmexport get_prompt
func getPrompt() int32 {
	var in struct {
		Request struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		} `json:"request"`
	}
	if err := pdk.InputJSON(&in); err != nil {
		return fail(err)
	}
	if in.Request.Name != "review" {
		return fail(fmt.Errorf("no prompt %q", in.Request.Name))
	}
	return output(map[string]any{"description": "A code review.", "messages": []map[string]any{{
		"role": "user", "content": text{"text", "Review this " + in.Request.Arguments["language"] + " code."},
	}}})
}

//go:wasmexport list_resources
func listResources() int32 {
	return output(map[string]any{"resources": []map[string]any{
		{"uri": "memo://readme", "name": "readme", "description": "The plugin's readme.", "mimeType": "text/plain"},
	}})
}

//go:wasmexport list_resource_templates
func listResourceTemplates() int32 {
	return output(map[string]any{"resourceTemplates": []map[string]any{
		{"uriTemplate": "memo://{name}", "name": "memo", "description": "A memo by name.", "mimeType": "text/plain"},
	}})
}

//go:wasmexport read_resource
func readResource() int32 {
	var in struct {
		Request struct {
			URI string `json:"uri"`
		} `json:"request"`
	}
	if err := pdk.InputJSON(&in); err != nil {
		return fail(err)
	}
	name, ok := strings.CutPrefix(in.Request.URI, "memo://")
	if !ok {
		return fail(fmt.Errorf("no resource %q", in.Request.URI))
	}
	return output(map[string]any{"contents": []map[string]any{
		{"uri": in.Request.URI, "mimeType": "text/plain", "text": "memo " + name},
	}})
}

//go:wasmexport complete
func complete() int32 {
	var in struct {
		Request struct {
			Argument struct {
				Name, Value string
			} `json:"argument"`
		} `json:"request"`
	}
	if err := pdk.InputJSON(&in); err != nil {
		return fail(err)
	}
	var values []string
	for _, l := range []string{"go", "rust", "python"} {
		if strings.HasPrefix(l, in.Request.Argument.Value) {
			values = append(values, l)
		}
	}
	return output(map[string]any{"completion": map[string]any{"values": values, "total": len(values), "hasMore": false}})
}

func main() {}
