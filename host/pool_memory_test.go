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

// idle returns what the host's idle budgets hold.
func (h *Host) idle() (held struct{ mem, files int64 }) {
	h.idleMu.Lock()
	defer h.idleMu.Unlock()
	held.mem, held.files = h.idleMem, h.idleFiles
	return held
}

// TestPoolMemoryBoundsIdleInstances: the ready instances of every module
// (pooled, or reset after a call) together hold at most
// Options.PoolMemory; past it an instance is closed instead of kept, the
// calls go on, and closing gives the budget back.
func TestPoolMemoryBoundsIdleInstances(t *testing.T) {
	t.Parallel()
	// What one ready instance of echo holds.
	big, _ := newTestHost(t, Options{PoolSize: 4})
	l := load(t, big, "echo.wasm", Module{})
	l.pool.warm()
	per := big.idle().mem / 4
	if per <= 0 || per*4 != big.idle().mem {
		t.Fatalf("4 ready instances hold %d bytes", big.idle().mem)
	}

	h, _ := newTestHost(t, Options{PoolSize: 4, PoolMemory: 2*per + per/2})
	a := load(t, h, "echo.wasm", Module{Name: "a"})
	a.pool.warmUp()
	a.pool.waitIdle(t)
	b := load(t, h, "echo.wasm", Module{Name: "b"})
	b.pool.warmUp()
	b.pool.waitIdle(t)
	for i := range 3 {
		for _, m := range []*Loaded{a, b} {
			if res := call(t, m, "echo", `{"i":1}`); res.IsError || string(res.StructuredContent) != `{"i":1}` {
				t.Fatalf("call %d of %s: %+v", i, m.Name(), res)
			}
			m.pool.waitIdle(t)
		}
	}
	// Ready are the pools' instances and those reset after a call
	// (echo has no initialiser, so its snapshot is what instantiation
	// leaves, and its used instances are reset to it).
	ready := func() int {
		n := 0
		for _, m := range []*Loaded{a, b} {
			m.pool.mu.Lock()
			n += len(m.pool.ready)
			m.pool.mu.Unlock()
			n += m.resets.count()
		}
		return n
	}
	if n, held := ready(), h.idle().mem; n != 2 || held != 2*per {
		t.Fatalf("%d ready instances holding %d bytes, want 2 holding %d (budget %d)", n, held, 2*per, h.opts.PoolMemory)
	}
	for _, m := range []*Loaded{a, b} {
		if err := m.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if held := h.idle().mem; held != 0 {
		t.Fatalf("closed modules still hold %d bytes of the idle budget", held)
	}
}

// TestIdleInstancesFilesBounded: the ready instances of every module
// together hold at most maxIdleFiles open files. idlefds.wasm's start
// function opens 100 files, and a pool makes instances ahead of calls:
// three such modules at pool size 2 would hold 600 files while idle.
// Past the bound an instance is closed instead of pooled, the calls go
// on, and closing the modules gives the budget back.
func TestIdleInstancesFilesBounded(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{PoolSize: 2})
	g := grants(t, "fs.read:"+t.TempDir())
	var mods []*Loaded
	for _, name := range []string{"a", "b", "c"} {
		l := load(t, h, "idlefds.wasm", Module{Name: name, Grants: g})
		l.pool.warmUp()
		l.pool.waitIdle(t)
		mods = append(mods, l)
	}
	ready := 0
	for _, m := range mods {
		m.pool.mu.Lock()
		ready += len(m.pool.ready)
		m.pool.mu.Unlock()
	}
	// Each holds its 100 files and its grant's directory.
	if held := h.idle(); held.files > maxIdleFiles || held.files < int64(100*ready) || ready != 2 {
		t.Fatalf("%d ready instances holding %d open files, want 2 holding 200 or so (bound %d)", ready, held.files, maxIdleFiles)
	}
	for _, m := range mods {
		if res := call(t, m, "idlefds", `{}`); res.IsError {
			t.Fatalf("%s: %+v", m.Name(), res)
		}
		m.pool.waitIdle(t)
	}
	if held := h.idle(); held.files > maxIdleFiles {
		t.Fatalf("after the calls, ready instances hold %d open files, more than %d", held.files, maxIdleFiles)
	}
	for _, m := range mods {
		if err := m.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if held := h.idle(); held.files != 0 || held.mem != 0 {
		t.Fatalf("closed modules still hold %+v of the idle budgets", held)
	}
}

// TestCloseEndsARefillInProgress: closing a module ends the background
// instantiation its pool is making instead of waiting for it.
// startspin.wasm's start function never ends; with a 30 s time limit,
// closing the module waited that long. Here the limit is twice the hang
// bound: a Close that waits for it is a hang.
func TestCloseEndsARefillInProgress(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{PoolSize: 1})
	l, err := h.Load(t.Context(), Module{Name: "startspin", Bytes: wasmFile(t, "startspin.wasm"),
		Sidecar: []byte(`{"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}`),
		Limits:  Limits{Timeout: 2 * hangBound}})
	if err != nil {
		t.Fatal(err)
	}
	l.pool.warmUp()
	for { // the refill is running the start function
		l.pool.mu.Lock()
		filling := l.pool.filling
		l.pool.mu.Unlock()
		if filling {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- l.Close(t.Context()) }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangBound):
		t.Fatalf("Close did not return within %v: it waits for the refill's start function", hangBound)
	}
}
