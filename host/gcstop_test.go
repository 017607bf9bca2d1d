package host

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/tool"
)

// collectWhileSpinning is the survival case "collections while guests
// spin": a guest spinning in machine code lets the host's garbage
// collections complete while it runs (it returns to Go about every
// millisecond of instructions); one that never did would hold up the
// stop-the-world phase, and with it the whole process, until its call
// ended. An order of events, not a duration: each call's limit is twice
// the parent's hang bound, twenty collections must complete before the
// call ends, and then the case ends the call itself. It runs in a child
// process: a process frozen that way cannot fail a test of its own, and
// the parent calls the child frozen after survivalHang.
func collectWhileSpinning(ctx context.Context, r *survivalRun, _ *survivalReport) (tool.Result, string) {
	h, err := New(ctx, r.opts)
	if err != nil {
		return tool.Result{}, err.Error()
	}
	defer h.Close(ctx)
	for _, file := range []string{"loop.wasm", "loopbody.wasm", "chain.wasm"} {
		name := strings.TrimSuffix(file, ".wasm")
		l, err := h.Load(ctx, Module{Name: name, Bytes: wasmFile(nilTB{}, file), Limits: Limits{Timeout: 2 * survivalHang}})
		if err != nil {
			return tool.Result{}, err.Error()
		}
		tl, _ := l.Tool(name)
		callCtx, cancel := context.WithCancel(ctx)
		ended := make(chan tool.Result, 1)
		go func() {
			res, _ := tl.Call(callCtx, tool.Call{ID: "spin", Name: name, Arguments: json.RawMessage(`{}`)})
			ended <- res
		}()
		for range 20 {
			time.Sleep(20 * time.Millisecond)
			runtime.GC()
		}
		select {
		case res := <-ended:
			cancel()
			return res, fmt.Sprintf("%s: the call ended before the collections did: %s", file, res.Text())
		default:
		}
		cancel()
		if res := <-ended; !res.IsError {
			return res, fmt.Sprintf("%s: the cancelled call succeeded: %s", file, res.Text())
		}
		_ = l.Close(ctx)
	}
	return tool.Errorf("the collections completed while each guest spun"), ""
}

// BenchmarkGuestGCStop is how long the runtime waits to stop the world
// for a collection while a guest spins in machine code (the survival
// harness logs the same figure per hostile module): max-stop-µs is the
// longest wait over the run (the upper bound of its runtime/metrics
// histogram bucket). A guest that returns to Go about every millisecond of
// instructions keeps it near a millisecond on an idle machine.
func BenchmarkGuestGCStop(b *testing.B) {
	h, _ := newTestHost(b, Options{})
	l := load(b, h, "loop.wasm", Module{Limits: Limits{Timeout: 200 * time.Millisecond}})
	tl, _ := l.Tool("loop")
	stops := gcStops()
	var longest time.Duration
	for b.Loop() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = tl.Call(context.Background(), tool.Call{ID: "spin", Name: "loop", Arguments: json.RawMessage(`{}`)})
		}()
		for running := true; running; {
			select {
			case <-done:
				running = false
			case <-time.After(10 * time.Millisecond):
				runtime.GC()
			}
		}
		var d time.Duration
		if d, stops = longestGCStopSince(stops); d > longest {
			longest = d
		}
	}
	b.ReportMetric(float64(longest.Microseconds()), "max-stop-µs")
}
