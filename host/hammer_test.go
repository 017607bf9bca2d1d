package host

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestHammer calls the same and different tools from many goroutines at
// once, mixing good calls with calls that hit a limit or trap, and checks
// every result: no state leaks between instances, no call sees another's
// output.
func TestHammer(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{PoolSize: 4})
	echo := load(t, h, "echo.wasm", Module{})
	goecho := load(t, h, "goecho.wasm", Module{})
	reuse := load(t, h, "echo.wasm", Module{Name: "echo-reuse", Reuse: true})
	trap := load(t, h, "trap.wasm", Module{})
	// The limit also bounds the describe at load: 20 ms once failed there
	// under the race detector on a loaded machine.
	loop := load(t, h, "loop.wasm", Module{Limits: Limits{Timeout: 200 * time.Millisecond}})
	wasi := load(t, h, "wasicmd.wasm", Module{})

	const workers, rounds = 16, 12
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				id := fmt.Sprintf(`{"worker":%d,"round":%d}`, w, r)
				var (
					l          *Loaded
					name, args string
					want       string
					wantErr    bool
				)
				switch (w + r) % 6 {
				case 0:
					l, name, args, want = echo, "echo", id, id
				case 1:
					l, name, args, want = goecho, "echo", id, id
				case 2:
					l, name, args, want = reuse, "echo", id, id
				case 3:
					l, name, args, want, wantErr = trap, "trap", `{}`, "tool crashed: unreachable", true
				case 4:
					l, name, args, want, wantErr = loop, "loop", `{}`, "tool exceeded its time limit of 200ms", true
				case 5:
					l, name, args, want = wasi, "entropy", `{}`, ""
				}
				tl, _ := l.Tool(name)
				res, err := tl.Call(context.Background(), toolCall(name, args))
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				if res.IsError != wantErr || (want != "" && res.Text() != want) {
					t.Errorf("%s(%s) = %+v, want %q", name, args, res, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
