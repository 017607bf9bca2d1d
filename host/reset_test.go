package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host/internal/rewrite"
)

// TestResetIsolation: snapreset (snapsecret without its table write) keeps
// each caller's secret in its memory, low and high, and in its global.
// Its used instances are reset to the snapshot and serve the next calls:
// each of 1 000 calls, one after another or eight at a time, with or
// without a pool, finds the state the initialiser left and none of the
// secrets before it. One after another, every call after the first is
// served by the instance the call before it left, reset: the test checks
// resets happen, not only that secrets do not show.
func TestResetIsolation(t *testing.T) {
	for _, c := range []struct {
		name       string
		pool       int
		concurrent int
	}{
		{"sequential", -1, 1},
		{"sequential pooled", 2, 1},
		{"concurrent", -1, 8},
		{"concurrent pooled", 4, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h, rec := newTestHost(t, Options{PoolSize: c.pool})
			l := load(t, h, "snapreset.wasm", Module{})
			if !l.resetsOn() {
				t.Fatal("snapreset's instances are not reset")
			}
			first := "first-caller-secret-0001"
			if got := probe(t, l, first); got != pristine {
				t.Fatalf("the first call found %+v, want %+v", got, pristine)
			}
			snap := snapshotOf(t, l)
			const calls = 1000
			per := (calls - 1) / c.concurrent
			var wg sync.WaitGroup
			for w := range c.concurrent {
				wg.Go(func() {
					for i := range per {
						secret := fmt.Sprintf("secret-of-caller-%d-%d", w, i)
						if got := probe(t, l, secret); got != pristine {
							t.Errorf("call %d of worker %d found %+v, want %+v", i, w, got, pristine)
							return
						}
					}
				})
			}
			wg.Wait()
			if snap.holds(first) || snap.holds("secret-of-caller-") {
				t.Error("a call's argument reached the snapshot")
			}
			if c.concurrent == 1 {
				rec.mu.Lock()
				defer rec.mu.Unlock()
				for i, r := range rec.recs[1:] {
					if !r.Pooled {
						t.Fatalf("call %d was not served by a reset instance", i+1)
					}
				}
			}
		})
	}
}

// TestResetNotForTableWriters: snapsecret writes its table, which a reset
// does not restore: its instances are never reset (each call's is closed),
// and each call finds the table as the module declares it.
func TestResetNotForTableWriters(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{PoolSize: -1})
	l := load(t, h, "snapsecret.wasm", Module{})
	if l.resetsOn() {
		t.Fatal("snapsecret's instances are reset")
	}
	for i := range 5 {
		if got := probe(t, l, fmt.Sprintf("table-secret-%d", i)); got != pristine {
			t.Fatalf("call %d found %+v", i, got)
		}
		if rec.last(t).Pooled {
			t.Fatalf("call %d was served by a kept instance", i)
		}
	}
}

// TestResetGrownMemory: a call grows the memory past the snapshot and
// fills the new pages with its caller's secret; the reset cuts the memory
// back to the snapshot's size (the next call starts with the snapshot's
// pages, as a new instance does) and the pages grown again are zero.
func TestResetGrownMemory(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{PoolSize: -1})
	l := load(t, h, "snapreset.wasm", Module{})
	for i := range 20 {
		// Alternately a little and more than spareClear: both ways of
		// clearing the pages past the snapshot.
		pages := 3
		if i%2 == 1 {
			pages = spareClear>>16 + 5
		}
		res := call(t, l, "grow", fmt.Sprintf(`{"pages":%d,"fill":"grown-secret-%d"}`, pages, i))
		var got struct{ Old, Dirty int64 }
		if err := json.Unmarshal(res.StructuredContent, &got); res.IsError || err != nil {
			t.Fatalf("grow: %+v %v", res, err)
		}
		if got.Dirty != 0 {
			t.Fatalf("call %d: %d bytes of the grown memory were not zero", i, got.Dirty)
		}
		if got.Old != int64(pristine.Pages) {
			t.Errorf("call %d: the instance started with %d pages, want %d", i, got.Old, pristine.Pages)
		}
		if i > 0 && !rec.last(t).Pooled {
			t.Errorf("call %d was not served by a reset instance", i)
		}
	}
}

// TestResetMemoryLimit: a reset instance is charged as a new one. A call
// grows to the limit and returns; the next call (the same instance,
// reset) starts at the snapshot's size and may grow as far again, not one
// page further: growing past the limit is refused, and the instance that
// was refused is not reset.
func TestResetMemoryLimit(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20 // 16 pages
	h, rec := newTestHost(t, Options{PoolSize: -1})
	l := load(t, h, "snapreset.wasm", Module{Limits: Limits{Memory: limit}})
	call(t, l, "probe", `{}`)
	up := limit>>16 - pristine.Pages
	for i := range 3 {
		// Up to the limit: the call returns well, its instance is reset.
		res := call(t, l, "grow", fmt.Sprintf(`{"pages":%d,"fill":"x"}`, up))
		if res.IsError || !strings.Contains(string(res.StructuredContent), fmt.Sprintf(`{"old":%d,`, pristine.Pages)) {
			t.Fatalf("call %d growing to the limit: %+v", i, res)
		}
		if !rec.last(t).Pooled {
			t.Fatalf("call %d was not served by a reset instance", i)
		}
	}
	res := call(t, l, "grow", fmt.Sprintf(`{"pages":%d}`, up+1))
	if !res.IsError || !strings.Contains(res.Text(), "memory limit") {
		t.Errorf("growing past the limit: %+v", res)
	}
	if p := rec.last(t).MemoryPeak; p > limit+h.kernel.initial {
		t.Errorf("peak %d past the limit %d", p, limit)
	}
	call(t, l, "probe", `{}`)
	if rec.last(t).Pooled {
		t.Error("the instance refused its memory was reset and kept")
	}
}

// TestResetNotAfterFailure: an instance whose call trapped, exited, ran
// out of time, passed the output limit, was refused memory, was cancelled,
// or changed its WASI state is closed, never reset: each attack first
// writes its caller's secret into memory and the global, and the next call
// finds a new instance, in the state the initialiser left.
func TestResetNotAfterFailure(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"trap", "exit", "spin", "flood", "grow", "wasi", "cancel"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			h, rec := newTestHost(t, Options{PoolSize: -1})
			l := load(t, h, "snapreset.wasm", Module{Limits: Limits{Timeout: 2 * time.Second, Output: 1 << 10, Memory: 4 << 20}})
			probe(t, l, "warm")
			tl, _ := l.Tool("attack")
			ctx := context.Background()
			args := fmt.Sprintf(`{"secret":"attack-secret-%s","how":%q}`, how, how)
			if how == "cancel" {
				// Cancelled while it spins: interrupted, not timed out.
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(100*time.Millisecond, cancel)
				args = `{"secret":"attack-secret-cancel","how":"spin"}`
			}
			res, _ := tl.Call(ctx, toolCall("attack", args))
			if ok := how == "exit" || how == "wasi"; res.IsError == ok {
				t.Fatalf("the attack: %+v", res)
			}
			if !rec.last(t).Pooled {
				t.Fatal("the attack's call was not served by a reset instance")
			}
			if n := l.resets.count(); n != 0 {
				t.Fatalf("%d instances kept after the attack", n)
			}
			if got := probe(t, l, ""); got != pristine {
				t.Errorf("the call after the attack found %+v, want %+v", got, pristine)
			}
			if rec.last(t).Pooled {
				t.Error("the call after the attack was served by the attacked instance")
			}
		})
	}
}

// TestResetRestoresEveryByte: after a call that wrote its secret and grew
// the memory, the instance kept for the next call holds exactly the
// snapshot: its memory and its kernel's, byte for byte and as long as the
// snapshot's (as the runtime sees them, not only the host), every global
// the snapshot holds, the fuel and the stack budget as a new instance has
// them. For snapreset and the Go guest (with Module.SharedSeeds).
func TestResetRestoresEveryByte(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ file, tool, args string }{
		{"snapreset.wasm", "grow", `{"pages":3,"fill":"byte-secret"}`},
		{"snapreset.wasm", "probe", `{"secret":"byte-secret"}`},
		{"goecho.wasm", "echo", `{"text":"byte-secret"}`},
	} {
		t.Run(c.file+"/"+c.tool, func(t *testing.T) {
			t.Parallel()
			h, _ := newTestHost(t, Options{PoolSize: -1})
			l := load(t, h, c.file, Module{SharedSeeds: true})
			for i := range 3 {
				if res := call(t, l, c.tool, c.args); res.IsError {
					t.Fatalf("call %d: %+v", i, res)
				}
			}
			snap := snapshotOf(t, l)
			inst := l.resets.get(h, true)
			if inst == nil {
				t.Fatal("no reset instance kept")
			}
			defer inst.close()
			if !bytes.Equal(inst.linear.buf, snap.mem) || inst.mod.Memory().Size() != uint32(len(snap.mem)) {
				t.Errorf("memory of %d bytes (%d to the runtime), snapshot %d; equal %v", len(inst.linear.buf), inst.mod.Memory().Size(), len(snap.mem), bytes.Equal(inst.linear.buf, snap.mem))
			}
			kmod := inst.k.Module()
			if !bytes.Equal(inst.kmem.buf, snap.kmem) || kmod.Memory().Size() != uint32(len(snap.kmem)) {
				t.Errorf("kernel memory of %d bytes (%d to the runtime), snapshot %d", len(inst.kmem.buf), kmod.Memory().Size(), len(snap.kmem))
			}
			checkGlobals(t, inst.mod, l.entry.snapGlobals, snap.globals, l.limits.Stack)
			checkGlobals(t, kmod, h.kernel.globals, snap.kglobals, kernelStack)
		})
	}
}

func checkGlobals(t *testing.T, mod api.Module, names []string, want []uint64, stack int64) {
	t.Helper()
	for i, n := range names {
		if got := mod.ExportedGlobal(n).Get(); got != want[i] {
			t.Errorf("global %s is %#x, the snapshot's %#x", n, got, want[i])
		}
	}
	if got := mod.ExportedGlobal(rewrite.FuelExport).Get(); got != rewrite.YieldEvery {
		t.Errorf("fuel %d, want %d", got, rewrite.YieldEvery)
	}
	if got := mod.ExportedGlobal(rewrite.StackExport).Get(); got != uint64(uint32(stack)) {
		t.Errorf("stack budget %d, want %d", got, stack)
	}
}

// TestResetClose: closing the module frees its reset instances, and a
// call that ends after Close keeps none.
func TestResetClose(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{PoolSize: -1})
	l := load(t, h, "snapreset.wasm", Module{})
	probe(t, l, "a") // the snapshot
	// A call in flight as Close runs, and a reset instance kept.
	if err := l.enter(); err != nil {
		t.Fatal(err)
	}
	inst, _, err := l.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	kept, err := l.newInstance(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if !l.keepReset(kept) || l.resets.count() != 1 {
		t.Fatal("no reset instance kept")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Close does not wait for the call
	if err := l.Close(ctx); err == nil {
		t.Error("Close did not wait for the call in flight")
	}
	// Errorf, not Fatalf: the call must end, or the test's cleanup waits
	// for it forever.
	if n := l.resets.count(); n != 0 || !kept.mod.IsClosed() {
		t.Errorf("%d reset instances kept after Close, the kept one closed %v", n, kept.mod.IsClosed())
	}
	l.releaseInstance(inst, true) // the call ends after Close
	l.leave()
	if n := l.resets.count(); n != 0 || !inst.mod.IsClosed() {
		t.Fatalf("a call that ended after Close: %d kept, its module closed %v", n, inst.mod.IsClosed())
	}
}

// TestPoolFillsBesideResets: a module whose used instances are reset
// never discards one, yet its pool still fills after the first call, so
// a burst of calls finds instances ready beyond the few reset ones (the
// pool once refilled only when a call discarded its instance, and
// BenchmarkCallPooled waited forever for it).
func TestPoolFillsBesideResets(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{PoolSize: 2})
	l := load(t, h, "snapreset.wasm", Module{})
	if !l.resetsOn() {
		t.Fatal("snapreset's instances are not reset: the test needs them to be")
	}
	probe(t, l, "a")
	probe(t, l, "b")
	if n := l.resets.count(); n == 0 {
		t.Fatal("no instance was kept reset")
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		l.pool.mu.Lock()
		n := len(l.pool.ready)
		l.pool.mu.Unlock()
		if n == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pool holds %d of 2 instances a minute after the first calls", n)
		}
	}
}

// TestHostCloseWaitsForBackgroundReset: a used instance is reset on a
// goroutine of its own after its call returned (keepReset). Host.Close
// (and the module's Close under it) does not end while such a reset is in
// progress, nor while the instance it no longer keeps is being closed:
// the host must not free the runtime under an instance still being reset
// or closed (a data race the race detector found under load when Close
// waited for the reset but not for the close after it).
func TestHostCloseWaitsForBackgroundReset(t *testing.T) {
	t.Parallel()
	var armed atomic.Bool
	type stop struct {
		stage string
		hold  chan struct{}
	}
	stops := make(chan stop, 1)
	h, _ := newTestHost(t, Options{PoolSize: -1, resetHook: func(stage string) {
		if armed.Load() {
			hold := make(chan struct{})
			stops <- stop{stage, hold}
			<-hold
		}
	}})
	var held []chan struct{}
	t.Cleanup(func() { // before the host's Close
		for _, c := range held {
			if c != nil {
				close(c)
			}
		}
	})
	next := func(want string) {
		t.Helper()
		select {
		case s := <-stops:
			held = append(held, s.hold)
			if s.stage != want {
				t.Fatalf("the reset stopped at %q, want %q", s.stage, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("the reset never reached %q", want)
		}
	}
	closeWithin := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return h.Close(ctx)
	}
	l := load(t, h, "snapreset.wasm", Module{})
	probe(t, l, "a") // the snapshot
	l.resets.count() // the first call's reset has ended
	armed.Store(true)
	kept, err := l.newInstance(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if !l.keepReset(kept) {
		t.Fatal("keepReset did not take the instance")
	}
	next("end") // reset, not yet kept
	if err := closeWithin(100 * time.Millisecond); err == nil {
		t.Fatal("Host.Close returned while a reset was in progress")
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		l.resets.mu.Lock()
		closing := l.resets.closed
		l.resets.mu.Unlock()
		if closing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Host.Close never reached the module's resets")
		}
	}
	close(held[0])
	held[0] = nil
	next("close") // the module is closing: the reset keeps nothing
	if kept.mod.IsClosed() {
		t.Fatal("the instance was closed before its reset ended")
	}
	if err := closeWithin(time.Second); err == nil {
		t.Fatal("Host.Close returned while the instance the reset held was still to close")
	}
	close(held[1])
	held = nil
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !kept.mod.IsClosed() {
		t.Error("Host.Close returned before the instance the reset held was closed")
	}
	if n := l.resets.count(); n != 0 {
		t.Errorf("%d reset instances kept after Close", n)
	}
}

// TestResetClearsTaint: an instance that served a tainted caller holds
// nothing of that call once reset, so the clean caller it serves next is
// not reported tainted (an instance kept as it is would taint it:
// TestReusedInstanceCarriesTaint).
func TestResetClearsTaint(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{PoolSize: -1})
	l := load(t, h, "snapreset.wasm", Module{})
	callAs(t, l, false, "probe", `{}`)
	callAs(t, l, true, "probe", `{"secret":"tainted-secret"}`)
	if !rec.last(t).Pooled {
		t.Fatal("the tainted call was not served by a reset instance")
	}
	res, reported := callAs(t, l, false, "probe", `{}`)
	if reported || strings.Contains(string(res.StructuredContent), "tainted-secret") {
		t.Errorf("the clean caller after a tainted one: taint reported %v, result %s", reported, res.StructuredContent)
	}
	if !rec.last(t).Pooled {
		t.Error("the clean call was not served by the reset instance")
	}
}

// TestResetRefusesUnfitInstances: whyNoReset, on its own (the call's
// failure already keeps these instances from a reset: this is the check
// behind it), refuses an instance whose call trapped, exited, spun to its
// time limit, was cancelled, passed the output limit, was refused memory,
// or changed its WASI state, and accepts one whose call returned well.
func TestResetRefusesUnfitInstances(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{PoolSize: -1})
	l := load(t, h, "snapreset.wasm", Module{Limits: Limits{Timeout: 2 * time.Second, Output: 1 << 10, Memory: 4 << 20}})
	probe(t, l, "warm")
	for _, how := range []string{"trap", "exit", "spin", "cancel", "flood", "grow", "wasi", "none"} {
		inst, _, err := l.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		args := fmt.Sprintf(`{"secret":"s","how":%q}`, how)
		if how == "cancel" {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			time.AfterFunc(100*time.Millisecond, cancel)
			args = `{"secret":"s","how":"spin"}`
		}
		_, _, err = inst.run(ctx, "attack", callInput{callPrefix("attack"), []byte(args), inputSuffix})
		why := inst.whyNoReset()
		if (why == "") != (how == "none") {
			t.Errorf("%s: run error %v, whyNoReset %q", how, err, why)
		}
		inst.close()
	}
}

// TestResetWASICommand: a WASI command's instance (its _start run at each
// call, the call on stdin, the result on stdout) is reset after a call
// that returned without proc_exit, when its guest changed no WASI state.
// Calls alternating between two variables, one set and one not, each get
// their own answer: nothing of the last call's input (wasi-libc's stdin
// buffer, the guard that makes _start refuse to run twice) carries over.
func TestResetWASICommand(t *testing.T) {
	t.Parallel()
	env := map[string]string{"API_TOKEN": "s3cret"}
	h, rec := newTestHost(t, Options{PoolSize: -1, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	l := load(t, h, "wasicmd.wasm", Module{Grants: grants(t, "env:API_TOKEN", "env:UNSET_ONE")})
	pooled := 0
	for i := range 6 {
		key, want := "API_TOKEN", "s3cret"
		if i%2 == 1 {
			key, want = "UNSET_ONE", "(unset)"
		}
		if got := call(t, l, "env", `{"key":"`+key+`"}`).Text(); got != want {
			t.Fatalf("call %d: env %s = %q, want %q", i, key, got, want)
		}
		if rec.last(t).Pooled {
			pooled++
		}
	}
	if !l.resetsOn() || pooled != 5 {
		t.Errorf("resets on %v; %d of the 5 calls after the first served by a reset instance", l.resetsOn(), pooled)
	}
}

// TestResetPerLoad: reset instances belong to one load (one module, grant
// set and config): two loads of snapreset with different config, called
// in turn, each find their own initialiser's state, call after call, and
// each is served by its own reset instances.
func TestResetPerLoad(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{PoolSize: -1})
	a := load(t, h, "snapreset.wasm", Module{Name: "a", Config: map[string]string{"mode": "alpha"}})
	b := load(t, h, "snapreset.wasm", Module{Name: "b", Config: map[string]string{"mode": "beta"}})
	for i := range 4 {
		for _, c := range []struct {
			l    *Loaded
			mode string
		}{{a, "alpha"}, {b, "beta"}} {
			if got := probe(t, c.l, "secret-of-"+c.mode); got.Mode != c.mode || got.Stash != "" {
				t.Errorf("call %d of %s found %+v", i, c.l.Name(), got)
			}
			if i > 0 && !rec.last(t).Pooled {
				t.Errorf("call %d of %s was not served by a reset instance", i, c.l.Name())
			}
		}
	}
}

// TestResetIdleBudget: reset instances waiting for a call are charged to
// the host's idle memory budget (Options.PoolMemory), as a pool's are: with
// no room, the instance is closed and the next call gets a new one.
func TestResetIdleBudget(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{PoolSize: -1, PoolMemory: 1})
	l := load(t, h, "snapreset.wasm", Module{})
	for i := range 3 {
		if got := probe(t, l, "s"); got != pristine {
			t.Fatalf("call %d found %+v", i, got)
		}
		if rec.last(t).Pooled || l.resets.count() != 0 {
			t.Fatalf("call %d: an instance kept past the idle budget", i)
		}
	}
}

// TestResetDeterministic: a deterministic module's instances are reset
// too, their fake clocks and generator put back to where the snapshot's
// stood (codemode's TestProgramFromSnapshotIsDeterministic shows a program
// in a reset instance reading the same clock and numbers as in a new one).
func TestResetDeterministic(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		opts Options
		m    Module
	}{{Options{PoolSize: -1, Deterministic: true}, Module{}}, {Options{PoolSize: -1}, Module{Deterministic: true}}} {
		h, rec := newTestHost(t, c.opts)
		l := load(t, h, "snapreset.wasm", c.m)
		if !l.resetsOn() {
			t.Fatal("a deterministic module's instances are not reset")
		}
		for i := range 3 {
			if got := probe(t, l, "s"); got != pristine {
				t.Fatalf("call %d found %+v", i, got)
			}
			if i > 0 && !rec.last(t).Pooled {
				t.Fatalf("call %d: not served by a reset instance", i)
			}
		}
	}
}
