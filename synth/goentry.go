package synth

import (
	"strconv"
	"strings"
)

// goEntry returns the generated entry point of a Go tool: describe (the
// tool's describe document, so the module needs no sidecar) and call
// (decode the arguments, call run, encode its value as the reply), and
// callTool when the tool is granted a host tool. It reaches the host
// through the Go PDK's binding, package extism. Every name it declares in
// the package or imports into its file starts with autoagent, but main,
// run's caller, and callTool, so the model's code cannot clash with it
// (Screen refuses such names).
func goEntry(describe []byte, bridge bool) string {
	s := strings.Replace(goEntryText, "DESCRIBE", strconv.Quote(string(describe)), 1)
	if bridge {
		s += goBridgeText
	}
	return s
}

const goEntryText = `//go:build wasip1

package main

import (
	autoagentjson "encoding/json"
	autoagentfmt "fmt"

	autoagentextism "github.com/autoagent-go/autoagent/pdk/go/extism"
)

func main() {}

const autoagentDescription = DESCRIBE

func autoagentFail(msg string) int32 {
	autoagentextism.SetError(msg)
	return 1
}

//go:wasmexport describe
func autoagentDescribe() int32 {
	autoagentextism.Output([]byte(autoagentDescription))
	return 0
}

//go:wasmexport call
func autoagentCall() (rc int32) {
	defer func() {
		if p := recover(); p != nil {
			rc = autoagentFail(autoagentfmt.Sprintf("run panicked: %v", p))
		}
	}()
	var in struct {
		Params struct {
			Arguments autoagentjson.RawMessage ` + "`json:\"arguments\"`" + `
		} ` + "`json:\"params\"`" + `
	}
	if err := autoagentjson.Unmarshal(autoagentextism.Input(nil), &in); err != nil {
		return autoagentFail("invalid call input: " + err.Error())
	}
	args := map[string]any{}
	if len(in.Params.Arguments) > 0 {
		if err := autoagentjson.Unmarshal(in.Params.Arguments, &args); err != nil || args == nil {
			return autoagentFail("the arguments are not a JSON object")
		}
	}
	v, err := run(args)
	if err != nil {
		return autoagentFail(err.Error())
	}
	value, err := autoagentjson.Marshal(v)
	if err != nil {
		return autoagentFail("run returned a value that is not JSON: " + err.Error())
	}
	text, _ := autoagentjson.Marshal(string(value))
	reply := ` + "`{\"content\":[{\"type\":\"text\",\"text\":`" + ` + string(text) + "}]"
	if len(value) > 0 && value[0] == '{' {
		reply += ` + "`,\"structuredContent\":`" + ` + string(value)
	}
	autoagentextism.Output([]byte(reply + "}"))
	return 0
}
`

const goBridgeText = `
// callTool calls the host tool name with args through the host, which
// applies the same policy and approval gates as to a model's call. It
// returns the tool's structured content (or its text) and an error when
// the tool reported one.
func callTool(name string, args any) (any, error) {
	if args == nil {
		args = map[string]any{}
	}
	a, err := autoagentjson.Marshal(args)
	if err != nil {
		return nil, autoagentfmt.Errorf("callTool(%q): arguments: %v", name, err)
	}
	req, _ := autoagentjson.Marshal(struct {
		Name      string                   ` + "`json:\"name\"`" + `
		Arguments autoagentjson.RawMessage ` + "`json:\"arguments\"`" + `
	}{name, a})
	raw := autoagentextism.CallTool(req)
	var r struct {
		Content []struct {
			Text string ` + "`json:\"text\"`" + `
		} ` + "`json:\"content\"`" + `
		StructuredContent autoagentjson.RawMessage ` + "`json:\"structuredContent\"`" + `
		IsError           bool                     ` + "`json:\"isError\"`" + `
	}
	if err := autoagentjson.Unmarshal(raw, &r); err != nil {
		return nil, autoagentfmt.Errorf("callTool(%q): invalid result: %v", name, err)
	}
	text := ""
	for _, c := range r.Content {
		text += c.Text
	}
	if r.IsError {
		return nil, autoagentfmt.Errorf("callTool(%q): %s", name, text)
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		var v any
		if err := autoagentjson.Unmarshal(r.StructuredContent, &v); err != nil {
			return nil, autoagentfmt.Errorf("callTool(%q): %v", name, err)
		}
		return v, nil
	}
	return text, nil
}
`
