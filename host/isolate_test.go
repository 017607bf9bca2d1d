package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/tool"
)

// TestInspectIsolatedMatchesInProcess: Inspect in a sandbox process learns
// what it learns in this one, and fails the same way (the sentinel and
// typed errors cross the process boundary).
func TestInspectIsolatedMatchesInProcess(t *testing.T) {
	t.Parallel()
	iso, _ := newTestHost(t, Options{})
	inproc, _ := newTestHost(t, Options{Isolation: Isolation{InProcess: true}})
	for _, f := range []string{"echo.wasm", "fetch.wasm", "kv.wasm"} {
		a, err := iso.Inspect(t.Context(), f, wasmFile(t, f), nil)
		if err != nil {
			t.Fatalf("%s isolated: %v", f, err)
		}
		b, err := inproc.Inspect(t.Context(), f, wasmFile(t, f), nil)
		if err != nil {
			t.Fatalf("%s in process: %v", f, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: isolated %+v, in process %+v", f, a, b)
		}
	}
	for _, c := range []struct {
		file   string
		target error
	}{{"malformed.wasm", ErrMalformed}, {"noabi.wasm", ErrNoABI}, {"baddescribe.wasm", ErrDescribe}} {
		_, err := iso.Inspect(t.Context(), c.file, wasmFile(t, c.file), nil)
		_, want := inproc.Inspect(t.Context(), c.file, wasmFile(t, c.file), nil)
		if !errors.Is(err, c.target) || err.Error() != want.Error() {
			t.Errorf("%s: isolated %v, in process %v", c.file, err, want)
		}
	}
	// An import this host lacks is shown as a host function an
	// application registers, the same in both.
	a, err := iso.Inspect(t.Context(), "unknownimport", wasmFile(t, "unknownimport.wasm"), nil)
	b, errb := inproc.Inspect(t.Context(), "unknownimport", wasmFile(t, "unknownimport.wasm"), nil)
	if err != nil || errb != nil || !reflect.DeepEqual(a, b) || !slices.Equal(a.HostFunctions, []string{"env.system"}) {
		t.Errorf("unknown import: isolated %+v, %v; in process %+v, %v", a, err, b, errb)
	}
	// A load in the sandbox process reports what the host lacks as the
	// host itself does.
	_, err = iso.Load(t.Context(), Module{Name: "unknownimport", Bytes: wasmFile(t, "unknownimport.wasm"), Isolated: true})
	var ie *ImportError
	if !errors.As(err, &ie) || !ie.Unregistered || ie.Import != "env.system" {
		t.Errorf("isolated load of an unknown import: %#v", err)
	}
}

// TestIsolationContainsUnstoppableGuests: with the instrumentation off in
// the sandbox process (as a defect the checks all missed would leave it), a
// describe and a call that never return to Go hang that process only: the
// host kills it at the deadline, reports the time limit, serves the next
// call in a new process, and its own garbage collections never wait: they
// complete while the guest spins, before the call ends, whatever the
// machine's speed (the call's limit is then twice the hang bound, and the
// test ends the call itself once its collections are done).
func TestIsolationContainsUnstoppableGuests(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{deadlines: deadlineOff, CompileTimeout: time.Second, sandboxSlack: 500 * time.Millisecond})
	_, err := h.Inspect(t.Context(), "describeloop", wasmFile(t, "describeloop.wasm"), nil)
	if !errors.Is(err, ErrDescribe) || !strings.Contains(err.Error(), "took longer than") {
		t.Fatalf("Inspect of a describe that never returns: %v", err)
	}

	l, err := h.Load(t.Context(), Module{Name: "compute", Bytes: wasmFile(t, "compute.wasm"), Isolated: true,
		Limits: Limits{Timeout: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	res := call(t, l, "spin", `{"n":100000000000}`)
	if !res.IsError || res.Text() != "tool exceeded its time limit of 300ms" {
		t.Fatalf("spin: %+v", res)
	}
	if r := rec.last(t); r.Outcome != OutcomeLimit || r.Tool != "spin" {
		t.Errorf("record %+v", r)
	}
	if res := call(t, l, "fib", `{"n":20}`); res.IsError || res.Text() != "6765" {
		t.Fatalf("fib after the sandbox was killed: %+v", res)
	}
	if r := rec.last(t); r.Outcome != OutcomeOK || r.Module != "compute" || r.SHA256 != l.SHA256() {
		t.Errorf("record of a sandboxed call %+v", r)
	}
}

// TestIsolatedGuestsNeverHoldUpCollections: with the instrumentation off
// in the sandbox process, a guest spinning there never holds up this
// process's garbage collections: they complete while it spins, before its
// call ends. An order of events, not a duration: the call's limit is twice
// the hang bound, and the test ends the call itself once they are done.
func TestIsolatedGuestsNeverHoldUpCollections(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{deadlines: deadlineOff, sandboxSlack: 500 * time.Millisecond})
	l := load(t, h, "compute.wasm", Module{Isolated: true, Limits: Limits{Timeout: 2 * hangBound}})
	spin, _ := l.Tool("spin")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ended := make(chan tool.Result, 1)
	go func() {
		res, _ := spin.Call(ctx, tool.Call{ID: "spin", Name: "spin", Arguments: json.RawMessage(`{"n":100000000000}`)})
		ended <- res
	}()
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for range 20 {
			time.Sleep(50 * time.Millisecond)
			runtime.GC()
		}
	}()
	select {
	case <-collected:
	case res := <-ended:
		t.Fatalf("the spinning call ended before this process's collections did: %+v", res)
	case <-time.After(hangBound):
		t.Fatalf("this process's collections did not complete within %v while the sandboxed guest spun", hangBound)
	}
	select {
	case res := <-ended:
		t.Fatalf("the spinning call ended before the test ended it: %+v", res)
	default:
	}
	cancel()
	select {
	case res := <-ended:
		if !res.IsError {
			t.Errorf("the cancelled call: %+v", res)
		}
	case <-time.After(hangBound):
		t.Fatalf("the cancelled call did not return within %v", hangBound)
	}
}

// TestIsolatedRefusesGrants: an isolated module runs with nothing.
func TestIsolatedRefusesGrants(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	_, err := h.Load(t.Context(), Module{Name: "fetch", Bytes: wasmFile(t, "fetch.wasm"), Isolated: true, Grants: grants(t, "net:example.com")})
	if err == nil || !strings.Contains(err.Error(), "runs with no grants") {
		t.Fatalf("Load: %v", err)
	}
}

// TestSandboxSharesTheCompilationCache: what a sandbox process compiles
// lands in the host's on-disk cache, so inspecting a module and then
// loading it (or inspecting it again) compiles it once.
func TestSandboxSharesTheCompilationCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := func() map[string]bool {
		m := map[string]bool{}
		_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				m[p] = true
			}
			return nil
		})
		return m
	}
	h, _ := newTestHost(t, Options{CacheDir: dir})
	before := files() // the host's own kernel
	if _, err := h.Inspect(t.Context(), "echo", wasmFile(t, "echo.wasm"), nil); err != nil {
		t.Fatal(err)
	}
	after := files()
	if len(after) <= len(before) {
		t.Fatalf("the sandbox process compiled echo, and %s holds only what it held before (%d files)", dir, len(before))
	}
}
