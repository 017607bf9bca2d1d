package host

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/tool"
)

// blockingMult is hostfn.wasm's mult, made to wait until release is
// closed (or its call's context ends); running counts the calls inside
// it and peak the most at once.
func blockingMult(release <-chan struct{}, running, peak *atomic.Int64) []Function {
	fs := testFunctions(nil)
	fs[0].Func = func(ctx context.Context, _ *Caller, stack []uint64) error {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		stack[0] = stack[0] * stack[1]
		return nil
	}
	return fs
}

// TestMaxCallsBoundsConcurrentCalls: at most Options.MaxCalls calls run
// at once across the host's modules; the others wait their turn and then
// run. Each running call may hold its memory limit, its files and a
// thread: without a bound, a client of `mcp serve` sending calls at once
// made the host hold all of theirs together.
func TestMaxCallsBoundsConcurrentCalls(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var running, peak atomic.Int64
	h, _ := newTestHost(t, Options{MaxCalls: 2, PoolSize: -1, Functions: blockingMult(release, &running, &peak)})
	a := load(t, h, "hostfn.wasm", Module{Name: "a", Grants: grants(t, hostfnGrants...)})
	b := load(t, h, "hostfn.wasm", Module{Name: "b", Grants: grants(t, hostfnGrants...)})
	var wg sync.WaitGroup
	results := make(chan string, 6)
	for i := range 6 {
		l := []*Loaded{a, b}[i%2]
		wg.Go(func() {
			tl, _ := l.Tool("mult")
			res, err := tl.Call(context.Background(), toolCall("mult", `{"a":6,"b":7}`))
			if err != nil {
				results <- err.Error()
				return
			}
			results <- res.Text()
		})
	}
	for running.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // time for a third call to get in, were it let
	if n := running.Load(); n != 2 {
		t.Errorf("%d calls running at once, want 2 (Options.MaxCalls)", n)
	}
	close(release)
	wg.Wait()
	close(results)
	for r := range results {
		if r != "6 x 7 = 42" {
			t.Errorf("a call that waited its turn returned %q", r)
		}
	}
	if p := peak.Load(); p != 2 {
		t.Errorf("at most %d calls ran at once, want 2", p)
	}
}

// TestMaxCallsWaitEndsWithTheContext: a call waiting for its turn gives
// up when its context ends, with an error that says why.
func TestMaxCallsWaitEndsWithTheContext(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	var running, peak atomic.Int64
	h, rec := newTestHost(t, Options{MaxCalls: 1, PoolSize: -1, Functions: blockingMult(release, &running, &peak)})
	l := load(t, h, "hostfn.wasm", Module{Grants: grants(t, hostfnGrants...)})
	tl, _ := l.Tool("mult")
	go tl.Call(context.Background(), toolCall("mult", `{"a":1,"b":1}`)) // holds the one turn until release
	for running.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	res, err := tl.Call(ctx, toolCall("mult", `{"a":2,"b":3}`))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(res.Text(), "as many as Options.MaxCalls allows") {
		t.Fatalf("the waiting call returned %+v, %v; want its context's end and the reason", res, err)
	}
	if r := rec.last(t); r.Outcome != OutcomeCancelled {
		t.Errorf("its record's outcome is %q, want %q", r.Outcome, OutcomeCancelled)
	}
}

// TestNestedCallsRunInTheirParentsTurn: a call nested through a tools:
// grant does not wait for a turn of its own, so a chain of them cannot
// deadlock the host even with one turn: reentry.wasm nests until the
// call depth limit.
func TestNestedCallsRunInTheirParentsTurn(t *testing.T) {
	t.Parallel()
	var self *Loaded
	h, _ := newTestHost(t, Options{MaxCalls: 1, CallTool: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		tl, _ := self.Tool(c.Name)
		return tl.Call(ctx, c)
	}})
	// Deadlocked, the nesting would end at the time limit (or call's hang
	// bound), never at the depth limit.
	l := load(t, h, "reentry.wasm", Module{Grants: grants(t, "tools:reentry"), Limits: Limits{Timeout: 2 * hangBound}})
	self = l
	res := call(t, l, "reentry", `{}`)
	if !strings.Contains(res.Text(), "call depth limit") {
		t.Fatalf("the nested calls returned %q; want the call depth limit", res.Text())
	}
}

// BenchmarkCallTurn is what Options.MaxCalls costs a call: taking a turn
// and giving it back, uncontended (RATIONALE: 38 ns, about 1 % of a warm
// call).
func BenchmarkCallTurn(b *testing.B) {
	h := &Host{calls: make(chan struct{}, 16)}
	ctx := context.Background()
	for b.Loop() {
		if err := h.enterCall(ctx); err != nil {
			b.Fatal(err)
		}
		h.leaveCall()
	}
}
