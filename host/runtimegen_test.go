package host

import (
	"runtime"
	"testing"
)

// freshTypes declares n function types no other call of it with another
// seed declares (each type's parameters spell a number in base 4).
func freshTypes(seed, n int) []byte {
	types := make([][]byte, n)
	for k := range types {
		var ps []byte
		for x := seed*n + k + 1; x > 0; x /= 4 {
			ps = append(ps, []byte{0x7f, 0x7e, 0x7d, 0x7c}[x%4])
		}
		types[k] = append(append(appendU32([]byte{0x60}, uint32(len(ps))), ps...), 0)
	}
	return wasmModule(sec(1, vecOf(types...)...))
}

// TestFunctionTypesBounded: wazero keeps every distinct function type a
// runtime sees for the runtime's life. A host that loads module after
// module of new types (120 here, 600 000 types) retires a runtime past
// a bound and closes it once its modules are released, so what it holds
// stays bounded (it grew by about 60 bytes a type, without end).
func TestFunctionTypesBounded(t *testing.T) {
	h, _ := newTestHost(t, Options{NoDiskCache: true, Isolation: Isolation{InProcess: true}})
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	for i := range 120 {
		if _, err := h.Inspect(t.Context(), "types", freshTypes(i, 5000), nil); err == nil {
			t.Fatal("a module of types alone loaded")
		}
		h.mu.Lock()
		n := len(h.gens)
		h.mu.Unlock()
		if n > 2 {
			t.Fatalf("after module %d, %d runtimes are open", i, n)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grown := int64(ms.HeapAlloc) - int64(before); grown > 24<<20 {
		t.Errorf("the heap grew by %d MiB over 600 000 types", grown>>20)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gen.values > genTypeValues+100_000 {
		t.Errorf("the current runtime has seen %d type values", h.gen.values)
	}
}
