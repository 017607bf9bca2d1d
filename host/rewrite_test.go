package host

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/autoagent-go/autoagent/host/internal/rewrite"
	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
)

// TestMergeDataKeepsMemory: the Go guest's tens of thousands of data
// segments become a few, and the memory an instance starts with is the
// same byte for byte.
func TestMergeDataKeepsMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := wasmFile(t, "goecho.wasm")
	m, err := wasmbin.Validate(b, wasmbin.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	merged, err := rewrite.Apply(m, b, rewrite.Options{MergeData: true})
	if err != nil {
		t.Fatal(err)
	}
	if before, after := countDataSegments(t, b), countDataSegments(t, merged); before < 1000 || after > 16 {
		t.Fatalf("data segments: %d before, %d after merging", before, after)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	var memories [][]byte
	for i, bin := range [][]byte{b, merged} {
		cm, err := rt.CompileModule(ctx, bin)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			stubImports(t, rt, cm, envModule)
		}
		m, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
		if err != nil {
			t.Fatal(err)
		}
		mem, _ := m.Memory().Read(0, m.Memory().Size())
		memories = append(memories, bytes.Clone(mem))
	}
	if !bytes.Equal(memories[0], memories[1]) {
		t.Fatal("the merged module starts with different memory")
	}
}

func countDataSegments(t *testing.T, b []byte) uint32 {
	t.Helper()
	m, err := wasmbin.Validate(b, wasmbin.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return uint32(m.Data)
}

// stubImports registers module with a function for each of cm's imports
// from it, doing nothing.
func stubImports(t *testing.T, rt wazero.Runtime, cm wazero.CompiledModule, module string) {
	t.Helper()
	hb := rt.NewHostModuleBuilder(module)
	for _, f := range cm.ImportedFunctions() {
		if m, n, _ := f.Import(); m == module {
			hb.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(context.Context, []uint64) {}), f.ParamTypes(), f.ResultTypes()).Export(n)
		}
	}
	if _, err := hb.Instantiate(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestInterruptComputeBound: a loop-heavy and a call-heavy guest (naive
// recursion has calls and no loop on its hot path) both stop at the time
// limit, and the host goes on serving. The tight limit is the hostile
// calls' alone: the module is described by a sidecar, and fib(20) runs in
// a load with the default limit (at a load average of 25 the describe
// once took longer than 100 ms).
func TestInterruptComputeBound(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	sidecar := []byte(`{"tools":[{"name":"spin","description":"d","inputSchema":{"type":"object"}},{"name":"fib","description":"d","inputSchema":{"type":"object"}}]}`)
	tight := load(t, h, "compute.wasm", Module{Name: "compute-tight", Sidecar: sidecar, Limits: Limits{Timeout: 100 * time.Millisecond}})
	for _, c := range []struct{ tool, args string }{{"spin", `{"n":100000000000}`}, {"fib", `{"n":90}`}} {
		res := call(t, tight, c.tool, c.args)
		if !res.IsError || res.Text() != "tool exceeded its time limit of 100ms" {
			t.Errorf("%s: %+v", c.tool, res)
		}
	}
	l := load(t, h, "compute.wasm", Module{})
	if res := call(t, l, "fib", `{"n":20}`); res.IsError || res.Text() != "6765" {
		t.Errorf("fib(20) = %+v", res)
	}
	mustEcho(t, h)
}

// TestChargedBlocksKeepResults: scopes.wasm runs a function of every shape
// the stack budget charges differently (a loop, a block left by a return,
// an if, a wrapped body) and checks each result itself; it traps at the
// first wrong one, and outputs "ok" after the last.
func TestChargedBlocksKeepResults(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "scopes.wasm", Module{})
	if res := call(t, l, "scopes", `{}`); res.IsError || res.Text() != "ok" {
		t.Fatalf("scopes: %+v", res)
	}
}

// TestGuestDoesNotHoldUpGC: native code cannot be preempted, so a guest
// that never left it would stall every garbage collection of the process
// until it returned. The fuel checks exit to Go regularly: a collection
// completes while a guest spins.
func TestGuestDoesNotHoldUpGC(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "loop.wasm", Module{Limits: Limits{Timeout: time.Minute}})
	tl, _ := l.Tool("loop")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = tl.Call(ctx, toolCall("loop", `{}`))
	}()
	for l.busy() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // let the guest reach its loop
	runtime.GC()
	if l.busy() == 0 {
		t.Error("the collection waited for the spinning guest to end")
	}
	cancel() // the guest stops at its next yield
	<-done
}

// TestStartSectionInterrupted: a module's start function runs under the
// call's time limit (the rewrite makes it an export the host calls), so
// one that never returns cannot hang instantiation.
func TestStartSectionInterrupted(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l, err := h.Load(context.Background(), Module{
		Name:    "startloop",
		Bytes:   startLoopModule(),
		Sidecar: []byte(`{"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}`),
		Limits:  Limits{Timeout: 100 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	res := call(t, l, "t", `{}`)
	if !res.IsError || res.Text() != "tool exceeded its time limit of 100ms" {
		t.Fatalf("%+v", res)
	}
}

// TestKernelImportRefused: a guest may not import the kernel's own host
// functions.
func TestKernelImportRefused(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	_, err := h.Load(context.Background(), Module{Name: "sneaky", Bytes: importModule(goModule, "config_get")})
	var ie *ImportError
	if !errors.As(err, &ie) || ie.Import != goModule+".config_get" {
		t.Fatalf("Load: %v", err)
	}
}

// sec encodes one section of a module.
// appendU32 appends v in unsigned LEB128, as the binary format writes
// counts and indices.
func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func sec(id byte, body ...byte) []byte {
	return append(append([]byte{id}, appendU32(nil, uint32(len(body)))...), body...)
}

func wasmModule(sections ...[]byte) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range sections {
		b = append(b, s...)
	}
	return b
}

// startLoopModule: (func $s (loop (br 0))) (start $s) and an exported
// `call` returning 0.
func startLoopModule() []byte {
	return wasmModule(
		sec(1, 2, 0x60, 0, 0, 0x60, 0, 1, 0x7f), // types: () -> (), () -> i32
		sec(3, 2, 0, 1),                         // functions
		sec(7, 1, 4, 'c', 'a', 'l', 'l', 0, 1),  // export "call" = func 1
		sec(8, 0),                               // start = func 0
		sec(10, 2,
			7, 0, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // loop br 0 end end
			4, 0, 0x41, 0x00, 0x0b), // i32.const 0
	)
}

// importModule imports module.name () -> () and exports a `call`.
func importModule(module, name string) []byte {
	imp := []byte{1}
	imp = append(appendU32(imp, uint32(len(module))), module...)
	imp = append(appendU32(imp, uint32(len(name))), name...)
	imp = append(imp, 0, 0)
	return wasmModule(
		sec(1, 2, 0x60, 0, 0, 0x60, 0, 1, 0x7f),
		sec(2, imp...),
		sec(3, 1, 1),
		sec(7, 1, 4, 'c', 'a', 'l', 'l', 0, 1),
		sec(10, 1, 4, 0, 0x41, 0x00, 0x0b),
	)
}

// TestFreshInstanceUnderTheCallsDeadline: a call that makes its instance
// makes it under the call's own deadline, so the two together take no
// more than the time limit. A host function called from the module's
// start function and from its call sees the same deadline both times.
func TestFreshInstanceUnderTheCallsDeadline(t *testing.T) {
	t.Parallel()
	var (
		mu        sync.Mutex
		deadlines []time.Time
	)
	mark := Function{Namespace: "app", Name: "mark", Func: func(ctx context.Context, _ *Caller, _ []uint64) error {
		dl, _ := ctx.Deadline()
		mu.Lock()
		deadlines = append(deadlines, dl)
		mu.Unlock()
		return nil
	}}
	h, _ := newTestHost(t, Options{PoolSize: -1, Functions: []Function{mark}})
	imp := []byte{1, 3, 'a', 'p', 'p', 4, 'm', 'a', 'r', 'k', 0, 0}
	b := wasmModule(
		sec(1, 2, 0x60, 0, 0, 0x60, 0, 1, 0x7f), // types: () -> (), () -> i32
		sec(2, imp...),                          // import app.mark: () -> ()
		sec(3, 2, 0, 1),                         // functions
		sec(7, 1, 4, 'c', 'a', 'l', 'l', 0, 2),  // export "call" = func 2
		sec(8, 1),                               // start = func 1
		sec(10, 2,
			4, 0, 0x10, 0x00, 0x0b, // call mark
			6, 0, 0x10, 0x00, 0x41, 0x00, 0x0b), // call mark; i32.const 0
	)
	l, err := h.Load(t.Context(), Module{Name: "marks", Bytes: b, Grants: grants(t, "host:app.mark"),
		Sidecar: []byte(`{"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}`),
		Limits:  Limits{Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(t.Context())
	mu.Lock()
	deadlines = nil // describe's instance
	mu.Unlock()
	call(t, l, "t", `{}`) // its result (no output) does not matter here
	mu.Lock()
	defer mu.Unlock()
	if len(deadlines) != 2 || deadlines[0].IsZero() || !deadlines[0].Equal(deadlines[1]) {
		t.Fatalf("deadlines seen by the start function and the call: %v, want one and the same", deadlines)
	}
}
