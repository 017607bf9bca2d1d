package rewrite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
)

// TestScopeChoice: the block each function of scopes.wasm is charged for
// (its source, testdata/wasm/src/wat/scopes.wat, says why): the innermost
// that holds every call, that no branch leaves and that no loop holds, or
// a wrapper around the body where none fits.
func TestScopeChoice(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "wasm", "scopes.wasm"))
	if err != nil {
		t.Fatalf("reading test module: %v", err)
	}
	m, err := wasmbin.Validate(b, wasmbin.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var w rewriter
	if _, err := rewriteWith(&w, m, b, Options{Interrupt: true}); err != nil {
		t.Fatal(err)
	}
	// Defined functions in source order, after describe.inc's four.
	const first = 4
	want := []struct {
		name string
		op   byte // the charged block's opcode; 0: wrapped; 0xff: no charge
	}{
		{"id", 0xff},
		{"fib", 0x03},
		{"oddsum", 0x03},
		{"early", 0x02},
		{"escape", 0},
		{"cond", 0x04},
		{"check", 0xff},
		{"call", 0},
	}
	if len(m.Code) != first+len(want) {
		t.Fatalf("%d functions, want %d: scopes.wat changed without this test", len(m.Code), first+len(want))
	}
	for k, f := range want {
		i := first + k
		code := b[m.Code[i].Offset : m.Code[i].Offset+m.Code[i].Size]
		got := byte(0xff)
		switch scope := w.costs[i].scope; {
		case !m.Code[i].Calls:
		case scope < 0:
			got = 0
		default:
			got = code[scope]
		}
		if got != f.op {
			t.Errorf("$%s: charged block 0x%02x, want 0x%02x (0: the body wrapped, 0xff: none)", f.name, got, f.op)
		}
	}
}
