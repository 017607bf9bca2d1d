package host

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// A compilation that got little CPU keeps going past its wall time; once
// the process has used the budget's CPU time it ends, with the budget's
// cause. An order of events, not durations: the test moves the CPU clock.
func TestCompileBudgetCountsCPUTime(t *testing.T) {
	var used atomic.Int64
	cpu := func() (time.Duration, bool) { return time.Duration(used.Load()), true }
	ctx, cancel := compileBudget(context.Background(), 20*time.Millisecond, time.Hour, cpu)
	defer cancel()
	// Ten times the wall budget, with no CPU used: still going.
	time.Sleep(200 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("the budget ended with no CPU used: %v", context.Cause(ctx))
	}
	used.Store(int64(20 * time.Millisecond))
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the budget did not end once its CPU time was used")
	}
	if !errors.Is(context.Cause(ctx), errCompileBudget) {
		t.Fatalf("cause = %v", context.Cause(ctx))
	}
}

// With no CPU clock, or past the wall cap, the wall time alone ends it.
func TestCompileBudgetWallBounds(t *testing.T) {
	for name, c := range map[string]struct {
		wallCap time.Duration
		cpu     func() (time.Duration, bool)
	}{
		"no CPU clock": {time.Hour, func() (time.Duration, bool) { return 0, false }},
		"the wall cap": {40 * time.Millisecond, func() (time.Duration, bool) { return 0, true }},
	} {
		ctx, cancel := compileBudget(context.Background(), 20*time.Millisecond, c.wallCap, c.cpu)
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute):
			t.Fatalf("%s: the budget did not end", name)
		}
		if !errors.Is(context.Cause(ctx), errCompileBudget) {
			t.Errorf("%s: cause = %v", name, context.Cause(ctx))
		}
		cancel()
	}
	// Ended by its caller, the cause is not the budget's.
	ctx, cancel := compileBudget(context.Background(), time.Hour, time.Hour, selfCPU)
	cancel()
	cancel()
	if errors.Is(context.Cause(ctx), errCompileBudget) {
		t.Errorf("a cancelled compilation reads as over its budget")
	}
}
