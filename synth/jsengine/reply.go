package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// callInput is the host's call input: {"params":{"name","arguments"}}.
type callInput struct {
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"params"`
}

// checkTool is the tool name that asks the engine to load the script and
// check that it defines run, without calling it. The synth package lists
// it in the describe document of a quarantined tool so a script that does
// not compile is refused before the tool is registered; staged tools do not
// list it.
const checkTool = "autoagent_check"

// handle serves one call: input is the host's call input, script the
// tool's script. It returns the MCP result, or the failure message the
// host reports as the tool's error.
func handle(input []byte, script string, haveScript bool, call bridge) ([]byte, string) {
	if !haveScript || script == "" {
		return nil, "jsengine: no script to run: this module is the autoagent JavaScript engine and runs the script given in its configuration key \"script\" (a staged tool's describe sidecar carries it under \"config\")"
	}
	var in callInput
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Sprintf("jsengine: the call input is not {\"params\":{\"name\",\"arguments\"}}: %v", err)
	}
	if in.Params.Name == checkTool {
		if err := checkScript(script); err != nil {
			return nil, err.Error()
		}
		return reply([]byte(`"ok"`)), ""
	}
	value, err := runScript(script, in.Params.Arguments, call)
	if err != nil {
		return nil, err.Error()
	}
	return reply(value), ""
}

// handleProgram serves one call of a code-mode program.
func handleProgram(input []byte, call bridge) ([]byte, string) {
	var in callInput
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Sprintf("jsengine: the call input is not {\"params\":{\"name\",\"arguments\"}}: %v", err)
	}
	value, err := runProgram(in.Params.Arguments, call)
	if err != nil {
		return nil, err.Error()
	}
	return reply(value), ""
}

// reply wraps the JSON value a script returned in an MCP result: its JSON
// text as content and, for an object, the object as structured content.
// The envelope is built here, in Go, so nothing a script does can change
// its shape.
func reply(value []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"content":[{"type":"text","text":`)
	text, _ := json.Marshal(string(value))
	b.Write(text)
	b.WriteString(`}]`)
	if v := bytes.TrimSpace(value); len(v) > 0 && v[0] == '{' {
		b.WriteString(`,"structuredContent":`)
		b.Write(v)
	}
	b.WriteString(`}`)
	return b.Bytes()
}
