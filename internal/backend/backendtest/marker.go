package backendtest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// markerWait bounds the wait for a marker: a missing marker is a defect,
// not slowness, so the bound is generous.
const markerWait = 20 * time.Second

// Mark leaves the marker name in dir (nothing when dir is empty). A test
// backend calls it; the test waits for it with [WaitForMarker].
func Mark(dir, name string) {
	if dir != "" {
		_ = os.WriteFile(filepath.Join(dir, name), []byte("1"), 0o644)
	}
}

// WaitForMarker waits until the marker name appears in dir, failing the
// test when it does not.
func WaitForMarker(t testing.TB, dir, name string) {
	t.Helper()
	deadline := time.Now().Add(markerWait)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("backend never marked %q", name)
}
