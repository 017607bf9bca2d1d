package host

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/tool"
)

// TestWatchdogStopsWhatTheDeadlineMissed: with the deadline's own
// interruption broken (a defect of the host's Go side), a looping guest
// still exits to Go at its fuel checks, and the watchdog stops it there,
// a grace period after its deadline. Nothing is reported as stuck. The
// grace and tick are the production ones: a guest descheduled for a
// shorter grace on a busy machine would look stuck.
func TestWatchdogStopsWhatTheDeadlineMissed(t *testing.T) {
	t.Parallel()
	var stuck []StuckCall
	var mu sync.Mutex
	h, _ := newTestHost(t, Options{defect: "nointerrupt",
		OnStuck: func(s StuckCall) { mu.Lock(); stuck = append(stuck, s); mu.Unlock() }})
	l := load(t, h, "loop.wasm", Module{Limits: Limits{Timeout: 200 * time.Millisecond}})
	res := call(t, l, "loop", `{}`)
	if !res.IsError || res.Text() != "tool exceeded its time limit of 200ms" {
		t.Fatalf("result %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stuck) != 0 {
		t.Errorf("reported stuck: %v", stuck)
	}
}

// stuckChild is the survival case of a guest in machine code that never
// returns to Go (a module compiled without the instrumentation, as a
// rewrite defect the verification missed would leave it): the watchdog
// reports it through OnStuck and disables the module. The child runs with
// the garbage collector off, since any collection would wait for that
// goroutine forever; the point is the report and the refusals.
func stuckChild(ctx context.Context, r *survivalRun, rep *survivalReport) (tool.Result, string) {
	reported := make(chan StuckCall, 1)
	r.opts.deadlines = deadlineOff
	r.opts.watchdogGrace, r.opts.watchdogTick = 300*time.Millisecond, 50*time.Millisecond
	r.opts.OnStuck = func(s StuckCall) { reported <- s }
	h, err := New(ctx, r.opts)
	if err != nil {
		return tool.Result{}, err.Error()
	}
	b := wasmFile(nilTB{}, "loop.wasm")
	l, err := h.Load(ctx, Module{Name: "loop", Bytes: b, Limits: Limits{Timeout: 300 * time.Millisecond}})
	if err != nil {
		return tool.Result{}, err.Error()
	}
	tl, _ := l.Tool("loop")
	start := time.Now()
	go tl.Call(ctx, tool.Call{ID: "stuck", Name: "loop", Arguments: []byte(`{}`)})
	var s StuckCall
	select {
	case s = <-reported:
	case <-time.After(hangBound):
		return tool.Result{}, "the watchdog reported nothing"
	}
	rep.Elapsed = time.Since(start)
	if s.InHost || s.Module != "loop" || !strings.Contains(s.String(), "has not returned to the host") {
		return tool.Result{}, "report: " + s.String()
	}
	res, err := tl.Call(ctx, tool.Call{ID: "again", Name: "loop", Arguments: []byte(`{}`)})
	if err == nil && !strings.Contains(res.Text(), "disabled until the process restarts") {
		return res, "a new call of the stuck module started: " + res.Text()
	}
	if _, err := h.Load(ctx, Module{Name: "again", Bytes: b}); !errors.Is(err, ErrUnsafe) {
		return tool.Result{}, "the stuck module's bytes load again: " + errText(err)
	}
	return tool.Errorf("%s", s.String()), ""
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// nilTB lets wasmFile run outside a test (in a survival child).
type nilTB struct{ testing.TB }

func (nilTB) Helper()                   {}
func (nilTB) Fatalf(f string, a ...any) { panic("survival: " + f) }

// TestWatchdogWaitsAWholeGrace: a guest whose exits pause for less than
// the grace period past its deadline (its thread not run for a while on a
// loaded machine) is stopped at its next exit, not reported stuck; one
// that does not exit for a whole grace period is reported once, and its
// module disabled.
func TestWatchdogWaitsAWholeGrace(t *testing.T) {
	t.Parallel()
	var stuck []StuckCall
	h, _ := newTestHost(t, Options{watchdogGrace: time.Second, watchdogTick: time.Hour,
		OnStuck: func(s StuckCall) { stuck = append(stuck, s) }})
	l := load(t, h, "loop.wasm", Module{})
	inst, err := l.newInstance(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.close()
	w := h.watch
	start := time.Now()
	inst.watch.deadline.Store(start.UnixNano())
	w.check(start)
	inst.exited()
	w.check(start.Add(900 * time.Millisecond))
	// Past the deadline and its grace, exits pause for 600 ms, then go
	// on: the watchdog stops the guest and reports nothing.
	w.check(start.Add(1500 * time.Millisecond))
	if len(stuck) != 0 || inst.stopRequested.Load() {
		t.Fatalf("a pause of 600 ms (grace 1 s): stuck %v, stop requested %v", stuck, inst.stopRequested.Load())
	}
	inst.exited()
	w.check(start.Add(1600 * time.Millisecond))
	if len(stuck) != 0 || !inst.stopRequested.Load() || !inst.watch.stopped.Load() {
		t.Fatalf("an exit past the grace: stuck %v, stop requested %v", stuck, inst.stopRequested.Load())
	}
	// No exit for a whole grace period from the last one: stuck.
	w.check(start.Add(2500 * time.Millisecond))
	if len(stuck) != 0 {
		t.Fatalf("reported after 900 ms without an exit: %v", stuck)
	}
	w.check(start.Add(2700 * time.Millisecond))
	w.check(start.Add(3500 * time.Millisecond))
	if len(stuck) != 1 || stuck[0].InHost || !l.entry.stuck.Load() {
		t.Fatalf("after a whole grace without an exit: %v (module disabled: %v), want one report", stuck, l.entry.stuck.Load())
	}
}
