//go:build wasip1

// Command goecho is a Go guest for the Extism plugin ABI, written without a
// PDK: it imports the kernel functions of host/ABI.md directly. Its tools:
// echo (arguments back, as text and structured content) and upper (a
// string in upper case). Build: GOOS=wasip1 GOARCH=wasm go build
// -buildmode=c-shared.
package main

import (
	"encoding/json"
	"strings"
	"unsafe"
)

//go:wasmimport extism:host/env input_length
func inputLength() uint64

//go:wasmimport extism:host/env input_load_u64
func inputLoadU64(i uint64) uint64

//go:wasmimport extism:host/env input_load_u8
func inputLoadU8(i uint64) uint32

//go:wasmimport extism:host/env alloc
func alloc(n uint64) uint64

//go:wasmimport extism:host/env store_u64
func storeU64(off, v uint64)

//go:wasmimport extism:host/env store_u8
func storeU8(off uint64, v uint32)

//go:wasmimport extism:host/env output_set
func outputSet(off, n uint64)

//go:wasmimport extism:host/env error_set
func errorSet(off uint64)

func input() []byte {
	n := inputLength()
	b := make([]byte, n)
	i := uint64(0)
	for ; i+8 <= n; i += 8 {
		*(*uint64)(unsafe.Pointer(&b[i])) = inputLoadU64(i)
	}
	for ; i < n; i++ {
		b[i] = byte(inputLoadU8(i))
	}
	return b
}

func block(b []byte) uint64 {
	n := uint64(len(b))
	off := alloc(n)
	i := uint64(0)
	for ; i+8 <= n; i += 8 {
		storeU64(off+i, *(*uint64)(unsafe.Pointer(&b[i])))
	}
	for ; i < n; i++ {
		storeU8(off+i, uint32(b[i]))
	}
	return off
}

func output(v any) int32 {
	b, err := json.Marshal(v)
	if err != nil {
		return fail(err.Error())
	}
	outputSet(block(b), uint64(len(b)))
	return 0
}

func fail(msg string) int32 {
	errorSet(block([]byte(msg)))
	return 1
}

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type result struct {
	Content           []content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
}

//go:wasmexport describe
func describe() int32 {
	return output(map[string]any{"tools": []map[string]any{
		{"name": "echo", "description": "Returns its arguments.", "inputSchema": map[string]any{"type": "object"}},
		{"name": "upper", "description": "Upper-cases a string.", "inputSchema": map[string]any{
			"type": "object", "properties": map[string]any{"s": map[string]any{"type": "string"}}, "required": []string{"s"}}},
	}})
}

//go:wasmexport call
func call() int32 {
	var in struct {
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if err := json.Unmarshal(input(), &in); err != nil {
		return fail("bad input: " + err.Error())
	}
	switch in.Params.Name {
	case "echo":
		return output(result{Content: []content{{"text", string(in.Params.Arguments)}}, StructuredContent: in.Params.Arguments})
	case "upper":
		var a struct{ S string }
		if err := json.Unmarshal(in.Params.Arguments, &a); err != nil {
			return fail(err.Error())
		}
		return output(result{Content: []content{{"text", strings.ToUpper(a.S)}}})
	}
	return fail("unknown tool " + in.Params.Name)
}

func main() {}
