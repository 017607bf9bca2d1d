//go:build !wasip1

package extism

import (
	"bytes"
	"testing"
)

// pattern returns n bytes that differ from their neighbours, so a copy
// that drops, repeats or swaps a byte shows.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
}

// lengths covers the copy loops' cases: nothing, a tail alone, whole
// words, words and a tail, and a large block.
var lengths = []int{0, 1, 7, 8, 9, 15, 16, 17, 23, 1000, 1 << 16}

// liveBlocks counts the blocks not freed.
func liveBlocks() int {
	kernel.Lock()
	defer kernel.Unlock()
	return len(kernel.blocks)
}

func TestWriteReadTake(t *testing.T) {
	for _, n := range lengths {
		want := pattern(n)
		before := liveBlocks()
		off := Write(want)
		if n == 0 && off != 0 {
			t.Errorf("Write(empty) = %d, want 0 (the kernel allocates nothing)", off)
		}
		if got := Read(off); !bytes.Equal(got, want) {
			t.Errorf("%d bytes: Read after Write = %v, want %v", n, got, want)
		}
		if got := Take(off); !bytes.Equal(got, want) {
			t.Errorf("%d bytes: Take after Write differs", n)
		}
		if after := liveBlocks(); after != before {
			t.Errorf("%d bytes: %d blocks live after Take, want %d", n, after, before)
		}
		if got := Read(off); len(got) != 0 {
			t.Errorf("%d bytes: a freed block reads as %d bytes", n, len(got))
		}
	}
}

// ReadInto reads in place when the buffer holds the block, into a new
// slice when it does not, and never leaves a longer buffer's old bytes.
func TestReadInto(t *testing.T) {
	for _, n := range lengths {
		want := pattern(n)
		off := Write(want)
		roomy := bytes.Repeat([]byte{0xee}, n+5)
		got := ReadInto(roomy[:3], off)
		if !bytes.Equal(got, want) {
			t.Errorf("%d bytes into a roomy buffer = %v", n, got)
		}
		if n > 0 && &got[0] != &roomy[0] {
			t.Errorf("%d bytes into a buffer of capacity %d: not read in place", n, cap(roomy))
		}
		if n > 0 {
			small := make([]byte, 0, n-1)
			if got := ReadInto(small, off); !bytes.Equal(got, want) {
				t.Errorf("%d bytes into a buffer of capacity %d = %v", n, n-1, got)
			}
		}
		Free(off)
	}
}

func TestInput(t *testing.T) {
	defer func() { kernel.input = nil }()
	for _, n := range lengths {
		kernel.input = pattern(n)
		if got := Input(nil); !bytes.Equal(got, kernel.input) {
			t.Errorf("Input(nil) with %d bytes = %v", n, got)
		}
		roomy := make([]byte, 3, n+5)
		got := Input(roomy)
		if !bytes.Equal(got, kernel.input) {
			t.Errorf("Input(buf) with %d bytes = %v", n, got)
		}
		if cap(got) != cap(roomy) || n > 0 && &got[0] != &roomy[:1][0] {
			t.Errorf("%d bytes into a buffer of capacity %d: not read in place", n, cap(roomy))
		}
		if n > 0 {
			small := make([]byte, 0, n-1)
			if got := Input(small); !bytes.Equal(got, kernel.input) || cap(got) < n {
				t.Errorf("%d bytes into a buffer of capacity %d = %v", n, n-1, got)
			}
		}
	}
}

func TestOutputAndError(t *testing.T) {
	defer func() { kernel.output, kernel.err = nil, nil }()
	for _, n := range lengths {
		want := pattern(n)
		Output(want)
		if !bytes.Equal(kernel.output, want) {
			t.Errorf("Output of %d bytes set %d bytes", n, len(kernel.output))
		}
	}
	SetError("file not found: notes.txt")
	if string(kernel.err) != "file not found: notes.txt" {
		t.Errorf("SetError set %q", kernel.err)
	}
}

// Config and CallTool free every block they use, the key and request as
// well as the host's answer. An empty value has no block (the kernel
// allocates none for zero bytes, and config_get answers 0), so it reads as
// unset, as through the host.
func TestConfigAndCallToolFreeTheirBlocks(t *testing.T) {
	kernel.config = map[string]string{"script": "function run() {}", "empty": ""}
	kernel.tools = func(req []byte) []byte { return append([]byte("result of "), req...) }
	defer func() { kernel.config, kernel.tools = nil, nil }()
	before := liveBlocks()
	for _, c := range []struct {
		key, want string
		ok        bool
	}{{"script", "function run() {}", true}, {"empty", "", false}, {"absent", "", false}} {
		if v, ok := Config(c.key); v != c.want || ok != c.ok {
			t.Errorf("Config(%q) = %q, %v; want %q, %v", c.key, v, ok, c.want, c.ok)
		}
	}
	if got := CallTool([]byte(`{"name":"t"}`)); string(got) != `result of {"name":"t"}` {
		t.Errorf("CallTool = %q", got)
	}
	buf := make([]byte, 0, 64)
	for _, name := range []string{"a long tool name", "t"} {
		req := []byte(`{"name":"` + name + `"}`)
		got := CallToolInto(req, buf)
		if string(got) != "result of "+string(req) || &got[0] != &buf[:1][0] {
			t.Errorf("CallToolInto(%s) = %q, in place %v", req, got, &got[0] == &buf[:1][0])
		}
	}
	if after := liveBlocks(); after != before {
		t.Errorf("%d blocks live after Config and CallTool, want %d", after, before)
	}
}

// The capability functions have no host outside WebAssembly: they panic
// rather than answer as if one had refused.
func TestCapabilitiesNeedAHost(t *testing.T) {
	for name, f := range map[string]func(){
		"http_request": func() { HTTPRequest(0, 0) },
		"kv_get":       func() { KVGet(0, 0) },
		"tool_call":    func() { CallTool(nil) },
		"log_info":     func() { LogInfo(0) },
		"var_set":      func() { VarSet(0, 0) },
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !bytes.Contains([]byte(p.(string)), []byte(name)) {
					t.Errorf("%s: recovered %v, want a panic naming it", name, p)
				}
			}()
			f()
		}()
	}
}
