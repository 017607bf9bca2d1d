package rewrite_test

import (
	"slices"
	"testing"

	"github.com/autoagent-go/autoagent/host/internal/rewrite"
	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
)

// snapModule encodes a module of functions of type () -> () with the
// given bodies (instructions without the final end), a one-entry funcref
// table whose entry is function elem (-1: no element segment), the start
// function start (-1: none), the exports name → function, and, with
// refGlobal, a mutable funcref global.
func snapModule(bodies [][]byte, start, elem int, exports map[string]byte, refGlobal bool) []byte {
	sec := func(out []byte, id byte, body []byte) []byte {
		return append(append(append(out, id), byte(len(body))), body...)
	}
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = sec(b, 1, []byte{1, 0x60, 0, 0})
	funcs := []byte{byte(len(bodies))}
	for range bodies {
		funcs = append(funcs, 0)
	}
	b = sec(b, 3, funcs)
	b = sec(b, 4, []byte{1, 0x70, 0, 1})
	if refGlobal {
		b = sec(b, 6, []byte{1, 0x70, 1, 0xd0, 0x70, 0x0b})
	} else {
		b = sec(b, 6, []byte{1, 0x7f, 1, 0x41, 0, 0x0b})
	}
	names := make([]string, 0, len(exports))
	for n := range exports {
		names = append(names, n)
	}
	slices.Sort(names)
	ex := []byte{byte(len(names))}
	for _, n := range names {
		ex = append(append(append(ex, byte(len(n))), n...), 0, exports[n])
	}
	b = sec(b, 7, ex)
	if start >= 0 {
		b = sec(b, 8, []byte{byte(start)})
	}
	if elem >= 0 {
		b = sec(b, 9, []byte{1, 0, 0x41, 0, 0x0b, 1, byte(elem)})
	}
	code := []byte{byte(len(bodies))}
	for _, body := range bodies {
		fn := append(append([]byte{0}, body...), 0x0b)
		code = append(append(code, byte(len(fn))), fn...)
	}
	return sec(b, 10, code)
}

// Instructions.
var (
	nop          = []byte{}
	tableSet     = []byte{0x41, 0, 0xd0, 0x70, 0x26, 0} // table.set 0 (ref.null func)
	callIndirect = []byte{0x41, 0, 0x11, 0, 0}          // call_indirect (type 0) of entry 0
	dataDrop     = []byte{0xfc, 13, 0}                  // elem.drop 0
)

func callOf(f byte) []byte { return []byte{0x10, f} }

// TestSnapshotSafe: the rewrite marks a module safe to restore from a
// snapshot only when no function its initialisers may reach changes a
// table or drops a segment, and every mutable global is a number it
// exports. A new instance has the tables and segments as declared; a
// snapshot holds memories and globals only. It marks a used instance safe
// to reset to a snapshot only when no function at all changes a table or
// drops a segment.
func TestSnapshotSafe(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		bodies    [][]byte
		start     int
		elem      int
		exports   map[string]byte
		refGlobal bool
		want      bool
		// reset: a used instance may be reset to a snapshot (no function
		// at all changes a table or drops a segment).
		reset bool
	}{
		{"only a call changes a table", [][]byte{nop, tableSet}, 0, -1, map[string]byte{"call": 1}, false, true, false},
		{"the start function changes a table", [][]byte{tableSet, nop}, 0, -1, map[string]byte{"call": 1}, false, false, false},
		{"a function the start function calls changes a table", [][]byte{callOf(2), nop, tableSet}, 0, -1, map[string]byte{"call": 1}, false, false, false},
		{"_initialize changes a table", [][]byte{nop, tableSet}, -1, -1, map[string]byte{"_initialize": 1}, false, false, false},
		{"__wasm_call_ctors changes a table", [][]byte{nop, tableSet}, -1, -1, map[string]byte{"__wasm_call_ctors": 1}, false, false, false},
		{"hs_init changes a table", [][]byte{nop, tableSet}, -1, -1, map[string]byte{"hs_init": 1}, false, false, false},
		{"the start function calls indirectly, a call changes a table", [][]byte{callIndirect, tableSet, nop}, 0, 2, map[string]byte{"call": 1}, false, false, false},
		{"the start function calls indirectly, nothing changes a table", [][]byte{callIndirect, nop, nop}, 0, 2, map[string]byte{"call": 1}, false, true, true},
		{"nothing changes a table", [][]byte{nop, nop}, 0, -1, map[string]byte{"call": 1}, false, true, true},
		{"only a call drops a segment", [][]byte{nop, dataDrop}, 0, 1, map[string]byte{"call": 1}, false, true, false},
		{"the start function drops a segment", [][]byte{dataDrop, nop}, 0, 1, map[string]byte{"call": 1}, false, false, false},
		{"a mutable funcref global", [][]byte{nop, nop}, 0, -1, map[string]byte{"call": 1}, true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := snapModule(c.bodies, c.start, c.elem, c.exports, c.refGlobal)
			m, err := wasmbin.Validate(b, wasmbin.Limits{})
			if err != nil {
				t.Fatalf("the test's module is invalid: %v", err)
			}
			out, err := rewrite.Apply(m, b, rewrite.Options{Interrupt: true, MergeData: true, Tables: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := wasmbin.Verify(out, rewrite.VerifyLimits(wasmbin.DefaultLimits()), rewrite.Instrumentation(m)); err != nil {
				t.Fatalf("the rewrite fails verification: %v", err)
			}
			globals, safe, reset, err := rewrite.SnapshotInfo(out)
			if err != nil {
				t.Fatal(err)
			}
			if safe != c.want {
				t.Errorf("safe = %v, want %v", safe, c.want)
			}
			if reset != c.reset {
				t.Errorf("reset = %v, want %v", reset, c.reset)
			}
			if want := []string{rewrite.GlobalExportPrefix + "0"}; !c.refGlobal && !slices.Equal(globals, want) {
				t.Errorf("exported globals %q, want %q", globals, want)
			}
		})
	}
}
