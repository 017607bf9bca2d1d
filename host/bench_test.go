package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Benchmarks of DESIGN.md §9. Run with:
//
//	go test ./host -run '^$' -bench . -benchtime 2s
//
// The process-per-call baselines run in the same invocation, so the ratios
// compare like with like on the same machine.

func benchArgs(size int) string {
	pad := size - len(`{"pad":""}`)
	return `{"pad":"` + strings.Repeat("x", pad) + `"}`
}

func benchCall(b *testing.B, l *Loaded, name, args string) {
	b.Helper()
	tl, _ := l.Tool(name)
	c := toolCall(name, args)
	ctx := context.Background()
	b.SetBytes(int64(len(args)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := tl.Call(ctx, c)
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

func benchHost(b *testing.B, opts Options) *Host {
	b.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = testCacheDir
	}
	opts.KVDir = b.TempDir()
	h, err := New(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

func benchLoad(b *testing.B, h *Host, file string, m Module) *Loaded {
	b.Helper()
	m.Bytes = wasmFile(b, file)
	m.Name = file
	l, err := h.Load(context.Background(), m)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

// BenchmarkCallWarm: one instance serves every call (Module.Reuse): the
// host's own overhead per call (validation, JSON, kernel I/O) plus a
// trivial C guest.
func BenchmarkCallWarm(b *testing.B) {
	for _, size := range []int{100, 64 << 10} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			h := benchHost(b, Options{PoolSize: 1})
			l := benchLoad(b, h, "echo.wasm", Module{Reuse: true})
			benchCall(b, l, "echo", benchArgs(size))
		})
	}
}

// BenchmarkCallFresh: a new instance per call, instantiated by the caller
// (no pool).
func BenchmarkCallFresh(b *testing.B) {
	for _, c := range []struct{ name, file, tool string }{{"C", "echo.wasm", "echo"}, {"Go", "goecho.wasm", "echo"}} {
		b.Run(c.name, func(b *testing.B) {
			h := benchHost(b, Options{PoolSize: -1})
			l := benchLoad(b, h, c.file, Module{})
			benchCall(b, l, c.tool, benchArgs(100))
		})
	}
}

// BenchmarkCallPooled: a new instance per call, taken from the pool of
// pre-initialised instances that a goroutine refills.
func BenchmarkCallPooled(b *testing.B) {
	for _, c := range []struct{ name, file, tool string }{{"C", "echo.wasm", "echo"}, {"Go", "goecho.wasm", "echo"}} {
		b.Run(c.name, func(b *testing.B) {
			h := benchHost(b, Options{PoolSize: 8})
			l := benchLoad(b, h, c.file, Module{})
			benchCall(b, l, c.tool, benchArgs(100))
		})
	}
}

// BenchmarkNewProcess: a new process loads the 3 MB Go guest and calls it,
// compiling it (empty cache) or loading its machine code from the disk
// cache. Each iteration re-executes the test binary (see TestMain).
func BenchmarkNewProcess(b *testing.B) {
	run := func(b *testing.B, dir string) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "AUTOAGENT_HOST_CHILD_CACHE="+dir, "AUTOAGENT_HOST_CHILD_MODULE=goecho.wasm")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("child: %v %s", err, out)
		}
	}
	b.Run("ColdCompile", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			dir := b.TempDir()
			b.StartTimer()
			run(b, dir)
		}
	})
	b.Run("DiskCacheHit", func(b *testing.B) {
		dir := b.TempDir()
		run(b, dir)
		b.ResetTimer()
		for b.Loop() {
			run(b, dir)
		}
	})
	b.Run("EmptyChild", func(b *testing.B) {
		// The same child process doing nothing: the fixed cost of a process.
		for b.Loop() {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("child: %v %s", err, out)
			}
		}
	})
}

// BenchmarkDeadline: a compute-bound guest (10^6 xorshift rounds) with the
// runtime's close-on-deadline checks and without them.
func BenchmarkDeadline(b *testing.B) {
	for _, c := range []struct {
		name string
		off  bool
	}{{"Enforced", false}, {"Off", true}} {
		b.Run(c.name, func(b *testing.B) {
			h := benchHost(b, Options{PoolSize: 1, deadlines: map[bool]deadlineMode{true: deadlineOff, false: deadlineInterrupt}[c.off], CacheDir: b.TempDir()})
			l := benchLoad(b, h, "echo.wasm", Module{Reuse: true})
			benchCall(b, l, "spin", `{"n":1000000}`)
		})
	}
}

// BenchmarkProcessPerCall is the sandbox a WASM call replaces: one process
// per call, the call JSON on stdin.
func BenchmarkProcessPerCall(b *testing.B) {
	input := `{"params":{"name":"echo","arguments":` + benchArgs(100) + `}}`
	for _, c := range []struct {
		name string
		argv []string
	}{
		{"cat", []string{"/bin/cat"}},
		{"python3", []string{"/usr/bin/python3", "-I", "-c", "import sys, json; print(json.dumps(json.load(sys.stdin)))"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			if _, err := exec.LookPath(c.argv[0]); err != nil {
				b.Skipf("%s is not installed", c.argv[0])
			}
			for b.Loop() {
				cmd := exec.Command(c.argv[0], c.argv[1:]...)
				cmd.Stdin = strings.NewReader(input)
				if out, err := cmd.Output(); err != nil || len(out) == 0 {
					b.Fatalf("%v", err)
				}
			}
		})
	}
}
