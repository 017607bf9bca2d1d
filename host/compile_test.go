package host

import (
	"errors"
	"testing"
)

// TestScanMemory: the initial memory a module declares is read from its
// binary, and a truncated or out-of-range memory section is refused.
func TestScanMemory(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		b       []byte
		pages   uint32
		wantErr error
	}{
		{"no memory", wasmModule(sec(1, 1, 0x60, 0, 0)), 0, nil},
		{"min only", wasmModule(sec(1, 1, 0x60, 0, 0), sec(secMemory, 1, 0, 0x80, 0x01)), 128, nil},
		{"min and max", wasmModule(sec(secMemory, 1, 1, 2, 3)), 2, nil},
		{"empty memory section", wasmModule(sec(secMemory, 0)), 0, nil},
		{"past 4 GiB", wasmModule(sec(secMemory, 1, 0, 0x81, 0x80, 0x04)), 0, errBadBinary},
		{"truncated limits", wasmModule(sec(secMemory, 1, 0)), 0, errBadBinary},
		{"section longer than the module", append(wasmModule(), secMemory, 9, 1), 0, errBadBinary},
	} {
		if pages, err := scanMemory(c.b); !errors.Is(err, c.wantErr) || pages != c.pages {
			t.Errorf("%s: %d pages, %v; want %d, %v", c.name, pages, err, c.pages, c.wantErr)
		}
	}
	if _, err := scanMemory([]byte("#!/bin/sh\necho hi\n")); err == nil || err.Error() != `missing the \0asm header` {
		t.Errorf("not WebAssembly: %v", err)
	}
}
