package host

import (
	"context"
	"errors"
	"testing"
	"time"
)

// runTestInstance is an instance with nothing to run: enough for its
// runs' contexts.
func runTestInstance() *instance {
	inst := &instance{l: &Loaded{h: &Host{}}}
	inst.deadlinePassedFunc, inst.parentEndedFunc = inst.deadlinePassed, inst.parentEnded
	return inst
}

// waitDone fails t unless ctx is done within a second.
func waitDone(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
		t.Fatalf("%s: the run's context is not done", what)
	}
}

// waitStop fails t unless inst's guest is asked to stop within a second.
func waitStop(t *testing.T, inst *instance, what string) {
	t.Helper()
	for i := 0; !inst.stopRequested.Load(); i++ {
		if i == 1000 {
			t.Fatalf("the guest of %s was not asked to stop", what)
		}
		time.Sleep(time.Millisecond)
	}
}

type otherKey struct{}

func TestRunContextEndsAtItsDeadline(t *testing.T) {
	inst := runTestInstance()
	rc := inst.startRun(context.Background(), time.Now().Add(20*time.Millisecond))
	if err := rc.Err(); err != nil {
		t.Fatalf("a run that just began has ended: %v", err)
	}
	waitDone(t, rc, "deadline")
	if !errors.Is(rc.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err = %v, want the deadline", rc.Err())
	}
	// Done is a real context's, whose own timer may fire first; the
	// instance's timer asks the guest to stop.
	waitStop(t, inst, "a run past its deadline")
	inst.endRun(rc)
	if !inst.interrupted {
		t.Fatal("an instance whose run ended at its deadline may run again")
	}
}

func TestRunContextEndsWithItsCaller(t *testing.T) {
	inst := runTestInstance()
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), otherKey{}, "v"))
	rc := inst.startRun(parent, time.Now().Add(time.Hour))
	if rc.Value(otherKey{}) != "v" {
		t.Fatalf("Value(otherKey) = %v, want the caller's value", rc.Value(otherKey{}))
	}
	if rc.Value(instanceKey{}) != inst {
		t.Fatal("Value(instanceKey) is not the instance")
	}
	cancel()
	waitDone(t, rc, "caller cancelled")
	if !errors.Is(rc.Err(), context.Canceled) {
		t.Fatalf("Err = %v, want the caller's", rc.Err())
	}
	// Done is a real context's, closed by the caller's cancellation
	// directly; parentEnded asks the guest to stop.
	waitStop(t, inst, "a run whose caller gave up")
	inst.endRun(rc)
	if !inst.interrupted {
		t.Fatal("an instance whose caller gave up may run again")
	}
}

func TestRunContextTakesTheCallersEarlierDeadline(t *testing.T) {
	inst := runTestInstance()
	dl := time.Now().Add(30 * time.Millisecond)
	parent, cancel := context.WithDeadline(context.Background(), dl)
	defer cancel()
	rc := inst.startRun(parent, time.Now().Add(time.Hour))
	if got, ok := rc.Deadline(); !ok || !got.Equal(dl) {
		t.Fatalf("Deadline = %v, %v; want the caller's %v", got, ok, dl)
	}
	waitDone(t, rc, "caller's deadline")
	if !errors.Is(rc.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err = %v, want the deadline", rc.Err())
	}
	inst.endRun(rc)
}

func TestRunContextOfAnEndedCaller(t *testing.T) {
	inst := runTestInstance()
	parent, cancel := context.WithCancel(context.Background())
	cancel()
	rc := inst.startRun(parent, time.Now().Add(time.Hour))
	if !errors.Is(rc.Err(), context.Canceled) {
		t.Fatalf("Err = %v, want the caller's", rc.Err())
	}
	if !inst.stopRequested.Load() {
		t.Fatal("the guest of a run whose caller had given up is not asked to stop")
	}
	inst.endRun(rc)
	if !inst.interrupted {
		t.Fatal("an instance whose caller had given up may run again")
	}
	inst = runTestInstance()
	rc = inst.startRun(context.Background(), time.Now().Add(-time.Second))
	if !errors.Is(rc.Err(), context.DeadlineExceeded) {
		t.Fatalf("a run begun past its deadline: Err = %v", rc.Err())
	}
	if !inst.stopRequested.Load() {
		t.Fatal("the guest of a run begun past its deadline is not asked to stop")
	}
	inst.endRun(rc)
	if !inst.interrupted {
		t.Fatal("an instance whose run began past its deadline may run again")
	}
}

// A run that ends in time cancels what was derived from its context and
// leaves the instance fit to run again, under a deadline of its own.
func TestRunContextEndsWithTheRun(t *testing.T) {
	inst := runTestInstance()
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc := inst.startRun(parent, time.Now().Add(time.Hour))
	derived, stop := context.WithCancel(rc)
	defer stop()
	select {
	case <-derived.Done():
		t.Fatal("a context derived from a run that lasts is done")
	default:
	}
	inst.endRun(rc)
	waitDone(t, derived, "derived context after the run")
	if !errors.Is(rc.Err(), context.Canceled) {
		t.Fatalf("Err after the run = %v, want context.Canceled", rc.Err())
	}
	if inst.interrupted || inst.stopRequested.Load() {
		t.Fatal("a run that ended in time interrupted its instance")
	}
	if inst.cur.Load() != nil {
		t.Fatal("the ended run is still the instance's current one")
	}

	// The next run's deadline is its own: the timer was reset for it.
	rc2 := inst.startRun(context.Background(), time.Now().Add(20*time.Millisecond))
	if rc2.Err() != nil {
		t.Fatalf("the next run begins ended: %v", rc2.Err())
	}
	waitDone(t, rc2, "second run's deadline")
	if !errors.Is(rc2.Err(), context.DeadlineExceeded) {
		t.Fatalf("second run: Err = %v, want the deadline", rc2.Err())
	}
	waitStop(t, inst, "a second run past its deadline")
	inst.endRun(rc2)
	if !inst.interrupted {
		t.Fatal("the second run ended at its deadline without interrupting the instance")
	}
	// A cancelled caller of the first run no longer matters.
	if !errors.Is(rc.Err(), context.Canceled) {
		t.Fatalf("first run's Err changed to %v", rc.Err())
	}
}

// A stop asked for by the output limit ends the run and the guest.
func TestRunContextStopOutput(t *testing.T) {
	inst := runTestInstance()
	rc := inst.startRun(context.Background(), time.Now().Add(time.Hour))
	done := rc.Done()
	inst.stopOutput()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("the output limit did not end the run")
	}
	if !inst.stopRequested.Load() {
		t.Fatal("the output limit did not ask the guest to stop")
	}
	inst.endRun(rc)
	if !inst.interrupted {
		t.Fatal("an instance stopped at its output limit may run again")
	}
}

// BenchmarkRunContext is a run's context as the host makes it, against
// what it stands for: context.WithDeadline, WithValue and an AfterFunc
// that interrupts the guest.
func BenchmarkRunContext(b *testing.B) {
	inst := runTestInstance()
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("runContext", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rc := inst.startRun(parent, time.Now().Add(time.Minute))
			if rc.Value(instanceKey{}) != inst {
				b.Fatal("no instance")
			}
			inst.endRun(rc)
		}
	})
	b.Run("stdlib", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithDeadline(parent, time.Now().Add(time.Minute))
			cctx := context.WithValue(ctx, instanceKey{}, inst)
			stop := context.AfterFunc(cctx, inst.interrupt)
			if cctx.Value(instanceKey{}) != inst {
				b.Fatal("no instance")
			}
			stop()
			cancel()
		}
	})
}

// TestNewInstanceUnderAnEndedCaller: an instance made for a caller that
// has given up is not handed out, whether its start-up returned (echo has
// no start function) or would spin until its time limit (startspin's
// start never ends; the limit here is a minute).
func TestNewInstanceUnderAnEndedCaller(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, file := range []string{"echo.wasm", "startspin.wasm"} {
		m := Module{Limits: Limits{Timeout: time.Minute}}
		if file == "startspin.wasm" {
			m.Sidecar = []byte(`{"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}`)
		}
		l := load(t, h, file, m)
		done := make(chan error, 1)
		go func() {
			inst, err := l.newInstance(ctx, false)
			if inst != nil {
				inst.close()
				err = errors.New("an instance was handed out")
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%s: newInstance = %v, want context.Canceled", file, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: an instance made for a caller that gave up still starts 30 s later", file)
		}
	}
	mustEcho(t, h)
}
