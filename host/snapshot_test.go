package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// probeState is what snapsecret's probe reports of the instance it runs
// in, before it writes its caller's secret there.
type probeState struct {
	Stash, Global, Table, Init, Mode, High string
	Pages                                  int
}

// pristine is the state snapsecret's initialiser leaves: nothing in the
// stash, low or high, the global at "INIT", the table entry unchanged
// ("n"), the initialiser's marks in memory and in the pages it grew, and
// the memory at 4 pages (the 2 the module declares and the 2 its
// initialiser grew).
var pristine = probeState{Global: "INIT....", Table: "n", Init: "initheap", Pages: 4}

func probe(t testing.TB, l *Loaded, secret string) probeState {
	t.Helper()
	tl, _ := l.Tool("probe")
	res, err := tl.Call(context.Background(), toolCall("probe", fmt.Sprintf(`{"secret":%q}`, secret)))
	if err != nil || res.IsError {
		t.Errorf("probe: %v %+v", err, res)
		return probeState{}
	}
	var s probeState
	if err := json.Unmarshal(res.StructuredContent, &s); err != nil {
		t.Errorf("probe: %v in %s", err, res.StructuredContent)
	}
	return s
}

// snapshotOf returns l's snapshot, failing the test without one.
func snapshotOf(t testing.TB, l *Loaded) *snapshot {
	t.Helper()
	s := l.snaps.snap.Load()
	if s == nil {
		t.Fatalf("no snapshot (refused: %q)", l.snaps.refused)
	}
	return s
}

// holds reports whether the snapshot's bytes hold secret anywhere.
func (s *snapshot) holds(secret string) bool {
	return bytes.Contains(s.mem, []byte(secret)) || bytes.Contains(s.kmem, []byte(secret))
}

// TestSnapshotIsolation: snapsecret keeps each caller's secret in its
// memory, its global and its table. The first call's instance gives the
// module its snapshot, taken before the call's input arrived, so it holds
// no secret; every later instance starts from that snapshot, so each of
// 1 000 calls, one after another or eight at a time, from the caller's
// own instance or the pool's, finds the state the initialiser left and
// none of the secrets before it. Its 4 000 calls run before the parallel
// tests (it is not parallel itself), whose bounds on garbage collection
// pauses its allocations would stretch under the race detector.
func TestSnapshotIsolation(t *testing.T) {
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
			h, _ := newTestHost(t, Options{PoolSize: c.pool})
			l := load(t, h, "snapsecret.wasm", Module{})
			first := "first-caller-secret-0001"
			if got := probe(t, l, first); got != pristine {
				t.Fatalf("the first call found %+v, want %+v", got, pristine)
			}
			snap := snapshotOf(t, l)
			if snap.holds(first) {
				t.Fatal("the snapshot holds the first call's argument")
			}
			if !bytes.Contains(snap.mem, []byte("init")) {
				t.Fatal("the snapshot lacks the initialiser's state")
			}
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
			if l.snaps.snap.Load() != snap {
				t.Error("the snapshot was replaced")
			}
			if snap.holds(first) || snap.holds("secret-of-caller-") {
				t.Error("a call's argument reached the snapshot")
			}
		})
	}
}

// TestSnapshotGrownMemoryIsZero: memory an instance grows past its
// snapshot's size is zero, though the pages may have served an earlier
// instance that filled them with its caller's secret (the spares: the
// copy of the snapshot covers only the snapshot's size).
func TestSnapshotGrownMemoryIsZero(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{PoolSize: -1})
	l := load(t, h, "snapsecret.wasm", Module{})
	for i := range 20 {
		res := call(t, l, "grow", fmt.Sprintf(`{"pages":4,"fill":"grown-secret-%d"}`, i))
		var got struct{ Old, Dirty int64 }
		if err := json.Unmarshal(res.StructuredContent, &got); res.IsError || err != nil {
			t.Fatalf("grow: %+v %v", res, err)
		}
		if got.Dirty != 0 {
			t.Fatalf("call %d: %d bytes of the grown memory were not zero", i, got.Dirty)
		}
		if i > 0 && got.Old<<16 != int64(len(snapshotOf(t, l).mem)) {
			t.Errorf("call %d: the instance started with %d pages", i, got.Old)
		}
	}
}

// TestSnapshotMemoryLimit: an instance restored from a snapshot has the
// memory its initialisers grew to, charged to the module's memory limit
// as when they run; growing past the limit is refused, growing within it
// is not, and the call record's peak is the same with and without the
// snapshot.
func TestSnapshotMemoryLimit(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20 // 16 pages
	peaks := map[bool]int64{}
	for _, noSnap := range []bool{false, true} {
		h, rec := newTestHost(t, Options{PoolSize: -1})
		h.opts.noSnapshots = noSnap
		l := load(t, h, "snapsecret.wasm", Module{Limits: Limits{Memory: limit}})
		call(t, l, "probe", `{}`)
		if got := l.snaps.snap.Load() != nil; got == noSnap {
			t.Fatalf("snapshot taken %v with noSnapshots %v", got, noSnap)
		}
		var old struct{ Old int64 }
		res := call(t, l, "grow", `{"pages":1}`)
		if err := json.Unmarshal(res.StructuredContent, &old); res.IsError || err != nil || old.Old <= 0 {
			t.Fatalf("growing by a page: %+v %v", res, err)
		}
		have := old.Old // pages at the start of the call
		if s := l.snaps.snap.Load(); s != nil && int64(len(s.mem)) != have<<16 {
			t.Errorf("the instance started with %d pages, the snapshot has %d bytes", have, len(s.mem))
		}
		peaks[noSnap] = rec.last(t).MemoryPeak
		res = call(t, l, "grow", fmt.Sprintf(`{"pages":%d}`, limit>>16-have-1))
		if res.IsError || !strings.Contains(string(res.StructuredContent), fmt.Sprintf(`{"old":%d,`, have)) {
			t.Errorf("growing to a page under the limit: %+v", res)
		}
		res = call(t, l, "grow", fmt.Sprintf(`{"pages":%d}`, limit>>16-have+1))
		if !res.IsError || !strings.Contains(res.Text(), "memory limit") {
			t.Errorf("growing past the limit: %+v", res)
		}
		if rec.last(t).MemoryPeak > limit+h.kernel.initial {
			t.Errorf("peak %d past the limit %d", rec.last(t).MemoryPeak, limit)
		}
	}
	if peaks[false] != peaks[true] {
		t.Errorf("peak memory %d with the snapshot, %d without", peaks[false], peaks[true])
	}
}

// TestSnapshotPerLoad: snapsecret's initialiser reads its config into
// memory, so its state depends on what the module was loaded with. Each
// load has a snapshot of its own: two loads of the same module, with
// different config, the second made after the first has its snapshot,
// each see their own, call after call.
func TestSnapshotPerLoad(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{PoolSize: -1})
	a := load(t, h, "snapsecret.wasm", Module{Name: "a", Config: map[string]string{"mode": "alpha"}})
	if got := probe(t, a, "s"); got.Mode != "alpha" {
		t.Fatalf("mode %q, want alpha", got.Mode)
	}
	snapshotOf(t, a)
	// Loaded after a has its snapshot, as a module reloaded with other
	// grants is.
	b := load(t, h, "snapsecret.wasm", Module{Name: "b", Config: map[string]string{"mode": "beta"}})
	for i := range 3 {
		for _, c := range []struct {
			l    *Loaded
			mode string
		}{{a, "alpha"}, {b, "beta"}} {
			if got := probe(t, c.l, "s"); got.Mode != c.mode {
				t.Errorf("call %d of %s: mode %q, want %q", i, c.l.Name(), got.Mode, c.mode)
			}
		}
	}
	if snapshotOf(t, a) == snapshotOf(t, b) {
		t.Error("two loads share a snapshot")
	}
}

// TestSnapshotNotTakenWhenInitFails: an initialiser that traps gives no
// snapshot; every call fails with the trap, as without snapshots.
func TestSnapshotNotTakenWhenInitFails(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{PoolSize: -1})
	l := load(t, h, "snapsecret.wasm", Module{Config: map[string]string{"trap": "1"}})
	for range 3 {
		res := call(t, l, "probe", `{}`)
		if !res.IsError || !strings.Contains(res.Text(), "unreachable") {
			t.Errorf("a call whose initialiser traps: %+v", res)
		}
	}
	if l.snaps.snap.Load() != nil {
		t.Error("a snapshot of an instance whose initialiser trapped")
	}
}

// TestSnapshotRandomness: a Go guest's runtime draws randomness as it
// starts (hash seeds, math/rand's generator), which instances restored
// from one snapshot would share: it gets none unless the module allows
// it (Module.SharedSeeds). A deterministic module gets one, with or
// without it: its initialisers read the fixed clock and generator, which
// its snapshot keeps where they left them (TestFakeSourcesResume).
func TestSnapshotRandomness(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		opts Options
		m    Module
		want bool
	}{
		{"default", Options{}, Module{}, false},
		{"SharedSeeds", Options{}, Module{SharedSeeds: true}, true},
		{"deterministic", Options{Deterministic: true}, Module{}, true},
		{"Module.Deterministic", Options{}, Module{Deterministic: true}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.opts.PoolSize = -1
			h, _ := newTestHost(t, c.opts)
			l := load(t, h, "goecho.wasm", c.m)
			for i := range 3 {
				args := fmt.Sprintf(`{"n":%d}`, i)
				if res := call(t, l, "echo", args); res.IsError || string(res.StructuredContent) != args {
					t.Fatalf("echo: %+v", res)
				}
			}
			if got := l.snaps.snap.Load() != nil; got != c.want {
				t.Errorf("snapshot taken: %v, want %v (refused: %q)", got, c.want, l.snaps.refused)
			}
			if !c.want && c.name == "default" && !strings.Contains(l.snaps.refused, "randomness") {
				t.Errorf("refused for %q, want the randomness", l.snaps.refused)
			}
		})
	}
}

// TestSnapshotNotTakenAfterTheClock: an initialiser that read the clock
// (as one seeding a generator from it would) gives no snapshot by
// default, and one with Module.SharedSeeds or when the module declares it
// itself (snapseeds.wasm, snapsecret exporting autoagent_shared_seeds).
func TestSnapshotNotTakenAfterTheClock(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file   string
		shared bool
		want   bool
	}{
		{"snapsecret.wasm", false, false},
		{"snapsecret.wasm", true, true},
		{"snapseeds.wasm", false, true},
	} {
		h, _ := newTestHost(t, Options{PoolSize: -1})
		l := load(t, h, c.file, Module{Config: map[string]string{"clock": "1"}, SharedSeeds: c.shared})
		for range 2 {
			if got := probe(t, l, "s"); got != pristine {
				t.Errorf("%s: found %+v, want %+v", c.file, got, pristine)
			}
		}
		if got := l.snaps.snap.Load() != nil; got != c.want {
			t.Errorf("%s, SharedSeeds %v: snapshot taken %v (refused: %q)", c.file, c.shared, got, l.snaps.refused)
		}
		if !c.want && !strings.Contains(l.snaps.refused, "clock") {
			t.Errorf("%s: refused for %q, want the clock", c.file, l.snaps.refused)
		}
	}
}

// TestSnapshotConcurrentFirstCalls: many first calls at once each make
// an instance and run the initialisers; one of them gives the snapshot,
// which holds none of their arguments, and every call finds the
// initialiser's state.
func TestSnapshotConcurrentFirstCalls(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{PoolSize: -1})
	l := load(t, h, "snapsecret.wasm", Module{})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			if got := probe(t, l, fmt.Sprintf("racing-secret-%d", i)); got != pristine {
				t.Errorf("found %+v, want %+v", got, pristine)
			}
		})
	}
	wg.Wait()
	if snapshotOf(t, l).holds("racing-secret-") {
		t.Error("a call's argument reached the snapshot")
	}
}

// TestSnapshotNotTakenAfterTheFileSystem: an initialiser that looked a
// file up under its fs grant gives no snapshot, which would keep what it
// found then: each instance looks again, and sees the file appear.
func TestSnapshotNotTakenAfterTheFileSystem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h, _ := newTestHost(t, Options{PoolSize: -1})
	l := load(t, h, "snapsecret.wasm", Module{Grants: grants(t, "fs.read:"+dir), Config: map[string]string{"file": "later.txt"}})
	if got := probe(t, l, "s"); got.Mode != "" {
		t.Fatalf("mode %q before the file exists", got.Mode)
	}
	if err := os.WriteFile(filepath.Join(dir, "later.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := probe(t, l, "s"); got.Mode != "file" {
		t.Errorf("mode %q after the file appeared, want file", got.Mode)
	}
	if l.snaps.snap.Load() != nil || !strings.Contains(l.snaps.refused, "file system") {
		t.Errorf("snapshot taken %v, refused %q", l.snaps.snap.Load() != nil, l.snaps.refused)
	}
}

// TestFakeSourcesResume: a deterministic instance restored from a
// snapshot reads its clocks and generator on from where the snapshot's
// initialisers left them, as the instance that ran them does, not from
// their start: otherwise a program run in the one and run again in the
// other would not make the same calls.
func TestFakeSourcesResume(t *testing.T) {
	t.Parallel()
	read := func(f *fakeSources) string {
		sec, ns := f.walltime()
		p := make([]byte, 13) // odd: part of a generated word stays buffered
		_, _ = f.rand.Read(p)
		return fmt.Sprintf("%d.%09d %d %x", sec, ns, f.nanotime(), p)
	}
	ran := newFakeSources()
	initRead := read(ran) // what the initialisers read
	st := ran.state()
	want := read(ran) + read(ran)

	restored := newFakeSources()
	if err := restored.resume(st); err != nil {
		t.Fatal(err)
	}
	if got := read(restored) + read(restored); got != want {
		t.Errorf("restored instance read %q, the one that ran the initialisers %q", got, want)
	}
	if fresh := read(newFakeSources()); fresh != initRead || fresh == want[:len(fresh)] {
		t.Errorf("a fresh instance read %q, want %q (and not what follows)", fresh, initRead)
	}
}
