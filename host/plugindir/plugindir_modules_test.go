package plugindir

import (
	"encoding/json"
	"fmt"
)

// The plugins-directory tests need many small modules that differ in their
// tools and bytes. They are WASI command modules assembled here, byte by
// byte, so the tests need no guest toolchain: _start writes a fixed result
// (or the granted environment) to stdout, and the tools are described by a
// sidecar.

func waUleb(v uint32) []byte {
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

func waSleb(v int32) []byte {
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

func waWasmName(s string) []byte { return append(waUleb(uint32(len(s))), s...) }

func waWasmVec(items ...[]byte) []byte {
	out := waUleb(uint32(len(items)))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func waWasmSection(id byte, body []byte) []byte {
	return append(append([]byte{id}, waUleb(uint32(len(body)))...), body...)
}

// Instructions used by the modules below.
func waI32const(v int32) []byte { return append([]byte{0x41}, waSleb(v)...) }
func waI32store() []byte        { return []byte{0x36, 0x02, 0x00} }
func waI32load() []byte         { return []byte{0x28, 0x02, 0x00} }
func waCall(fn uint32) []byte   { return append([]byte{0x10}, waUleb(fn)...) }

const (
	waOpDrop   = 0x1a
	waOpSelect = 0x1b
	waOpSub    = 0x6b
	waOpEnd    = 0x0b
)

func waConcat(parts ...[]byte) []byte {
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
func waCommandModule(prefix, suffix, tag string, withEnv bool) []byte {
	const (
		sizes   = 0    // environ count, environ buffer size
		envPtrs = 16   // environ pointers
		envBuf  = 1024 // environ strings
		iovs    = 512  // three iovecs
		written = 600
		data    = 2048 // prefix then suffix
	)
	// Types: 0 = (i32 i32 i32 i32) -> i32, 1 = (i32 i32) -> i32, 2 = () -> ().
	types := waWasmVec(
		[]byte{0x60, 4, 0x7f, 0x7f, 0x7f, 0x7f, 1, 0x7f},
		[]byte{0x60, 2, 0x7f, 0x7f, 1, 0x7f},
		[]byte{0x60, 0, 0},
	)
	imports := waWasmVec(
		waConcat(waWasmName("wasi_snapshot_preview1"), waWasmName("fd_write"), []byte{0x00}, waUleb(0)),
		waConcat(waWasmName("wasi_snapshot_preview1"), waWasmName("environ_sizes_get"), []byte{0x00}, waUleb(1)),
		waConcat(waWasmName("wasi_snapshot_preview1"), waWasmName("environ_get"), []byte{0x00}, waUleb(1)),
	)
	const fdWrite, environSizesGet, environGet, start = 0, 1, 2, 3
	envLen := waConcat(waI32const(0)) // length of the env part
	var prologue []byte
	if withEnv {
		prologue = waConcat(
			waI32const(sizes), waI32const(sizes+4), waCall(environSizesGet), []byte{waOpDrop},
			waI32const(envPtrs), waI32const(envBuf), waCall(environGet), []byte{waOpDrop},
		)
		// bufsize-1 (the first string without its NUL) when there is one.
		envLen = waConcat(
			waI32const(sizes+4), waI32load(), waI32const(1), []byte{waOpSub},
			waI32const(0),
			waI32const(sizes+4), waI32load(),
			[]byte{waOpSelect},
		)
	}
	body := waConcat(
		prologue,
		waI32const(iovs), waI32const(data), waI32store(),
		waI32const(iovs+4), waI32const(int32(len(prefix))), waI32store(),
		waI32const(iovs+8), waI32const(envBuf), waI32store(),
		waI32const(iovs+12), envLen, waI32store(),
		waI32const(iovs+16), waI32const(data+int32(len(prefix))), waI32store(),
		waI32const(iovs+20), waI32const(int32(len(suffix))), waI32store(),
		waI32const(1), waI32const(iovs), waI32const(3), waI32const(written), waCall(fdWrite), []byte{waOpDrop},
		[]byte{waOpEnd},
	)
	code := waWasmVec(waConcat(waUleb(uint32(len(body)+1)), []byte{0x00}, body)) // no locals
	mod := waConcat(
		[]byte("\x00asm\x01\x00\x00\x00"),
		waWasmSection(1, types),
		waWasmSection(2, imports),
		waWasmSection(3, waWasmVec(waUleb(2))),
		waWasmSection(5, waWasmVec([]byte{0x00, 0x01})),
		waWasmSection(7, waWasmVec(
			waConcat(waWasmName("_start"), []byte{0x00}, waUleb(start)),
			waConcat(waWasmName("memory"), []byte{0x02}, waUleb(0)),
		)),
		waWasmSection(10, code),
		waWasmSection(11, waWasmVec(waConcat([]byte{0x00}, waI32const(data), []byte{waOpEnd}, waWasmName(prefix+suffix)))),
		waWasmSection(0, waConcat(waWasmName("tag"), []byte(tag))),
	)
	return mod
}

// textModule returns a module whose every call answers text.
func waTextModule(text, tag string) []byte {
	b, _ := json.Marshal(text)
	return waCommandModule(`{"content":[{"type":"text","text":`+string(b)+`}]}`, "", tag, false)
}

// envModule returns a module answering "env=" followed by the first granted
// environment entry ("env=" alone when none is granted).
func waEnvModule(tag string) []byte {
	return waCommandModule(`{"content":[{"type":"text","text":"env=`, `"}]}`, tag, true)
}

// sidecar returns a describe document offering tools, asking for caps.
func waSidecar(caps []string, tools ...string) []byte {
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
