package pyenginetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkoutWith makes a checkout whose build.sh --check exits with rc, and
// (when engine) holds an engine file; it chdirs there.
func checkoutWith(t *testing.T, rc string, engine bool) string {
	dir := t.TempDir()
	build := filepath.Join(dir, "codemode", "pyprogram", "build", "build.sh")
	if err := os.MkdirAll(filepath.Dir(build), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(build, []byte("exit "+rc+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if engine {
		p := filepath.Join(dir, ".cache", "python", "pyengine.wasm")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("\x00asm"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv(Env, "")
	return dir
}

// A missing engine, and one older than its sources, fail with the command
// that builds it; an up-to-date one is found.
func TestFind(t *testing.T) {
	checkoutWith(t, "0", false)
	if _, err := find(); err == nil || !strings.Contains(err.Error(), "is not built: run `make python-engine`") {
		t.Fatalf("missing: %v", err)
	}
	checkoutWith(t, "1", true)
	if _, err := find(); err == nil || !strings.Contains(err.Error(), "older than its sources") || !strings.Contains(err.Error(), "make python-engine") {
		t.Fatalf("stale: %v", err)
	}
	dir := checkoutWith(t, "0", true)
	if p, err := find(); err != nil || p != filepath.Join(dir, ".cache", "python", "pyengine.wasm") {
		t.Fatalf("up to date: %q %v", p, err)
	}
	t.Setenv(Env, "/nonexistent/pyengine.wasm")
	if _, err := find(); err == nil || !strings.Contains(err.Error(), Env) {
		t.Fatalf("a missing $%s: %v", Env, err)
	}
}
