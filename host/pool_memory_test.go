package host

import (
	"context"
	"testing"
	"time"
)

// waitIdle waits until no refill runs.
func (p *pool) waitIdle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		filling := p.filling
		p.mu.Unlock()
		if !filling {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the pool is still refilling after 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPoolMemoryBoundsIdleInstances: the ready instances of every module
// together hold at most Options.PoolMemory; past it an instance is closed
// instead of pooled, the calls go on, and closing gives the budget back.
func TestPoolMemoryBoundsIdleInstances(t *testing.T) {
	t.Parallel()
	// What one ready instance of echo holds.
	big, _ := newTestHost(t, Options{PoolSize: 4})
	l := load(t, big, "echo.wasm", Module{})
	l.pool.waitFull()
	per := big.idleMem.Load() / 4
	if per <= 0 || per*4 != big.idleMem.Load() {
		t.Fatalf("4 ready instances hold %d bytes", big.idleMem.Load())
	}

	h, _ := newTestHost(t, Options{PoolSize: 4, PoolMemory: 2*per + per/2})
	a := load(t, h, "echo.wasm", Module{Name: "a"})
	a.pool.waitIdle(t)
	b := load(t, h, "echo.wasm", Module{Name: "b"})
	b.pool.waitIdle(t)
	for i := range 3 {
		for _, m := range []*Loaded{a, b} {
			if res := call(t, m, "echo", `{"i":1}`); res.IsError || string(res.StructuredContent) != `{"i":1}` {
				t.Fatalf("call %d of %s: %+v", i, m.Name(), res)
			}
			m.pool.waitIdle(t)
		}
	}
	ready := func() int {
		n := 0
		for _, m := range []*Loaded{a, b} {
			m.pool.mu.Lock()
			n += len(m.pool.ready)
			m.pool.mu.Unlock()
		}
		return n
	}
	if n, held := ready(), h.idleMem.Load(); n != 2 || held != 2*per {
		t.Fatalf("%d ready instances holding %d bytes, want 2 holding %d (budget %d)", n, held, 2*per, h.opts.PoolMemory)
	}
	for _, m := range []*Loaded{a, b} {
		if err := m.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if held := h.idleMem.Load(); held != 0 {
		t.Fatalf("closed modules still hold %d bytes of the idle budget", held)
	}
}
