package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/jsonvalue"
)

// Benchmarks of docs/ARCHITECTURE.md §9. Run with:
//
//	go test ./host -run '^$' -bench . -benchtime 2s -count 5
//
// Besides ns/op (wall time), each reports cpu-ns/op: the CPU time the
// process (and its children, for the process benchmarks) spent per
// operation, background refills and garbage collection included. On a
// shared machine wall time mostly measures the other processes; CPU time
// does not. The process-per-call baselines run in the same invocation, so
// the ratios compare like with like.

// cpuMeter reports CPU time per operation for a benchmark.
type cpuMeter struct {
	b     *testing.B
	start time.Duration
}

func meterCPU(b *testing.B) *cpuMeter { return &cpuMeter{b, processCPU()} }

func (m *cpuMeter) report() {
	if used := processCPU() - m.start; used > 0 && m.b.N > 0 {
		m.b.ReportMetric(float64(used.Nanoseconds())/float64(m.b.N), "cpu-ns/op")
	}
}

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
	// The set-up's garbage (compiling, verifying) is collected now, not
	// by background workers while the calls are timed.
	runtime.GC()
	b.ResetTimer()
	cpu := meterCPU(b)
	for b.Loop() {
		res, err := tl.Call(ctx, c)
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
	}
	cpu.report()
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

var guests = []struct{ name, file string }{{"C", "echo.wasm"}, {"Go", "goecho.wasm"}}

// BenchmarkCallWarm: one instance serves every call (Module.Reuse): the
// host's work per call (validation, input, kernel I/O, result parsing,
// record) plus an echo guest, for 100 B and 64 KiB of arguments (the
// result, text and structured content, is twice that).
func BenchmarkCallWarm(b *testing.B) {
	for _, g := range guests {
		for _, size := range []int{100, 64 << 10} {
			b.Run(fmt.Sprintf("%s/%dB", g.name, size), func(b *testing.B) {
				h := benchHost(b, Options{PoolSize: 1})
				l := benchLoad(b, h, g.file, Module{Reuse: true})
				benchCall(b, l, "echo", benchArgs(size))
			})
		}
	}
}

// BenchmarkHostJSON: the host's JSON work of a warm echo call without the
// guest: the arguments checked (a schema that accepts any object) and the
// echo's result decoded (its text unquoted, its structured content
// checked and copied). CallWarm minus GuestRun is mostly this.
func BenchmarkHostJSON(b *testing.B) {
	for _, size := range []int{100, 64 << 10} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			args := []byte(benchArgs(size))
			text, _ := json.Marshal(string(args))
			out := fmt.Appendf(nil, `{"content":[{"type":"text","text":%s}],"structuredContent":%s}`, text, args)
			b.SetBytes(int64(len(args)))
			b.ReportAllocs()
			runtime.GC()
			b.ResetTimer()
			cpu := meterCPU(b)
			for b.Loop() {
				if !jsonvalue.IsObject(args) {
					b.Fatal("arguments rejected")
				}
				r, err := parseResult(out, nil)
				if err != nil || len(r.StructuredContent) != len(args) || len(r.Content[0].Text) != len(args) {
					b.Fatalf("%v %+v", err, r)
				}
			}
			cpu.report()
		})
	}
}

// BenchmarkGuestRun: the same calls without the host's per-call work:
// input copied into the warm instance, the guest run, its output located.
// CallWarm minus GuestRun is the host's overhead per call.
func BenchmarkGuestRun(b *testing.B) {
	for _, g := range guests {
		for _, size := range []int{100, 64 << 10} {
			b.Run(fmt.Sprintf("%s/%dB", g.name, size), func(b *testing.B) {
				h := benchHost(b, Options{PoolSize: -1})
				l := benchLoad(b, h, g.file, Module{})
				inst, err := l.newInstance(context.Background(), false)
				if err != nil {
					b.Fatal(err)
				}
				defer inst.close()
				args := benchArgs(size)
				in := callInput{callPrefix("echo"), []byte(args), inputSuffix}
				ctx := context.Background()
				b.SetBytes(int64(len(args)))
				b.ReportAllocs()
				b.ResetTimer()
				cpu := meterCPU(b)
				for b.Loop() {
					out, failure, err := inst.run(ctx, "echo", in)
					if err != nil || failure != "" || len(out) < 2*len(args) {
						b.Fatalf("%v %s %d", err, failure, len(out))
					}
				}
				cpu.report()
			})
		}
	}
}

// BenchmarkCallFresh: a new instance per call, instantiated by the caller
// (no pool). An instance starts from the module's snapshot where it has
// one: not the C guest's, which has no initialiser; the Go guest's only
// with Module.SharedSeeds (its runtime draws randomness as it starts),
// Go/SharedSeeds, whose used instances are then reset to the snapshot
// for the next call (Go/SharedSeedsNoReset: closed, and the next call's
// restored from the snapshot, as before resets). The Initialise variants
// run the initialisers in every instance, as the host did before
// snapshots.
func BenchmarkCallFresh(b *testing.B) {
	for _, g := range []struct {
		name, file string
		m          Module
		noSnap     bool
	}{
		{"C", "echo.wasm", Module{}, false},
		{"Go", "goecho.wasm", Module{}, false},
		{"Go/SharedSeeds", "goecho.wasm", Module{SharedSeeds: true}, false},
		{"Go/SharedSeedsNoReset", "goecho.wasm", Module{SharedSeeds: true}, false},
		{"C/Initialise", "echo.wasm", Module{}, true},
		{"Go/Initialise", "goecho.wasm", Module{}, true},
	} {
		b.Run(g.name, func(b *testing.B) {
			h := benchHost(b, Options{PoolSize: -1})
			h.opts.noSnapshots = g.noSnap
			h.opts.noResets = strings.HasSuffix(g.name, "NoReset")
			l := benchLoad(b, h, g.file, g.m)
			benchCall(b, l, "echo", benchArgs(100))
			// The C guest's snapshot is the state its instantiation
			// leaves, for resets; the Go guest gets none without
			// SharedSeeds.
			if on, want := l.snaps.snap.Load() != nil, !g.noSnap && g.name != "Go"; on != want {
				b.Fatalf("snapshot taken: %v, want %v (%s)", on, want, l.snaps.refused)
			}
			if s := l.snaps.snap.Load(); s != nil {
				b.Logf("snapshot %d + %d bytes", len(s.mem), len(s.kmem))
			}
		})
	}
}

// BenchmarkCallPooled: a new instance per call, taken from the pool of
// pre-initialised instances. Between calls the timer stops until the pool
// has refilled: this is the latency a caller sees when calls are not back
// to back (the usual case for an agent, which waits for a model between
// tool calls).
func BenchmarkCallPooled(b *testing.B) {
	for _, g := range guests {
		b.Run(g.name, func(b *testing.B) {
			h := benchHost(b, Options{PoolSize: 2})
			l := benchLoad(b, h, g.file, Module{})
			tl, _ := l.Tool("echo")
			c := toolCall("echo", benchArgs(100))
			ctx := context.Background()
			var rec CallRecord
			h.opts.OnCall = func(_ context.Context, r CallRecord) { rec = r }
			// The pool makes instances only after the module's first call.
			if res, err := tl.Call(ctx, c); err != nil || res.IsError {
				b.Fatalf("%v %+v", err, res)
			}
			b.ReportAllocs()
			pooled := 0
			for b.Loop() {
				b.StopTimer()
				l.pool.waitFull()
				b.StartTimer()
				if res, err := tl.Call(ctx, c); err != nil || res.IsError {
					b.Fatalf("%v %+v", err, res)
				}
				if rec.Pooled {
					pooled++
				}
			}
			if pooled != b.N {
				b.Fatalf("%d of %d calls were served by the pool", pooled, b.N)
			}
		})
	}
}

// BenchmarkCallPooledBackToBack: calls one after another with no pause,
// so the pool refills while calls run: throughput is bound by
// instantiation, and the refill must not slow the caller down.
func BenchmarkCallPooledBackToBack(b *testing.B) {
	for _, g := range guests {
		b.Run(g.name, func(b *testing.B) {
			h := benchHost(b, Options{PoolSize: 2})
			l := benchLoad(b, h, g.file, Module{})
			// The pool makes instances only after the module's first call.
			tl, _ := l.Tool("echo")
			if res, err := tl.Call(context.Background(), toolCall("echo", benchArgs(100))); err != nil || res.IsError {
				b.Fatalf("%v %+v", err, res)
			}
			l.pool.waitFull()
			benchCall(b, l, "echo", benchArgs(100))
		})
	}
}

// BenchmarkNewProcess: a new process loads the 3 MB Go guest and calls it,
// compiling it (empty cache) or loading its machine code from the disk
// cache. Each iteration re-executes the test binary (see TestMain), which
// reports ready-ms: the time from its TestMain to a loaded module (host
// created, module compiled or read from the cache, described), and
// call-ms: its first call. EmptyChild is the same process doing nothing.
func BenchmarkNewProcess(b *testing.B) {
	run := func(b *testing.B, dir string) {
		b.Helper()
		var ready, firstCall time.Duration
		cpu := meterCPU(b)
		for b.Loop() {
			b.StopTimer()
			d := dir
			if d == "" {
				d = b.TempDir()
			}
			b.StartTimer()
			r, c := runChildProcess(b, d, "goecho.wasm")
			ready += r
			firstCall += c
		}
		cpu.report()
		b.ReportMetric(float64(ready.Microseconds())/1e3/float64(b.N), "ready-ms")
		b.ReportMetric(float64(firstCall.Microseconds())/1e3/float64(b.N), "call-ms")
	}
	b.Run("ColdCompile", func(b *testing.B) { run(b, "") })
	b.Run("DiskCacheHit", func(b *testing.B) {
		dir := b.TempDir()
		runChildProcess(b, dir, "goecho.wasm")
		b.ResetTimer()
		run(b, dir)
	})
	b.Run("EmptyChild", func(b *testing.B) {
		cpu := meterCPU(b)
		for b.Loop() {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("child: %v %s", err, out)
			}
		}
		cpu.report()
	})
}

// runChildProcess runs the child of TestMain and returns the times it
// reports.
func runChildProcess(tb testing.TB, dir, module string) (ready, call time.Duration) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AUTOAGENT_HOST_CHILD_CACHE="+dir, "AUTOAGENT_HOST_CHILD_MODULE="+module)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("child: %v %s", err, stderr.Bytes())
	}
	for _, f := range strings.Fields(string(out)) {
		k, v, _ := strings.Cut(f, "=")
		ns, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "ready_ns":
			ready = time.Duration(ns)
		case "call_ns":
			call = time.Duration(ns)
		}
	}
	if ready == 0 {
		tb.Fatalf("child reported nothing: %q", out)
	}
	return ready, call
}

// BenchmarkDeadline: compute-bound guests under each way of enforcing the
// time limit: the host's fuel checks (Interrupt, the default), wazero's
// close-on-context-done (Runtime) and nothing at all (Off). Loop is a
// tight loop (10^6 rounds of xorshift), Calls naive recursion (fib(25),
// 250 000 calls, no loop on the hot path).
func BenchmarkDeadline(b *testing.B) {
	for _, mode := range []struct {
		name string
		mode deadlineMode
	}{{"Interrupt", deadlineInterrupt}, {"Runtime", deadlineRuntime}, {"Off", deadlineOff}} {
		for _, w := range []struct{ name, tool, args string }{{"Loop", "spin", `{"n":1000000}`}, {"Calls", "fib", `{"n":25}`}} {
			b.Run(w.name+"/"+mode.name, func(b *testing.B) {
				h := benchHost(b, Options{PoolSize: 1, deadlines: mode.mode})
				l := benchLoad(b, h, "compute.wasm", Module{Reuse: true})
				benchCall(b, l, w.tool, w.args)
			})
		}
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
			cpu := meterCPU(b)
			for b.Loop() {
				cmd := exec.Command(c.argv[0], c.argv[1:]...)
				cmd.Stdin = strings.NewReader(input)
				if out, err := cmd.Output(); err != nil || len(out) == 0 {
					b.Fatalf("%v", err)
				}
			}
			cpu.report()
		})
	}
}

// BenchmarkInstantiate: making a fresh instance of a module ready for a
// call, and closing it: the part of CallFresh a snapshot saves, for the
// C and Go echo guests and the JavaScript engine of synth and code mode
// (when $AUTOAGENT_JS_ENGINE names it). Snapshot variants restore the
// module's snapshot (the Go ones with Module.SharedSeeds: their runtime
// draws randomness as it starts); Initialise variants run the
// initialisers, as the host did before snapshots; Reset variants reset a
// used instance to the snapshot (what a fresh instance costs where the
// module's instances may be reset: Loaded.resetsOn). The C guest has no
// initialiser: its snapshot, for resets only, is what instantiation
// leaves.
func BenchmarkInstantiate(b *testing.B) {
	files := [][2]string{{"C", "echo.wasm"}, {"Go", "goecho.wasm"}}
	if p := os.Getenv("AUTOAGENT_JS_ENGINE"); p != "" {
		files = append(files, [2]string{"JS", p})
	}
	for _, f := range files {
		for _, mode := range []string{"Snapshot", "Initialise", "Reset"} {
			b.Run(f[0]+"/"+mode, func(b *testing.B) {
				h := benchHost(b, Options{PoolSize: -1})
				h.opts.noSnapshots = mode == "Initialise"
				h.opts.noResets = mode != "Reset"
				m := Module{SharedSeeds: true, Name: f[0]}
				if f[0] == "JS" {
					bs, err := os.ReadFile(f[1])
					if err != nil {
						b.Fatal(err)
					}
					m.Bytes = bs
					m.Sidecar = []byte(`{"tools":[{"name":"check","description":"checks a script","inputSchema":{"type":"object"}}]}`)
					m.Config = map[string]string{"script": "function run() { return 1 }"}
				} else {
					m.Bytes = wasmFile(b, f[1])
				}
				l, err := h.Load(context.Background(), m)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = l.Close(context.Background()) })
				ctx := context.Background()
				first, err := l.newInstance(ctx, false)
				if err != nil {
					b.Fatal(err)
				}
				first.close()
				// The C guest has no initialiser: nothing to restore, but
				// the state its instantiation leaves to reset to.
				if got := l.snaps.snap.Load() != nil; got != (mode == "Reset" || mode == "Snapshot" && f[0] != "C") {
					b.Fatalf("snapshot taken: %v (refused: %q)", got, l.snaps.refused)
				}
				b.ReportAllocs()
				var inst *instance
				if mode == "Reset" {
					if inst, err = l.newInstance(ctx, false); err != nil {
						b.Fatal(err)
					}
					defer func() { inst.close() }()
				}
				runtime.GC()
				b.ResetTimer()
				cpu := meterCPU(b)
				for b.Loop() {
					if mode == "Reset" {
						if !l.keepReset(inst) {
							b.Fatalf("not reset: %s", inst.whyNoReset())
						}
						inst = l.resets.get(h, true)
						continue
					}
					inst, err := l.newInstance(ctx, false)
					if err != nil {
						b.Fatal(err)
					}
					inst.close()
				}
				cpu.report()
			})
		}
	}
}
