package host

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestTimeInGoIsTheHosts: a guest held in Go by memory.grow, table.grow or
// ref.func (the runtime's Go code for the guest) is not a guest that
// stopped returning: past its deadline and a whole grace period the
// watchdog reports it as in the host and leaves its module enabled
// (issue 38: under load a module growing its memory was declared stuck
// and disabled until restart). Several modules and instances at once, a
// grow storm: each is held in the host's Go code by a hook, under the
// test's control, and the watchdog is driven by hand with times past
// every deadline, so nothing depends on the machine's speed.
func TestTimeInGoIsTheHosts(t *testing.T) {
	t.Parallel()
	cases := []struct{ file, tool, args, op string }{
		{"membomb.wasm", "membomb", `{"mode":"grow"}`, "memory.grow"},
		{"tablegrow.wasm", "tablegrow", `{}`, "ref.func or table.grow"},
		{"reffunc.wasm", "reffunc", `{}`, "ref.func or table.grow"},
	}
	const perModule = 2
	var (
		mu      sync.Mutex
		held    = map[*instance]bool{}
		entered = make(chan *instance)
		release = make(chan struct{})
		stuck   []StuckCall
		// released: the guests held were let go; no more are held.
		released bool
	)
	h, _ := newTestHost(t, Options{PoolSize: -1, watchdogGrace: time.Second, watchdogTick: time.Hour,
		OnStuck: func(s StuckCall) { mu.Lock(); stuck = append(stuck, s); mu.Unlock() },
		inGoHook: func(inst *instance, op string) {
			if inst.watch.deadline.Load() == 0 || op != opOf(cases, inst.call.tool) {
				return // not in a call's run, or not the case's operation
			}
			mu.Lock()
			first := !held[inst] && !released
			held[inst] = true
			mu.Unlock()
			if first {
				entered <- inst
				<-release
			}
		}})
	var (
		mods  []*Loaded
		wg    sync.WaitGroup
		done  = make(chan string, len(cases)*perModule)
		insts []*instance
	)
	for _, c := range cases {
		l := load(t, h, c.file, Module{})
		mods = append(mods, l)
		tl, _ := l.Tool(c.tool)
		for range perModule {
			wg.Go(func() {
				res, err := tl.Call(context.Background(), toolCall(c.tool, c.args))
				done <- fmt.Sprintf("%s: %v %s", c.tool, err, res.Text())
			})
		}
	}
	for len(insts) < len(cases)*perModule {
		select {
		case inst := <-entered:
			insts = append(insts, inst)
		case r := <-done:
			mu.Lock()
			released = true
			mu.Unlock()
			close(release)
			wg.Wait()
			t.Fatalf("a call ended without entering the host's Go code for its operation: %s", r)
		}
	}
	// Every guest is held in Go. The watchdog looks at each at its
	// deadline, then a whole grace period and more past it.
	latest := time.Time{}
	for _, inst := range insts {
		if dl := time.Unix(0, inst.watch.deadline.Load()); dl.After(latest) {
			latest = dl
		}
	}
	h.watch.check(latest)
	h.watch.check(latest.Add(3 * time.Second))
	mu.Lock()
	reports := append([]StuckCall(nil), stuck...)
	released = true
	mu.Unlock()
	close(release)
	wg.Wait()
	if len(reports) != len(insts) {
		t.Errorf("%d reports for %d guests held past their deadline: %v", len(reports), len(insts), reports)
	}
	for _, s := range reports {
		if !s.InHost {
			t.Errorf("reported as running machine code: %v", s)
		}
	}
	for _, l := range mods {
		if l.entry.stuck.Load() {
			t.Errorf("module %s was disabled", l.Name())
		}
	}
	mustEcho(t, h)
	// The modules still serve.
	if res := call(t, mods[1], "tablegrow", `{}`); res.IsError {
		t.Errorf("tablegrow after the watchdog looked: %+v", res)
	}
}

// opOf is the operation the hook holds a case's guest in.
func opOf(cases []struct{ file, tool, args, op string }, tool string) string {
	for _, c := range cases {
		if c.tool == tool {
			return c.op
		}
	}
	return ""
}
