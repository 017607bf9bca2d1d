package synth

import (
	"strconv"
	"strings"
)

// goEntry returns the generated entry point of a Go tool: the Extism
// kernel imports, describe (the tool's describe document, so the module
// needs no sidecar) and call (decode the arguments, call run, encode its
// value as the reply), and callTool when the tool is granted a host tool.
// Every identifier starts with autoagent so the model's code cannot clash
// with it (Screen refuses such names).
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
	"encoding/binary"
	"encoding/json"
	"fmt"
)

//go:wasmimport extism:host/env input_length
func autoagentInputLength() uint64

//go:wasmimport extism:host/env input_load_u64
func autoagentInputLoadU64(i uint64) uint64

//go:wasmimport extism:host/env input_load_u8
func autoagentInputLoadU8(i uint64) uint32

//go:wasmimport extism:host/env alloc
func autoagentAlloc(n uint64) uint64

//go:wasmimport extism:host/env free
func autoagentFree(off uint64)

//go:wasmimport extism:host/env length
func autoagentLength(off uint64) uint64

//go:wasmimport extism:host/env load_u64
func autoagentLoadU64(off uint64) uint64

//go:wasmimport extism:host/env load_u8
func autoagentLoadU8(off uint64) uint32

//go:wasmimport extism:host/env store_u64
func autoagentStoreU64(off, v uint64)

//go:wasmimport extism:host/env store_u8
func autoagentStoreU8(off uint64, v uint32)

//go:wasmimport extism:host/env output_set
func autoagentOutputSet(off, n uint64)

//go:wasmimport extism:host/env error_set
func autoagentErrorSet(off uint64)

func main() {}

const autoagentDescription = DESCRIBE

func autoagentWrite(b []byte) uint64 {
	off := autoagentAlloc(uint64(len(b)))
	n := uint64(len(b))
	var i uint64
	for ; i+8 <= n; i += 8 {
		autoagentStoreU64(off+i, binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < n; i++ {
		autoagentStoreU8(off+i, uint32(b[i]))
	}
	return off
}

func autoagentRead(off uint64) []byte {
	n := autoagentLength(off)
	b := make([]byte, n)
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], autoagentLoadU64(off+i))
	}
	for ; i < n; i++ {
		b[i] = byte(autoagentLoadU8(off + i))
	}
	return b
}

func autoagentInput() []byte {
	n := autoagentInputLength()
	b := make([]byte, n)
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], autoagentInputLoadU64(i))
	}
	for ; i < n; i++ {
		b[i] = byte(autoagentInputLoadU8(i))
	}
	return b
}

func autoagentOutput(b []byte) { autoagentOutputSet(autoagentWrite(b), uint64(len(b))) }

func autoagentFail(msg string) int32 {
	autoagentErrorSet(autoagentWrite([]byte(msg)))
	return 1
}

//go:wasmexport describe
func autoagentDescribe() int32 {
	autoagentOutput([]byte(autoagentDescription))
	return 0
}

//go:wasmexport call
func autoagentCall() (rc int32) {
	defer func() {
		if p := recover(); p != nil {
			rc = autoagentFail(fmt.Sprintf("run panicked: %v", p))
		}
	}()
	var in struct {
		Params struct {
			Arguments json.RawMessage ` + "`json:\"arguments\"`" + `
		} ` + "`json:\"params\"`" + `
	}
	if err := json.Unmarshal(autoagentInput(), &in); err != nil {
		return autoagentFail("invalid call input: " + err.Error())
	}
	args := map[string]any{}
	if len(in.Params.Arguments) > 0 {
		if err := json.Unmarshal(in.Params.Arguments, &args); err != nil || args == nil {
			return autoagentFail("the arguments are not a JSON object")
		}
	}
	v, err := run(args)
	if err != nil {
		return autoagentFail(err.Error())
	}
	value, err := json.Marshal(v)
	if err != nil {
		return autoagentFail("run returned a value that is not JSON: " + err.Error())
	}
	text, _ := json.Marshal(string(value))
	reply := ` + "`{\"content\":[{\"type\":\"text\",\"text\":`" + ` + string(text) + "}]"
	if len(value) > 0 && value[0] == '{' {
		reply += ` + "`,\"structuredContent\":`" + ` + string(value)
	}
	autoagentOutput([]byte(reply + "}"))
	return 0
}
`

const goBridgeText = `
//go:wasmimport extism:host/user tool_call
func autoagentToolCall(req uint64) uint64

// callTool calls the host tool name with args through the host, which
// applies the same policy and approval gates as to a model's call. It
// returns the tool's structured content (or its text) and an error when
// the tool reported one.
func callTool(name string, args any) (any, error) {
	if args == nil {
		args = map[string]any{}
	}
	a, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("callTool(%q): arguments: %v", name, err)
	}
	req, _ := json.Marshal(struct {
		Name      string          ` + "`json:\"name\"`" + `
		Arguments json.RawMessage ` + "`json:\"arguments\"`" + `
	}{name, a})
	off := autoagentWrite(req)
	res := autoagentToolCall(off)
	autoagentFree(off)
	raw := autoagentRead(res)
	autoagentFree(res)
	var r struct {
		Content []struct {
			Text string ` + "`json:\"text\"`" + `
		} ` + "`json:\"content\"`" + `
		StructuredContent json.RawMessage ` + "`json:\"structuredContent\"`" + `
		IsError           bool            ` + "`json:\"isError\"`" + `
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("callTool(%q): invalid result: %v", name, err)
	}
	text := ""
	for _, c := range r.Content {
		text += c.Text
	}
	if r.IsError {
		return nil, fmt.Errorf("callTool(%q): %s", name, text)
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		var v any
		if err := json.Unmarshal(r.StructuredContent, &v); err != nil {
			return nil, fmt.Errorf("callTool(%q): %v", name, err)
		}
		return v, nil
	}
	return text, nil
}
`
