package plugindir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/manifest"
)

// eventually polls cond until it holds or a generous deadline passes. The
// deadline only bounds a broken watcher; nothing asserts how fast it is.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// watching runs d.Watch until the test ends, collecting what it yields.
type watching struct {
	mu      sync.Mutex
	changes []Change
	errs    []error
	done    chan struct{}
}

func startWatch(t *testing.T, d *Dir) (*watching, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watching{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for ch, err := range d.Watch(ctx) {
			w.mu.Lock()
			if err != nil {
				w.errs = append(w.errs, err)
			} else {
				w.changes = append(w.changes, ch)
			}
			w.mu.Unlock()
		}
	}()
	stop := func() {
		cancel()
		select {
		case <-w.done:
		case <-time.After(15 * time.Second):
			t.Fatal("Watch did not return after its context ended")
		}
	}
	t.Cleanup(stop)
	return w, stop
}

func (w *watching) errors() []error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.errs)
}

func answer(t *testing.T, d *Dir, name string) string {
	t.Helper()
	tl, ok := d.Snapshot().Tool(name)
	if !ok {
		return "<absent>"
	}
	return callText(t, tl)
}

func TestWatchAddReplaceTamperRevokeRemove(t *testing.T) {
	e := newPDEnv(t)
	d := e.open(Options{Debounce: 20 * time.Millisecond})
	w, _ := startWatch(t, d)

	// Add: a file dropped in does nothing until approved.
	e.put("alpha.wasm", waTextModule("v1", "a1"), waSidecar(nil, "alpha"))
	eventually(t, "alpha listed as pending", func() bool { return statuses(d.Snapshot())["alpha.wasm"] == StatusPending })
	if len(d.Tools()) != 0 {
		t.Fatal("a pending module exposed tools")
	}
	e.approve("alpha.wasm", manifest.Limits{})
	eventually(t, "alpha approved and loaded", func() bool { return answer(t, d, "alpha") == "v1" })

	// Replace with approved new bytes.
	e.put("alpha.wasm", waTextModule("v2", "a2"), nil)
	e.approve("alpha.wasm", manifest.Limits{})
	eventually(t, "alpha replaced", func() bool { return answer(t, d, "alpha") == "v2" })

	// Tamper: unapproved bytes drop it to pending.
	e.put("alpha.wasm", waTextModule("v3", "a3"), nil)
	eventually(t, "tampered alpha pending", func() bool {
		return statuses(d.Snapshot())["alpha.wasm"] == StatusPending && answer(t, d, "alpha") == "<absent>"
	})

	// Back to approved bytes, then a revoke in the manifest.
	e.put("alpha.wasm", waTextModule("v2", "a2"), nil)
	eventually(t, "alpha approved again", func() bool { return answer(t, d, "alpha") == "v2" })
	if _, err := e.store.Revoke(context.Background(), manifest.Revocation{Target: "alpha", By: "test"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "revoked alpha pending", func() bool { return statuses(d.Snapshot())["alpha.wasm"] == StatusPending })

	// Remove.
	e.approve("alpha.wasm", manifest.Limits{})
	eventually(t, "alpha re-approved", func() bool { return answer(t, d, "alpha") == "v2" })
	e.remove("alpha.wasm")
	eventually(t, "alpha gone", func() bool { _, ok := d.Snapshot().Plugin("alpha.wasm"); return !ok && len(d.Tools()) == 0 })

	if errs := w.errors(); len(errs) != 0 {
		t.Errorf("watch errors: %v", errs)
	}
	w.mu.Lock()
	n := len(w.changes)
	w.mu.Unlock()
	if n == 0 {
		t.Error("Watch yielded no change")
	}
}

func TestWatchCorruptManifestKeepsTools(t *testing.T) {
	e := newPDEnv(t)
	e.put("alpha.wasm", waTextModule("v1", "a1"), waSidecar(nil, "alpha"))
	e.approve("alpha.wasm", manifest.Limits{})
	d := e.open(Options{Debounce: 20 * time.Millisecond})
	w, _ := startWatch(t, d)
	if err := os.WriteFile(e.store.Path, []byte(`{"version": 1, "tools": {"x"`), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the corrupt manifest reported", func() bool {
		for _, err := range w.errors() {
			var pe *manifest.ParseError
			if errors.As(err, &pe) {
				return true
			}
		}
		return false
	})
	if answer(t, d, "alpha") != "v1" {
		t.Error("a corrupt manifest dropped the approved tools")
	}
}

func TestWatchEndsWithContextAndLeavesNoGoroutine(t *testing.T) {
	e := newPDEnv(t)
	d := e.open(Options{Debounce: 10 * time.Millisecond})
	base := runtime.NumGoroutine()
	_, stop := startWatch(t, d)
	e.put("alpha.wasm", waTextModule("v1", "a1"), waSidecar(nil, "alpha"))
	eventually(t, "alpha listed", func() bool { _, ok := d.Snapshot().Plugin("alpha"); return ok })
	stop()
	eventually(t, "goroutines back to their number before Watch", func() bool { return runtime.NumGoroutine() <= base })
}

func TestWatchStopsWhenYieldReturnsFalse(t *testing.T) {
	e := newPDEnv(t)
	d := e.open(Options{Debounce: 10 * time.Millisecond})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range d.Watch(context.Background()) {
			return
		}
	}()
	// Whenever Watch starts, the file is a change it yields: its first
	// reload finds it, or (added after the directory is watched) an event.
	e.put("alpha.wasm", waTextModule("v1", "a1"), waSidecar(nil, "alpha"))
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Watch went on after yield returned false")
	}
}

func TestWatchMissingDirectory(t *testing.T) {
	e := newPDEnv(t)
	d, err := Open(context.Background(), e.h, Options{Dir: filepath.Join(e.dir, "nope")})
	if err != nil {
		t.Fatal(err)
	}
	var got error
	for _, err := range d.Watch(context.Background()) {
		got = err
	}
	if got == nil {
		t.Error("Watch of a missing directory yielded no error")
	}
}

// A manifest reached through a symbolic link is rewritten in the link's
// target directory; the watcher follows it there.
func TestWatchManifestBehindSymlink(t *testing.T) {
	e := newPDEnv(t)
	realDir := t.TempDir()
	realManifest := filepath.Join(realDir, "manifest.json")
	if err := os.WriteFile(realManifest, []byte(`{"version": 1, "tools": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(realManifest, e.store.Path); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	e.put("alpha.wasm", waTextModule("v1", "a1"), waSidecar(nil, "alpha"))
	d := e.open(Options{Debounce: 20 * time.Millisecond})
	startWatch(t, d)
	e.approve("alpha.wasm", manifest.Limits{})
	eventually(t, "alpha approved through the linked manifest", func() bool { return answer(t, d, "alpha") == "v1" })
}
