package host

import (
	"errors"
	"testing"

	"github.com/autoagent-go/autoagent/host/internal/rewrite"
)

// The ids of the sections the tests build.
const (
	secImport = 2
	secMemory = 5
)

// TestScanModule: the initial memory a module declares and the first
// table or global it imports are read from its binary, and a truncated or
// out-of-range memory section is refused.
func TestScanModule(t *testing.T) {
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
		{"past 4 GiB", wasmModule(sec(secMemory, 1, 0, 0x81, 0x80, 0x04)), 0, rewrite.ErrBadBinary},
		{"truncated limits", wasmModule(sec(secMemory, 1, 0)), 0, rewrite.ErrBadBinary},
		{"section longer than the module", append(wasmModule(), secMemory, 9, 1), 0, rewrite.ErrBadBinary},
	} {
		if pages, _, err := rewrite.Scan(c.b); !errors.Is(err, c.wantErr) || pages != c.pages {
			t.Errorf("%s: %d pages, %v; want %d, %v", c.name, pages, err, c.pages, c.wantErr)
		}
	}
	if _, _, err := rewrite.Scan([]byte("#!/bin/sh\necho hi\n")); err == nil || err.Error() != `missing the \0asm header` {
		t.Errorf("not WebAssembly: %v", err)
	}
	// An import section with a function, a table and a global: the table
	// is named.
	imports := sec(secImport, 3,
		1, 'm', 1, 'f', 0x00, 0,
		1, 'm', 1, 't', 0x01, 0x70, 0x00, 1,
		1, 'm', 1, 'g', 0x03, 0x7f, 0x00)
	if _, other, err := rewrite.Scan(wasmModule(imports)); err != nil || other != "m.t" {
		t.Errorf("imports: %q, %v; want m.t", other, err)
	}
}
