package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/tool"
)

// TestCallAfterClose: a tool kept after its module was closed (a registry
// entry after a hot reload, a run in flight) answers ErrClosed, for every
// ABI and with or without a pool, and the record of the call says so.
func TestCallAfterClose(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file, tool string
		m          Module
		opts       Options
	}{
		{"echo.wasm", "echo", Module{}, Options{}},
		{"echo.wasm", "echo", Module{Reuse: true}, Options{}},
		{"echo.wasm", "echo", Module{}, Options{PoolSize: -1}},
		{"wasicmd.wasm", "entropy", Module{}, Options{}},
	} {
		t.Run(fmt.Sprintf("%s/reuse=%v/pool=%d", c.file, c.m.Reuse, c.opts.PoolSize), func(t *testing.T) {
			h, rec := newTestHost(t, c.opts)
			l := load(t, h, c.file, c.m)
			tl, _ := l.Tool(c.tool)
			if res := call(t, l, c.tool, `{}`); res.IsError {
				t.Fatalf("before Close: %+v", res)
			}
			if err := l.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			res, err := tl.Call(context.Background(), toolCall(c.tool, `{}`))
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("call after Close: err = %v, want ErrClosed", err)
			}
			if !res.IsError || res.Text() == "" {
				t.Errorf("call after Close: result %+v, want an error result", res)
			}
			r := rec.last(t)
			if r.Outcome != OutcomeFailed || r.ABI != l.ABI() || r.Module != l.Name() {
				t.Errorf("record after Close: %+v", r)
			}
			if l.ABI() == "" {
				t.Error("ABI() is empty after Close")
			}
		})
	}
}

// TestCloseRacingCalls closes modules while goroutines call their tools:
// every call either runs to a correct result or fails with ErrClosed;
// nothing panics, hangs or races (run with -race).
func TestCloseRacingCalls(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{PoolSize: 2})
	for round := range 6 {
		l := load(t, h, "echo.wasm", Module{Reuse: round%2 == 0})
		tl, _ := l.Tool("echo")
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range 20 {
					args := fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)
					res, err := tl.Call(context.Background(), toolCall("echo", args))
					switch {
					case errors.Is(err, ErrClosed):
						return
					case err != nil:
						t.Errorf("call: %v", err)
						return
					case res.IsError || res.Text() != args:
						t.Errorf("call = %+v, want %s", res, args)
						return
					}
				}
			}()
		}
		close(start)
		time.Sleep(time.Duration(round) * time.Millisecond)
		if err := l.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if _, err := tl.Call(context.Background(), toolCall("echo", `{}`)); !errors.Is(err, ErrClosed) {
			t.Fatalf("after Close: %v", err)
		}
	}
	mustEcho(t, h)
}

// TestCloseWithEndedContext: Close returns the context's error when calls
// in flight outlast it, refuses new calls at once, and still frees the
// module once the last call ends.
func TestCloseWithEndedContext(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "loop.wasm", Module{Limits: Limits{Timeout: 300 * time.Millisecond}})
	tl, _ := l.Tool("loop")
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := tl.Call(context.Background(), toolCall("loop", `{}`))
		if err != nil || !res.IsError {
			t.Errorf("in-flight call: %+v %v", res, err)
		}
	}()
	for l.busy() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close with an ended context while a call runs: %v", err)
	}
	if _, err := tl.Call(context.Background(), toolCall("loop", `{}`)); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after Close: %v", err)
	}
	<-done
	if err := l.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if !l.released() {
		t.Error("the module's resources were not freed after its last call")
	}
}

// busy returns the number of calls in flight.
func (l *Loaded) busy() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

// released reports whether the module's resources were freed.
func (l *Loaded) released() bool {
	select {
	case <-l.idle:
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.entry == nil
	default:
		return false
	}
}

// TestHostCloseStopsCalls: closing the host ends a call in flight with
// ErrClosed at the guest's next yield, and refuses later calls.
func TestHostCloseStopsCalls(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{})
	l := load(t, h, "loop.wasm", Module{Limits: Limits{Timeout: time.Minute}})
	tl, _ := l.Tool("loop")
	type result struct {
		res tool.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := tl.Call(context.Background(), toolCall("loop", `{}`))
		done <- result{res, err}
	}()
	for l.busy() == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !errors.Is(r.err, ErrClosed) || !r.res.IsError {
		t.Fatalf("call in flight: %+v, %v; want ErrClosed", r.res, r.err)
	}
	if got := rec.last(t).Outcome; got != OutcomeFailed {
		t.Errorf("outcome %s", got)
	}
	if _, err := tl.Call(context.Background(), toolCall("loop", `{}`)); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after Host.Close: %v", err)
	}
}

// slowModule is a valid module whose compilation takes seconds, under
// every limit: 40 functions of 5 000 ifs (a compile work of 1e9).
func slowModule() []byte {
	body := bytes.Repeat([]byte{0x20, 0x00, 0x04, 0x40, 0x0b}, 5000)
	fn := code(nil, append(append([]byte{0}, body...), 0x0b)...)
	fns := make([][]byte, 40)
	decls := make([]byte, 40)
	for i := range fns {
		fns[i] = fn
	}
	return wasmModule(
		sec(1, 1, 0x60, 1, 0x7f, 0),
		sec(3, vecOf(bytesOf(decls)...)...),
		sec(10, vecOf(fns...)...),
	)
}

// bytesOf makes each byte an item of its own.
func bytesOf(b []byte) [][]byte {
	items := make([][]byte, len(b))
	for i := range b {
		items[i] = b[i : i+1]
	}
	return items
}

// TestCloseStopsACompilation: Close during a module's compilation ends
// it between two functions, not at its end. The load fails with
// ErrClosed, no goroutine goes on compiling past the function it had begun, and
// nothing of the module reaches the cache (wazero writes it when the
// whole module is compiled).
func TestCloseStopsACompilation(t *testing.T) {
	dir := t.TempDir()
	h, err := New(t.Context(), Options{CacheDir: dir, KVDir: t.TempDir(), Isolation: Isolation{InProcess: true}})
	if err != nil {
		t.Fatal(err)
	}
	mod := slowModule()
	before, _ := filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
	loaded := make(chan error, 1)
	ids := make(chan string, 1)
	go func() {
		ids <- goroutineID()
		_, err := h.Inspect(context.Background(), "slow", mod, nil)
		loaded <- err
	}()
	id := <-ids
	for !compilingFor(id) {
		select {
		case err := <-loaded:
			t.Fatalf("the load ended before Close: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-loaded; !errors.Is(err, ErrClosed) {
		t.Errorf("the load: %v, want ErrClosed", err)
	}
	// The load ended as its worker finished the function it was
	// compiling; the other worker may still be finishing its own, which
	// FunctionWork bounds: it ends without starting another. (Under load
	// that takes a while: the bound here is for a stuck worker, not for
	// speed.)
	for deadline := time.Now().Add(time.Minute); compilingFor(id); {
		if time.Now().After(deadline) {
			t.Fatal("a goroutine still compiles the module a minute after Close")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if after, _ := filepath.Glob(filepath.Join(dir, "wazero-*", "*")); len(after) != len(before) {
		t.Errorf("the cache holds %d entries after Close, %d before: the module's compilation ran to its end", len(after), len(before))
	}
	// A load that passed its checks before Close and reaches compilation
	// after it does not start one.
	if _, err := h.compileCached(context.Background(), h.gen, mod); !errors.Is(err, ErrClosed) {
		t.Errorf("a compilation after Close: %v, want ErrClosed", err)
	}
}

// goroutineID returns the calling goroutine's number, as stacks show it.
func goroutineID() string {
	buf := make([]byte, 64)
	f := strings.Fields(string(buf[:runtime.Stack(buf, false)]))
	return f[1]
}

// compilingFor reports whether a goroutine is in wazero's compiler for
// goroutine id: id itself, or a worker it started.
func compilingFor(id string) bool {
	buf := make([]byte, 1<<24)
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if !strings.Contains(g, "wazevo.(*engine).compile") {
			continue
		}
		if strings.HasPrefix(g, "goroutine "+id+" ") || strings.Contains(g, "wazevo.(*engine).compileModule in goroutine "+id+"\n") {
			return true
		}
	}
	return false
}
