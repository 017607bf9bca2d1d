package wasmbin

import (
	"bytes"
	"errors"
	"testing"
)

// workModule assembles a module of one memory, the given types (type 0
// is the function's) and one function whose locals groups and body
// (without its end) are given.
func workModule(types [][]byte, locals, body []byte) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	ts := appendU32(nil, uint32(len(types)))
	for _, t := range types {
		ts = append(ts, t...)
	}
	b = genSection(b, 1, ts)
	b = genSection(b, 3, []byte{1, 0})
	b = genSection(b, 5, []byte{1, 0x00, 1})
	entry := append(append(append([]byte{}, locals...), body...), 0x0b)
	return genSection(b, 10, append(appendU32([]byte{1}, uint32(len(entry))), entry...))
}

// funcTypeBytes encodes a function type of params and results i32s.
func funcTypeBytes(params, results int) []byte {
	b := append(appendU32([]byte{0x60}, uint32(params)), bytes.Repeat([]byte{0x7f}, params)...)
	return append(appendU32(b, uint32(results)), bytes.Repeat([]byte{0x7f}, results)...)
}

func rep(b []byte, n int) []byte { return bytes.Repeat(b, n) }

// i32Locals declares n i32 locals.
func i32Locals(n int) []byte { return append(appendU32([]byte{1}, uint32(n)), 0x7f) }

// readLocals reads (and drops) locals 0 to n-1.
func readLocals(n int) []byte {
	var b []byte
	for i := range n {
		b = append(appendU32(append(b, 0x20), uint32(i)), 0x1a)
	}
	return b
}

// The shapes of testdata/wasm/src/gen, as small as each can be while it
// still costs wazero what it measured there (compile time without the
// limit, one function, in a child process on a 2-core machine).
var (
	// 11 000 br_ifs to a block of 1 000 results: 17 s, 164 MB (48 KB).
	arityBomb = workModule([][]byte{funcTypeBytes(0, 0), funcTypeBytes(0, 1000)}, []byte{0},
		cat(bs(0x02, 0x01), rep(bs(0x41, 0), 1000), rep(bs(0x41, 0, 0x0d, 0), 11000), bs(0x0b), rep(bs(0x1a), 1000)))
	// One br_table of 11 000 labels to that block: 19 s (15 KB).
	brTableBomb = workModule([][]byte{funcTypeBytes(0, 0), funcTypeBytes(0, 1000)}, []byte{0},
		cat(bs(0x02, 0x01), rep(bs(0x41, 0), 1000), bs(0x41, 0, 0x0e), appendU32(nil, 11000), rep(bs(0), 11001), bs(0x0b), rep(bs(0x1a), 1000)))
	// 2 000 ifs without else taking and returning 1 000 values: 8 s,
	// 234 MB (15 KB).
	passBomb = workModule([][]byte{funcTypeBytes(0, 0), funcTypeBytes(1000, 1000)}, []byte{0},
		cat(rep(bs(0x41, 0), 1000), rep(bs(0x41, 0, 0x04, 0x01, 0x0b), 2000), rep(bs(0x1a), 1000)))
	// A loop of 1 000 parameters left back by 2 000 br_ifs: 4.7 s.
	loopBomb = workModule([][]byte{funcTypeBytes(0, 0), funcTypeBytes(1000, 1000)}, i32Locals(1),
		cat(rep(bs(0x41, 0), 1000), bs(0x03, 0x01), rep(bs(0x20, 0, 0x0d, 0), 2000), bs(0x0b), rep(bs(0x1a), 1000)))
	// 500 nested loops reading 500 locals in the innermost, each left
	// back after the one inside it: 69 s (5.7 KB); the redundant phis
	// go one level per pass.
	loopNest = workModule([][]byte{funcTypeBytes(0, 0)}, i32Locals(500),
		cat(rep(bs(0x03, 0x40), 500), readLocals(500), rep(bs(0x20, 0, 0x0d, 0, 0x0b), 500)))
	// 50 if/else diamonds, then a read of 20 000 locals: 13 s (84 KB).
	diamondsBomb = workModule([][]byte{funcTypeBytes(0, 0)}, i32Locals(20000),
		cat(rep(bs(0x20, 0, 0x04, 0x40, 0x01, 0x05, 0x01, 0x0b), 50), readLocals(20000)))
	// One diamond, then a read of 50 000 locals: the rewrite's own
	// checks at the function's start are merge points too (4.8 s).
	entryBomb = workModule([][]byte{funcTypeBytes(0, 0)}, i32Locals(50000),
		cat(bs(0x20, 0, 0x04, 0x40, 0x01, 0x05, 0x01, 0x0b), readLocals(50000)))
)

// callBomb is 2 000 calls of a function of 1 000 parameters and results
// (itself, never run), each call's results the next one's arguments:
// 14 s and 1.6 GB (12 KB).
func callBomb(calls, arity int) []byte {
	return workModule([][]byte{funcTypeBytes(arity, arity)}, []byte{0},
		cat(readArgs(arity), rep(bs(0x10, 0), calls)))
}

// writeDiamondRead writes local i, passes a diamond and reads it, for
// each of n locals.
func writeDiamondRead(n int) []byte {
	var b []byte
	for i := range n {
		b = appendU32(append(b, 0x41, 1, 0x21), uint32(i))
		b = append(b, 0x41, 0, 0x04, 0x40, 0x01, 0x05, 0x01, 0x0b)
		b = append(appendU32(append(b, 0x20), uint32(i)), 0x1a)
	}
	return b
}

// readArgs pushes parameters 0 to n-1.
func readArgs(n int) []byte {
	var b []byte
	for i := range n {
		b = appendU32(append(b, 0x20), uint32(i))
	}
	return b
}

func TestCompileWorkRefusesBombs(t *testing.T) {
	for _, c := range []struct {
		name  string
		mod   []byte
		limit string
	}{
		{"br_ifs to a block of many results", arityBomb, "FunctionWork"},
		{"a br_table to a block of many results", brTableBomb, "FunctionWork"},
		{"ifs passing many values", passBomb, "FunctionWork"},
		{"a loop of many parameters", loopBomb, "FunctionWork"},
		{"nested loops reading many locals", loopNest, "FunctionWork"},
		{"diamonds then many locals read", diamondsBomb, "FunctionWork"},
		{"the rewrite's checks then many locals read", entryBomb, "FunctionWork"},
		{"calls of many values", callBomb(2000, 1000), "CallValues"},
		{"many calls", callBomb(130_000, 0), "CallValues"},
	} {
		_, err := Validate(c.mod, Limits{})
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != c.limit {
			t.Errorf("%s (%d bytes): %v, want the %s limit", c.name, len(c.mod), err, c.limit)
		}
	}
}

// TestCompileWorkAcceptsWhatCompilesQuickly: the same shapes, at sizes
// wazero compiles in well under a second or two, load.
func TestCompileWorkAcceptsWhatCompilesQuickly(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  []byte
	}{
		// 11 000 br_ifs to a block of 100 results: 1.7 s, as the same
		// branches to an empty block.
		{"br_ifs to a block of 100 results", workModule([][]byte{funcTypeBytes(0, 0), funcTypeBytes(0, 100)}, []byte{0},
			cat(bs(0x02, 0x01), rep(bs(0x41, 0), 100), rep(bs(0x41, 0, 0x0d, 0), 11000), bs(0x0b), rep(bs(0x1a), 100)))},
		// 100 nested loops reading 100 locals: 0.2 s.
		{"nested loops reading locals", workModule([][]byte{funcTypeBytes(0, 0)}, i32Locals(100),
			cat(rep(bs(0x03, 0x40), 100), readLocals(100), rep(bs(0x20, 0, 0x0d, 0, 0x0b), 100)))},
		// 1 000 locals, each written, then read after a diamond: what a
		// compiler's output looks like (a phi each).
		{"locals written and read around diamonds", workModule([][]byte{funcTypeBytes(0, 0)}, i32Locals(1000), writeDiamondRead(1000))},
		{"a thousand calls of ten values", callBomb(1000, 10)},
	} {
		if _, err := Validate(c.mod, Limits{}); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestPhiWorkCountsWhatTheBuilderMakes checks the phi model against
// counts made by hand of what wazero's SSA builder creates.
func TestPhiWorkCountsWhatTheBuilderMakes(t *testing.T) {
	work := func(types [][]byte, locals, body []byte) int64 {
		t.Helper()
		m, err := Validate(workModule(types, locals, body), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return m.Code[0].PhiWork
	}
	plain := [][]byte{funcTypeBytes(0, 0)}
	diamond := bs(0x41, 1, 0x04, 0x40, 0x01, 0x05, 0x01, 0x0b)
	for _, c := range []struct {
		name   string
		types  [][]byte
		locals []byte
		body   []byte
		want   int64
	}{
		// The two checks the rewrite starts a function with are merge
		// points of two edges; nothing read, no phi.
		{"empty", plain, []byte{0}, nil, 0},
		// n diamonds, then L locals read: every merge point (the two
		// checks and the diamonds) holds L phis over two edges, and no
		// loop: (0+2) × (n+2) × L² × 2.
		{"diamonds then reads", plain, i32Locals(30), cat(rep(diamond, 10), readLocals(30)), 2 * 12 * 900 * 2},
		// A local written after the diamonds is known where it is read.
		{"written then read", plain, i32Locals(30), cat(rep(diamond, 10), bs(0x41, 0, 0x21, 3, 0x20, 3, 0x1a)), 0},
		// Read twice: the second read finds the value the first looked
		// up, so one phi per merge point (1² × 2 over 12 points, × 2).
		{"read twice", plain, i32Locals(1), cat(rep(diamond, 10), bs(0x20, 0, 0x1a, 0x20, 0, 0x1a)), 2 * 12 * 1 * 2},
		// A block of 5 results, left by 3 br_ifs and its end: 4 edges
		// into 5 phis, plus the two checks' empty merge points.
		{"a block of results", [][]byte{funcTypeBytes(0, 0), funcTypeBytes(0, 5)}, []byte{0},
			cat(bs(0x02, 0x01), rep(bs(0x41, 0), 5), rep(bs(0x41, 0, 0x0d, 0), 3), bs(0x0b), rep(bs(0x1a), 5)), 2 * 25 * 4},
		// A loop reading 4 locals, left back once: its header (2
		// edges) and its fuel check (2 edges) hold 4 phis each, and so
		// do the function's two checks. One loop: × 3.
		{"a loop", plain, i32Locals(4), cat(bs(0x03, 0x40), readLocals(4), bs(0x41, 0, 0x0d, 0, 0x0b)), 3 * 4 * 16 * 2},
	} {
		if got := work(c.types, c.locals, c.body); got != c.want {
			t.Errorf("%s: PhiWork %d, want %d", c.name, got, c.want)
		}
	}
}

// TestRefFuncCountsAsACheck: the rewrite puts a stack charge (an if and
// a call) before every ref.func, so a ref.func costs a compiler what a
// bulk instruction does. Uncounted, 30 000 of them passed validation
// and made the rewritten module fail the host's own verification, a
// refusal that blamed the host.
func TestRefFuncCountsAsACheck(t *testing.T) {
	mod := func(n int) []byte {
		b := []byte("\x00asm\x01\x00\x00\x00")
		b = genSection(b, 1, cat(bs(1), funcTypeBytes(0, 0)))
		b = genSection(b, 3, []byte{1, 0})
		b = genSection(b, 7, []byte{1, 1, 'f', 0x00, 0})
		entry := cat(bs(0), rep(bs(0xd2, 0, 0x1a), n), bs(0x0b))
		return genSection(b, 10, append(appendU32([]byte{1}, uint32(len(entry))), entry...))
	}
	var le *LimitError
	if _, err := Validate(mod(5000), Limits{}); !errors.As(err, &le) || le.Limit != "Branches" {
		t.Errorf("5 000 ref.funcs: %v, want the Branches limit", err)
	}
	if _, err := Validate(mod(3000), Limits{}); err != nil {
		t.Errorf("3 000 ref.funcs: %v", err)
	}
}
