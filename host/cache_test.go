package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The child process of the cache tests and benchmarks: it loads a module
// (echo.wasm, or AUTOAGENT_HOST_CHILD_MODULE) with the cache directory
// from the environment and calls its echo tool once.
// The other tests share one compilation cache, so each module (the 3 MB
// Go guest above all) is compiled once per test run.
func TestMain(m *testing.M) {
	mainStart = time.Now()
	if dir := os.Getenv("AUTOAGENT_HOST_CHILD_CACHE"); dir != "" {
		os.Exit(childLoad(dir))
	}
	dir, err := os.MkdirTemp("", "autoagent-host-test-cache")
	if err != nil {
		panic(err)
	}
	testCacheDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

var (
	testCacheDir string
	mainStart    time.Time
)

func childLoad(dir string) int {
	ctx := context.Background()
	file := os.Getenv("AUTOAGENT_HOST_CHILD_MODULE")
	if file == "" {
		file = "echo.wasm"
	}
	b, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", file))
	if err != nil {
		return 3
	}
	h, err := New(ctx, Options{CacheDir: dir, KVDir: dir, PoolSize: -1})
	if err != nil {
		return 4
	}
	defer h.Close(ctx)
	l, err := h.Load(ctx, Module{Name: file, Bytes: b})
	if err != nil {
		os.Stderr.WriteString(err.Error())
		return 5
	}
	ready := time.Since(mainStart)
	tl, _ := l.Tool("echo")
	start := time.Now()
	res, err := tl.Call(ctx, toolCall("echo", `{"s":"cached"}`))
	if err != nil || res.Text() != `{"s":"cached"}` {
		return 6
	}
	// Read by BenchmarkNewProcess.
	fmt.Printf("ready_ns=%d call_ns=%d\n", ready.Nanoseconds(), time.Since(start).Nanoseconds())
	return 0
}

func runChild(t testing.TB, dir string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AUTOAGENT_HOST_CHILD_CACHE="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child process: %v: %s", err, out)
	}
}

// TestDiskCacheAcrossProcesses: a first process compiles and writes the
// cache; a second one loads from it; a corrupted entry is recompiled, not
// fatal.
func TestDiskCacheAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runChild(t, dir)
	var entries []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".db") {
			entries = append(entries, p)
		}
		return nil
	})
	if len(entries) == 0 {
		t.Fatal("the first process wrote no compiled code to the cache")
	}
	runChild(t, dir)
	for _, p := range entries {
		if err := os.WriteFile(p, []byte("garbage"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	runChild(t, dir)
}
