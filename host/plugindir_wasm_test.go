package host

import (
	"encoding/json"
	"fmt"
)

// The plugins-directory tests need many small modules that differ in their
// tools and bytes. They are WASI command modules assembled here, byte by
// byte, so the tests need no guest toolchain: _start writes a fixed result
// (or the granted environment) to stdout, and the tools are described by a
// sidecar.

func uleb(v uint32) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			out = append(out, b|0x80)
			continue
		}
		return append(out, b)
	}
}

func sleb(v int32) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

func wasmName(s string) []byte { return append(uleb(uint32(len(s))), s...) }

func wasmVec(items ...[]byte) []byte {
	out := uleb(uint32(len(items)))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func wasmSection(id byte, body []byte) []byte {
	return append(append([]byte{id}, uleb(uint32(len(body)))...), body...)
}

// Instructions used by the modules below.
func i32const(v int32) []byte { return append([]byte{0x41}, sleb(v)...) }
func i32store() []byte        { return []byte{0x36, 0x02, 0x00} }
func i32load() []byte         { return []byte{0x28, 0x02, 0x00} }
func call(fn uint32) []byte   { return append([]byte{0x10}, uleb(fn)...) }

const (
	opDrop   = 0x1a
	opSelect = 0x1b
	opSub    = 0x6b
	opEnd    = 0x0b
)

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// commandModule returns a WASI command module whose _start writes prefix,
// then (when withEnv) the first granted environment entry "NAME=value",
// then suffix to stdout. tag goes into a custom section, so modules with
// the same behaviour can still have different bytes.
func commandModule(prefix, suffix, tag string, withEnv bool) []byte {
	const (
		sizes   = 0    // environ count, environ buffer size
		envPtrs = 16   // environ pointers
		envBuf  = 1024 // environ strings
		iovs    = 512  // three iovecs
		written = 600
		data    = 2048 // prefix then suffix
	)
	// Types: 0 = (i32 i32 i32 i32) -> i32, 1 = (i32 i32) -> i32, 2 = () -> ().
	types := wasmVec(
		[]byte{0x60, 4, 0x7f, 0x7f, 0x7f, 0x7f, 1, 0x7f},
		[]byte{0x60, 2, 0x7f, 0x7f, 1, 0x7f},
		[]byte{0x60, 0, 0},
	)
	imports := wasmVec(
		concat(wasmName("wasi_snapshot_preview1"), wasmName("fd_write"), []byte{0x00}, uleb(0)),
		concat(wasmName("wasi_snapshot_preview1"), wasmName("environ_sizes_get"), []byte{0x00}, uleb(1)),
		concat(wasmName("wasi_snapshot_preview1"), wasmName("environ_get"), []byte{0x00}, uleb(1)),
	)
	const fdWrite, environSizesGet, environGet, start = 0, 1, 2, 3
	envLen := concat(i32const(0)) // length of the env part
	var prologue []byte
	if withEnv {
		prologue = concat(
			i32const(sizes), i32const(sizes+4), call(environSizesGet), []byte{opDrop},
			i32const(envPtrs), i32const(envBuf), call(environGet), []byte{opDrop},
		)
		// bufsize-1 (the first string without its NUL) when there is one.
		envLen = concat(
			i32const(sizes+4), i32load(), i32const(1), []byte{opSub},
			i32const(0),
			i32const(sizes+4), i32load(),
			[]byte{opSelect},
		)
	}
	body := concat(
		prologue,
		i32const(iovs), i32const(data), i32store(),
		i32const(iovs+4), i32const(int32(len(prefix))), i32store(),
		i32const(iovs+8), i32const(envBuf), i32store(),
		i32const(iovs+12), envLen, i32store(),
		i32const(iovs+16), i32const(data+int32(len(prefix))), i32store(),
		i32const(iovs+20), i32const(int32(len(suffix))), i32store(),
		i32const(1), i32const(iovs), i32const(3), i32const(written), call(fdWrite), []byte{opDrop},
		[]byte{opEnd},
	)
	code := wasmVec(concat(uleb(uint32(len(body)+1)), []byte{0x00}, body)) // no locals
	mod := concat(
		[]byte("\x00asm\x01\x00\x00\x00"),
		wasmSection(1, types),
		wasmSection(2, imports),
		wasmSection(3, wasmVec(uleb(2))),
		wasmSection(5, wasmVec([]byte{0x00, 0x01})),
		wasmSection(7, wasmVec(
			concat(wasmName("_start"), []byte{0x00}, uleb(start)),
			concat(wasmName("memory"), []byte{0x02}, uleb(0)),
		)),
		wasmSection(10, code),
		wasmSection(11, wasmVec(concat([]byte{0x00}, i32const(data), []byte{opEnd}, wasmName(prefix+suffix)))),
		wasmSection(0, concat(wasmName("tag"), []byte(tag))),
	)
	return mod
}

// textModule returns a module whose every call answers text.
func textModule(text, tag string) []byte {
	b, _ := json.Marshal(text)
	return commandModule(`{"content":[{"type":"text","text":`+string(b)+`}]}`, "", tag, false)
}

// envModule returns a module answering "env=" followed by the first granted
// environment entry ("env=" alone when none is granted).
func envModule(tag string) []byte {
	return commandModule(`{"content":[{"type":"text","text":"env=`, `"}]}`, tag, true)
}

// sidecar returns a describe document offering tools, asking for caps.
func sidecar(caps []string, tools ...string) []byte {
	type td struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	doc := struct {
		Tools        []td     `json:"tools"`
		Capabilities []string `json:"capabilities,omitempty"`
	}{Capabilities: caps}
	for _, t := range tools {
		doc.Tools = append(doc.Tools, td{Name: t, Description: fmt.Sprintf("The %s tool.", t), InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	b, _ := json.Marshal(doc)
	return b
}
