package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// wasmFile reads a module of testdata/wasm.
func wasmFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", name))
	if err != nil {
		t.Fatalf("reading test module: %v", err)
	}
	return b
}

// recorder keeps the CallRecords a host reports.
type recorder struct {
	mu   sync.Mutex
	recs []CallRecord
}

func (r *recorder) add(_ context.Context, c CallRecord) {
	r.mu.Lock()
	r.recs = append(r.recs, c)
	r.mu.Unlock()
}

func (r *recorder) last(t testing.TB) CallRecord {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.recs) == 0 {
		t.Fatal("no call was recorded")
	}
	return r.recs[len(r.recs)-1]
}

// newTestHost returns a host with private cache and kv directories.
func newTestHost(t testing.TB, opts Options) (*Host, *recorder) {
	t.Helper()
	rec := &recorder{}
	if opts.CacheDir == "" && !opts.NoDiskCache {
		opts.CacheDir = testCacheDir
	}
	if opts.KVDir == "" {
		opts.KVDir = t.TempDir()
	}
	if opts.OnCall == nil {
		opts.OnCall = rec.add
	}
	h, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h, rec
}

func grants(t testing.TB, ss ...string) []manifest.Grant {
	t.Helper()
	gs, err := manifest.ParseGrants(ss)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

// load loads testdata module file with grants.
func load(t testing.TB, h *Host, file string, m Module) *Loaded {
	t.Helper()
	m.Bytes = wasmFile(t, file)
	if m.Name == "" {
		m.Name = strings.TrimSuffix(file, ".wasm")
	}
	if m.Sidecar == nil {
		if sc, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", strings.TrimSuffix(file, ".wasm")+".tool.json")); err == nil {
			m.Sidecar = sc
		}
	}
	l, err := h.Load(context.Background(), m)
	if err != nil {
		t.Fatalf("loading %s: %v", file, err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

// call calls tool name of l with JSON arguments.
func call(t testing.TB, l *Loaded, name, args string) tool.Result {
	t.Helper()
	tl, ok := l.Tool(name)
	if !ok {
		t.Fatalf("module %s has no tool %s", l.Name(), name)
	}
	type answer struct {
		res tool.Result
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := tl.Call(context.Background(), tool.Call{ID: "call-1", Name: name, Arguments: json.RawMessage(args)})
		done <- answer{res, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-time.After(hangBound):
		t.Fatalf("%s: the call did not return within %v: it hangs", name, hangBound)
	}
	if a.err != nil {
		t.Fatalf("%s: infrastructure error: %v", name, a.err)
	}
	return a.res
}

// hangBound is how long a test waits for what must end (a call past its
// time limit, a Close) before it calls it a hang. Its only job is to stop
// a hang with a clear failure: it is no measure of speed, which a loaded
// machine (load average 20 on two cores) stretches many times over, and
// is for benchmarks. A test that needs "promptly" asserts an outcome
// instead: the limit's error, an order of events, a count of work.
const hangBound = 2 * time.Minute

// mustEcho checks that the host still serves: a fresh module's echo call
// succeeds.
func mustEcho(t testing.TB, h *Host) {
	t.Helper()
	l := load(t, h, "echo.wasm", Module{})
	res := call(t, l, "echo", `{"still":"serving"}`)
	if res.IsError || string(res.StructuredContent) != `{"still":"serving"}` {
		t.Fatalf("host no longer serves: echo returned %+v", res)
	}
}

func toolCall(name, args string) tool.Call {
	return tool.Call{ID: "c", Name: name, Arguments: json.RawMessage(args)}
}

// warm lets the pool make instances ahead of calls, as the module's
// first call does, and waits until it is full: for the tests of what a
// full pool does, whose subject is not when it starts filling.
func (p *pool) warm() {
	p.warmUp()
	p.waitFull()
}

// warmUp lets the pool make instances ahead of calls, as the module's
// first call does, without waiting.
func (p *pool) warmUp() {
	p.mu.Lock()
	p.called = true
	p.startRefill()
	p.mu.Unlock()
}

// waitFull waits until the pool holds its full number of instances.
func (p *pool) waitFull() {
	for {
		p.mu.Lock()
		full := len(p.ready) >= p.size
		p.mu.Unlock()
		if full {
			return
		}
		time.Sleep(50 * time.Microsecond)
	}
}
