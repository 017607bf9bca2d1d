package host

import (
	"bytes"
	"errors"
	"testing"
)

// The compile and instantiation bombs of the third attack on the sandbox:
// each stayed under every limit there was, and each is now refused at
// load, naming the limit, before anything of it is compiled.

// vecOf encodes a count then the items.
func vecOf(items ...[]byte) []byte {
	b := appendU32(nil, uint32(len(items)))
	for _, it := range items {
		b = append(b, it...)
	}
	return b
}

// code encodes one function body.
func code(locals []byte, body ...byte) []byte {
	fn := append(append([]byte{}, locals...), body...)
	return append(appendU32(nil, uint32(len(fn))), fn...)
}

// ssaBomb is one function of `locals` i32 locals and `diamonds` if/else
// blocks, reading every local at the end: wazero's SSA construction grows
// with their product (10 000 locals and 1 000 diamonds: over 3 minutes of
// compilation in one function, which no timeout interrupts).
func ssaBomb(locals, diamonds int) []byte { return localsModule(locals, diamonds, false) }

// localsBomb is ssaBomb with the locals read before the diamonds: no phi
// for them, but as many locals times branches.
func localsBomb(locals, diamonds int) []byte { return localsModule(locals, diamonds, true) }

func localsModule(locals, diamonds int, readFirst bool) []byte {
	var body, reads []byte
	for i := range locals {
		reads = append(appendU32(append(reads, 0x20), uint32(i)), 0x1a)
	}
	if readFirst {
		body = append(body, reads...)
	}
	for range diamonds {
		body = append(body, 0x20, 0x00, 0x04, 0x40, 0x01, 0x05, 0x01, 0x0b)
	}
	if !readFirst {
		body = append(body, reads...)
	}
	body = append(body, 0x41, 0x00, 0x0b)
	return wasmModule(
		sec(1, 1, 0x60, 0, 1, 0x7f),
		sec(3, 1, 0),
		sec(10, vecOf(code(append(appendU32([]byte{1}, uint32(locals)), 0x7f), body...))...),
	)
}

// elementBomb declares a table of n entries and one passive segment of n
// references to function 0: wazero makes a function instance of each
// entry in every instance (about 42 bytes; 60 segments of a million held
// 3.4 GiB and took 44 s to load).
func elementBomb(n int) []byte {
	seg := appendU32([]byte{1, 1, 0x00}, uint32(n)) // one passive segment of functions by index
	seg = append(seg, bytes.Repeat([]byte{0}, n)...)
	return wasmModule(
		sec(1, 1, 0x60, 0, 1, 0x7f),
		sec(3, 1, 0),
		sec(9, seg...),
		sec(10, vecOf(code([]byte{0}, 0x41, 0x00, 0x0b))...),
	)
}

// typeBomb declares n types of arity parameters each: wazero builds each
// type's key in time quadratic in its arity and keeps it for the
// runtime's life (30 000 of 2 000 values: 3.4 minutes past a 2 minute
// compile timeout, 4.3 GiB).
func typeBomb(n, arity int) []byte {
	t := appendU32([]byte{0x60}, uint32(arity))
	t = append(append(t, bytes.Repeat([]byte{0x7f}, arity)...), 0)
	types := make([][]byte, n)
	for i := range types {
		types[i] = t
	}
	return wasmModule(sec(1, vecOf(types...)...))
}

// segmentsModule declares a memory, a table, elems one-entry element
// segments and datas one-byte data segments of the given kind:
// "passive", "overlapping" (active, all at offset 0: the host cannot
// merge them) or "adjacent" (active, one after another: it merges them
// into one).
func segmentsModule(elems, datas int, kind string) []byte {
	sleb := func(b []byte, v int) []byte {
		for v >= 0x40 {
			b = append(b, byte(v&0x7f)|0x80)
			v >>= 7
		}
		return append(b, byte(v))
	}
	es := appendU32(nil, uint32(elems))
	for i := range elems {
		es = append(sleb(append(es, 0x00, 0x41), i), 0x0b, 1, 0)
	}
	ds := appendU32(nil, uint32(datas))
	for i := range datas {
		switch kind {
		case "passive":
			ds = append(ds, 0x01, 1, 'x')
		case "overlapping":
			ds = append(ds, 0x00, 0x41, 0x00, 0x0b, 1, 'x')
		case "adjacent":
			ds = append(sleb(append(ds, 0x00, 0x41), i), 0x0b, 1, 'x')
		}
	}
	return wasmModule(
		sec(1, 1, 0x60, 0, 1, 0x7f),
		sec(3, 1, 0),
		sec(4, append([]byte{1, 0x70, 0x00}, appendU32(nil, uint32(max(elems, 1)))...)...),
		sec(5, 1, 0x00, 1),
		sec(9, es...),
		sec(12, appendU32(nil, uint32(datas))...),
		sec(10, vecOf(code([]byte{0}, 0x41, 0x00, 0x0b))...),
		sec(11, ds...),
	)
}

// TestModuleLimitsBoundInstantiation: the segments every instance
// initialises, which nothing interrupts (100 000 element segments took
// 70-170 ms per instance, on every call, longer under concurrency), are
// counted after the host merges data segments, and bounded.
func TestModuleLimitsBoundInstantiation(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{Isolation: Isolation{InProcess: true}})
	for _, c := range []struct {
		name    string
		mod     []byte
		refused bool
	}{
		{"element segments", segmentsModule(10_001, 0, ""), true},
		{"passive data segments", segmentsModule(0, 10_001, "passive"), true},
		{"overlapping active data segments", segmentsModule(0, 10_001, "overlapping"), true},
		{"both, under the bound", segmentsModule(5000, 5000, "passive"), false},
		{"adjacent active data segments, merged into one", segmentsModule(0, 20_000, "adjacent"), false},
	} {
		_, err := h.Inspect(t.Context(), "segments", c.mod, nil)
		var le *ModuleLimitError
		switch refused := errors.As(err, &le) && le.Limit == "Segments"; {
		case refused != c.refused:
			t.Errorf("%s: %v; want refused by the Segments limit: %v", c.name, err, c.refused)
		case !refused && !errors.Is(err, ErrNoABI):
			t.Errorf("%s: %v, want only that it has no ABI", c.name, err)
		}
	}
}

func TestModuleLimitsRefuseCompileBombs(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{Isolation: Isolation{InProcess: true}})
	for _, c := range []struct {
		name  string
		mod   []byte
		limit string
	}{
		{"locals times branches", localsBomb(5000, 1000), "LocalsBranches"},
		// Read after the diamonds, each local has a phi at each: wazero's
		// phi elimination, FunctionWork, refuses it first.
		{"locals read after many merges", ssaBomb(5000, 1000), "FunctionWork"},
		{"element entries", elementBomb(300_000), "ElementEntries"},
		{"type values", typeBomb(101, 1000), "TypeValues"},
	} {
		_, err := h.Inspect(t.Context(), "bomb", c.mod, nil)
		var le *ModuleLimitError
		if !errors.As(err, &le) || le.Limit != c.limit {
			t.Errorf("%s: %v, want the %s limit", c.name, err, c.limit)
		}
	}
	// A declared table past the Tables limit, which the rewrite finds, is
	// the same typed error.
	_, err := h.Inspect(t.Context(), "tables", wasmFile(t, "tabledeclared.wasm"), nil)
	if le := (*ModuleLimitError)(nil); !errors.As(err, &le) || le.Limit != "Tables" {
		t.Errorf("tabledeclared.wasm: %v, want the Tables limit as a *ModuleLimitError", err)
	}
	// Just under each limit the modules are valid, and load.
	for _, c := range []struct {
		name string
		mod  []byte
	}{
		{"locals times branches", localsBomb(999, 1000)},
		{"locals read after many merges", ssaBomb(300, 1000)}, // 0.4 s
		{"element entries", elementBomb(1 << 18)},
		{"type values", typeBomb(100, 1000)},
	} {
		if _, err := h.Inspect(t.Context(), "fine", c.mod, nil); !errors.Is(err, ErrNoABI) {
			t.Errorf("%s: %v, want only that it has no ABI", c.name, err)
		}
	}
}

// TestPreparedCacheKeepsToItsLimits: a module prepared (validated,
// rewritten, verified) under looser module limits is validated again by a
// host with tighter ones sharing the cache directory, not taken from it.
func TestPreparedCacheKeepsToItsLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mod := elementBomb(300_000) // larger than artifactMinSize
	if len(mod) < artifactMinSize {
		t.Fatalf("the module has %d bytes, too few to be cached", len(mod))
	}
	loose, _ := newTestHost(t, Options{CacheDir: dir, Isolation: Isolation{InProcess: true}, ModuleLimits: ModuleLimits{ElementEntries: 1 << 20}})
	if _, err := loose.Inspect(t.Context(), "bomb", mod, nil); !errors.Is(err, ErrNoABI) {
		t.Fatalf("under looser limits: %v", err)
	}
	strict, _ := newTestHost(t, Options{CacheDir: dir, Isolation: Isolation{InProcess: true}})
	_, err := strict.Inspect(t.Context(), "bomb", mod, nil)
	var le *ModuleLimitError
	if !errors.As(err, &le) || le.Limit != "ElementEntries" {
		t.Fatalf("under the default limits, with the cache of the looser host: %v", err)
	}
}
