package host

import (
	"context"
	"errors"
	"sync"
	"time"
)

// compileWallCap bounds a compilation's wall time, as a multiple of
// Options.CompileTimeout, however little CPU time it gets: on a machine so
// loaded that a compilation gets no CPU for this long, it fails with the
// same error.
const compileWallCap = 8

// errCompileBudget is the cause of a compilation's context ending on
// its budget (see compileBudget).
var errCompileBudget = errors.New("compilation budget spent")

// compileBudget returns ctx ended, with cause errCompileBudget, once the
// compilation has taken d of wall time and the process has used d of CPU
// time since it began, or has taken wallCap of wall time whatever the CPU.
// A compilation's cost is its CPU time: on a machine loaded by other work
// it gets a fraction of a core, and a wall-clock bound alone failed real
// modules there (the 7 MB Python engine, a model-written Go tool) while a
// compile bomb, which burns CPU, meets both bounds at once. The process's
// CPU time counts this process's other work too, so the bound is never
// looser than d of wall time in a busy process. cpu reads the process's
// CPU time; without one (ok false) the bound is d of wall time.
func compileBudget(ctx context.Context, d, wallCap time.Duration, cpu func() (time.Duration, bool)) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	start := time.Now()
	cpu0, ok := cpu()
	done := make(chan struct{})
	go func() {
		first := time.NewTimer(d)
		defer first.Stop()
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-first.C:
		}
		tick := time.NewTicker(max(d/32, 50*time.Millisecond))
		defer tick.Stop()
		for {
			used, _ := cpu()
			if !ok || used-cpu0 >= d || time.Since(start) >= wallCap {
				cancel(errCompileBudget)
				return
			}
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() { close(done) })
		cancel(context.Canceled)
	}
}
