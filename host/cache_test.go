package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/testcache"
	"github.com/autoagent-go/autoagent/manifest"
)

// The child process of the cache tests and benchmarks: it loads a module
// (echo.wasm, or AUTOAGENT_HOST_CHILD_MODULE) with the cache directory
// from the environment and calls its echo tool once.
//
// The other tests share one compilation cache, so each module (the 3 MB
// Go guest above all, which takes seconds to compile under -race) is
// compiled once per test run, and, when the user cache directory is
// writable, once per version of wazero: only the compiled code is kept
// across runs (see internal/testcache).
func TestMain(m *testing.M) {
	mainStart = time.Now()
	if dir := os.Getenv("AUTOAGENT_HOST_CHILD_CACHE"); dir != "" {
		os.Exit(childLoad(dir))
	}
	if name := os.Getenv(survivalEnv); name != "" {
		os.Exit(survivalChild(name))
	}
	cache, err := testcache.Open(filepath.Join("..", "go.sum"), "host-tests")
	if err != nil {
		panic(err)
	}
	testCacheDir = cache.Dir
	code := m.Run()
	_ = cache.Close()
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
	if prof := os.Getenv("AUTOAGENT_HOST_CHILD_PROFILE"); prof != "" {
		// For looking into a new process's start-up with go tool pprof.
		f, err := os.Create(prof)
		if err != nil {
			return 7
		}
		defer f.Close()
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
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

// TestArtifactsCache: a large module's rewritten bytes and describe
// document are kept on disk and used by the next host; unreadable ones are
// recomputed, not fatal.
func TestArtifactsCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	b := wasmFile(t, "goecho.wasm")
	loadOnce := func() Description {
		t.Helper()
		// The compiled code comes from the tests' shared cache (compiling
		// the Go guest takes seconds under -race); the artifacts go to dir.
		h, err := New(ctx, Options{CacheDir: testCacheDir, KVDir: t.TempDir(), PoolSize: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(ctx)
		h.artifacts = artifacts{dir: dir}
		l, err := h.Load(ctx, Module{Name: "goecho", Bytes: b})
		if err != nil {
			t.Fatal(err)
		}
		if res := call(t, l, "upper", `{"s":"cached"}`); res.Text() != "CACHED" {
			t.Fatalf("upper: %+v", res)
		}
		return l.Describe()
	}
	first := loadOnce()
	kinds := map[string][]string{}
	for _, kind := range []string{"prepared", "describe"} {
		files, _ := filepath.Glob(filepath.Join(dir, kind, "*"))
		if len(files) != 1 {
			t.Fatalf("%s: %d files cached, want 1", kind, len(files))
		}
		kinds[kind] = files
	}
	if got, _ := os.ReadFile(kinds["describe"][0]); !strings.Contains(string(got), `"upper"`) {
		t.Fatalf("cached describe document: %s", got)
	}
	// The next host takes the describe document from the cache rather
	// than running describe: an edit to the cached file shows.
	cached, _ := os.ReadFile(kinds["describe"][0])
	marked := strings.Replace(string(cached), "Upper-cases a string.", "From the cache.", 1)
	if marked == string(cached) {
		t.Fatalf("cached describe document without the upper tool's description: %s", cached)
	}
	if err := os.WriteFile(kinds["describe"][0], []byte(marked), 0o600); err != nil {
		t.Fatal(err)
	}
	second := loadOnce()
	if len(second.Tools) != len(first.Tools) || second.Tools[1].Description != "From the cache." {
		t.Fatalf("the second host did not use the cached describe document: %+v", second)
	}
	if err := os.WriteFile(kinds["describe"][0], cached, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, files := range kinds {
		if err := os.WriteFile(files[0], []byte("garbage"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if third := loadOnce(); !reflect.DeepEqual(first, third) {
		t.Fatalf("describe after corrupting the cache differs:\n%+v\n%+v", first, third)
	}
	if got, _ := os.ReadFile(kinds["describe"][0]); string(got) == "garbage" {
		t.Error("the corrupted describe document was not replaced")
	}
}

// TestUnwritableCacheCompilesWithoutIt: a compilation cache that cannot
// be written (a full disk, a read-only directory; here, as root ignores
// permissions, a file where wazero's directory was) costs the next
// process a compilation, never a module. It is logged once, and nothing
// of each module compiled stays in memory after it is released.
func TestUnwritableCacheCompilesWithoutIt(t *testing.T) {
	for _, c := range []struct {
		name     string
		breakDir func(version string) error
	}{
		// Entries cannot be opened (ENOTDIR), nor written.
		{"a file where the directory was", func(v string) error { return os.WriteFile(v, []byte("not a directory"), 0o600) }},
		// Entries are absent, and cannot be written (ENOENT).
		{"a link to nowhere", func(v string) error { return os.Symlink(filepath.Join(filepath.Dir(v), "gone"), v) }},
	} {
		t.Run(c.name, func(t *testing.T) { testUnwritableCache(t, c.breakDir) })
	}
}

func testUnwritableCache(t *testing.T, breakDir func(string) error) {
	dir := t.TempDir()
	logs := &captureHandler{}
	h, _ := newTestHost(t, Options{CacheDir: dir, Logger: slog.New(logs), PoolSize: -1})
	versions, _ := filepath.Glob(filepath.Join(dir, "wazero-*"))
	if len(versions) != 1 {
		t.Fatalf("wazero's cache directories: %v", versions)
	}
	if err := os.RemoveAll(versions[0]); err != nil {
		t.Fatal(err)
	}
	if err := breakDir(versions[0]); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"echo.wasm", "compute.wasm"} {
		l := load(t, h, file, Module{})
		res := call(t, l, l.Tools()[0].Spec().Name, `{}`)
		if res.IsError && strings.Contains(res.Text(), "compil") {
			t.Fatalf("%s: %s", file, res.Text())
		}
		_ = l.Close(t.Context())
	}
	if n := logs.count("compilation cache cannot be written"); n != 1 {
		t.Errorf("the failure was logged %d times, want once:\n%s", n, logs.text())
	}

	// Modules compiled and released leave no machine code mapped: each
	// takes at least a page.
	before := executableBytes(t)
	for k := range 20 {
		mod := wasmModule(sec(1, 1, 0x60, 0, 1, 0x7f), sec(3, 1, 0), sec(10, 1, 4, 0, 0x41, byte(k), 0x0b))
		e, err := h.compile(t.Context(), manifest.Sum(mod), mod, 1<<20)
		if err == nil {
			h.release(e)
		} else if !errors.Is(err, ErrNoABI) {
			t.Fatalf("module %d: %v", k, err)
		}
	}
	for range 3 {
		runtime.GC()
	}
	if after := executableBytes(t); after > before+8<<12 {
		t.Errorf("%d bytes of executable mappings after compiling and releasing 20 modules, %d before: their code stays in memory", after, before)
	}
}

// executableBytes sums the process's anonymous executable memory
// mappings, where wazero keeps compiled code (adjacent ones merge, so
// their number says less).
func executableBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps: the mappings cannot be measured here")
	}
	var n int64
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) != 5 || !strings.Contains(f[1], "x") || f[4] != "0" {
			continue
		}
		var lo, hi int64
		if _, err := fmt.Sscanf(f[0], "%x-%x", &lo, &hi); err == nil {
			n += hi - lo
		}
	}
	return n
}

// captureHandler keeps the messages of the records it handles.
type captureHandler struct {
	mu   sync.Mutex
	msgs []string
}

func (c *captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (c *captureHandler) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, r.Message)
	return nil
}
func (c *captureHandler) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *captureHandler) WithGroup(string) slog.Handler      { return c }

func (c *captureHandler) count(sub string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.msgs {
		if strings.Contains(m, sub) {
			n++
		}
	}
	return n
}

func (c *captureHandler) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.msgs, "\n")
}
