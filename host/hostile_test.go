package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// TestHostileCalls runs each hostile module of testdata/wasm and checks
// the call ends with an error that names the cause, the outcome the trace
// records, and that the host keeps serving.
func TestHostileCalls(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		file    string
		limits  Limits
		tool    string
		args    string
		want    string
		outcome Outcome
	}{
		{"infinite loop", "loop.wasm", Limits{Timeout: 300 * time.Millisecond}, "loop", `{}`,
			"tool exceeded its time limit of 300ms", OutcomeLimit},
		{"memory bomb (memory.grow)", "membomb.wasm", Limits{Memory: 8 << 20}, "membomb", `{"mode":"grow"}`,
			"tool exceeded its memory limit of 8 MiB", OutcomeLimit},
		{"memory bomb (Extism alloc)", "membomb.wasm", Limits{Memory: 8 << 20}, "membomb", `{"mode":"alloc"}`,
			"tool exceeded its memory limit of 8 MiB", OutcomeLimit},
		{"huge output", "hugeout.wasm", Limits{Memory: 32 << 20}, "hugeout", `{}`,
			"tool exceeded its output limit of 1 MiB", OutcomeLimit},
		{"deep recursion", "recursion.wasm", Limits{Timeout: 2 * time.Minute}, "recursion", `{}`,
			"tool exceeded its stack limit of 8 MiB", OutcomeLimit},
		{"deep recursion from a charged block", "scoperecursion.wasm", Limits{Timeout: 2 * time.Minute}, "scoperecursion", `{}`,
			"tool exceeded its stack limit of 8 MiB", OutcomeLimit},
		{"trap", "trap.wasm", Limits{}, "trap", `{}`,
			"tool crashed: unreachable", OutcomeTrap},
		{"stdout flood (WASI command)", "wasicmd.wasm", Limits{Output: 64 << 10}, "flood", `{}`,
			"tool exceeded its output limit of 64 KiB", OutcomeLimit},
	}
	h, rec := newTestHost(t, Options{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := load(t, h, c.file, Module{Limits: c.limits})
			res := call(t, l, c.tool, c.args)
			if !res.IsError || res.Text() != c.want {
				t.Fatalf("result = %+v, want error %q", res, c.want)
			}
			r := rec.last(t)
			if r.Outcome != c.outcome || r.Error != c.want || r.Tool != c.tool || r.SHA256 != l.SHA256() {
				t.Errorf("record = %+v, want outcome %s", r, c.outcome)
			}
			// The same module serves again with a fresh instance.
			if c.file == "wasicmd.wasm" {
				if res := call(t, l, "entropy", `{}`); res.IsError {
					t.Errorf("after the failure: %+v", res)
				}
			}
			mustEcho(t, h)
		})
	}
}

// TestHostileLoads checks the modules that must be refused at load time,
// each with its message and its sentinel or typed error.
func TestHostileLoads(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	cases := []struct {
		name   string
		file   string
		m      Module
		want   string
		target error        // the sentinel the error wraps, if any
		imp    *ImportError // the import refused, for an *ImportError
		limit  string       // the limit named, for a *LimitError
	}{
		// An import without its grant loads; its calls are refused
		// (lazygrants_test.go).
		{"import the host does not provide", "unknownimport.wasm", Module{},
			`host: module "unknownimport" imports the host function env.system, which this host does not provide (the application registers its host functions in host.Options.Functions)`,
			nil, &ImportError{Module: "unknownimport", Import: "env.system", Unregistered: true}, ""},
		{"malformed bytes", "malformed.wasm", Module{},
			"not a valid WebAssembly module: malformed module: at byte 0x8: section 255 of 245366783 bytes runs past the end of the module", ErrMalformed, nil, ""},
		{"neither ABI", "noabi.wasm", Module{},
			"exports neither call (Extism plugin) nor _start (WASI command)", ErrNoABI, nil, ""},
		{"no describe and no sidecar", "nodescribe.wasm", Module{},
			"exports no describe function and has no sidecar", ErrDescribe, nil, ""},
		{"WASI command without sidecar", "wasicmd.wasm", Module{},
			"a WASI command module needs a sidecar wasicmd.tool.json", ErrDescribe, nil, ""},
		{"invalid describe document", "baddescribe.wasm", Module{},
			`invalid describe document: not a JSON object {"tools":[...]}`, ErrDescribe, nil, ""},
		{"describe that never returns", "describeloop.wasm", Module{Limits: Limits{Timeout: 200 * time.Millisecond}},
			"describe failed: tool exceeded its time limit of 200ms", ErrDescribe, nil, LimitTime},
		{"initial memory above the limit", "bigmem.wasm", Module{},
			`module "bigmem" needs 128 MiB of memory at start: tool exceeded its memory limit of 64 MiB`, nil, nil, LimitMemory},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			m.Name = strings.TrimSuffix(c.file, ".wasm")
			m.Bytes = wasmFile(t, c.file)
			l, err := h.Load(context.Background(), m)
			if err == nil {
				_ = l.Close(context.Background())
				t.Fatal("Load succeeded, want an error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %q, want it to contain %q", err, c.want)
			}
			if c.target != nil && !errors.Is(err, c.target) {
				t.Errorf("error %q does not wrap %v", err, c.target)
			}
			var ie *ImportError
			if c.imp != nil && (!errors.As(err, &ie) || *ie != *c.imp) {
				t.Errorf("error %#v, want the *ImportError %#v", err, c.imp)
			}
			var le *LimitError
			if c.limit != "" && (!errors.As(err, &le) || le.Limit != c.limit) {
				t.Errorf("error %#v, want a *LimitError for the %s limit", err, c.limit)
			}
			mustEcho(t, h)
		})
	}
}

// TestWazeroPanicsOnMalformed: wazero's own validator panics (index out of
// range) on a module whose function section names a type that does not
// exist, when code calls that function: loading such a module used to end
// the host process. The differential fuzzing of the validator against
// wazero found it. Validation refuses it first, and a panic from the
// runtime is an error (compileCached).
func TestWazeroPanicsOnMalformed(t *testing.T) {
	t.Parallel()
	bin := wasmModule(
		sec(1, 1, 0x60, 0, 1, 0x7f), // one type: () -> i32
		sec(3, 2, 0, 44),            // two functions: type 0, and type 44, which does not exist
		sec(7, 1, 4, 'c', 'a', 'l', 'l', 0, 0),
		sec(10, 2,
			4, 0, 0x10, 0x01, 0x0b, // call 1
			4, 0, 0x41, 0x00, 0x0b),
	)
	func() {
		defer func() {
			if recover() == nil {
				t.Log("this wazero no longer panics on the module")
			}
		}()
		rt := wazero.NewRuntimeWithConfig(context.Background(), wazero.NewRuntimeConfigInterpreter())
		defer rt.Close(context.Background())
		_, _ = rt.CompileModule(context.Background(), bin)
	}()
	h, _ := newTestHost(t, Options{})
	_, err := h.Load(context.Background(), Module{Name: "typeless", Bytes: bin})
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "type index 44 out of range") {
		t.Fatalf("Load: %v", err)
	}
	// The runtime's panic, were validation to miss it, is an error too.
	if _, err := h.compileCached(context.Background(), h.gen, bin); !errors.Is(err, ErrMalformed) {
		t.Fatalf("compileCached: %v", err)
	}
}

// TestSIMDOpcodeEncodings: wazero reads a SIMD sub-opcode as one byte
// while the specification (and this host's decoders) read a LEB128
// number. A non-minimal encoding, such as 0xfd 0x8c 0x00 for v128.const,
// made the two see different instructions: to wazero the constant's 16
// bytes were code, a loop the rewrite never saw and so never checked,
// which froze the process. Only minimal encodings load.
func TestSIMDOpcodeEncodings(t *testing.T) {
	t.Parallel()
	imm := []byte{0x0b, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x02, 0x40, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x41, 0x00}
	body := append([]byte{0x00, 0x02, 0x40, 0x0c, 0x00, 0xfd, 0x8c, 0x00}, imm...)
	body = append(body, 0x1a, 0x0b, 0x41, 0x00, 0x0b)
	bin := wasmModule(
		sec(1, 1, 0x60, 0, 1, 0x7f),
		sec(3, 1, 0),
		sec(7, 1, 4, 'c', 'a', 'l', 'l', 0, 0),
		sec(10, append([]byte{1, byte(len(body))}, body...)...),
	)
	h, _ := newTestHost(t, Options{})
	_, err := h.Load(context.Background(), Module{Name: "simdleb", Bytes: bin,
		Sidecar: []byte(`{"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}`)})
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "SIMD opcode 12 not minimally encoded") {
		t.Fatalf("Load: %v", err)
	}
	// Minimal encodings load: v128.const (one byte) and i16x8.abs (128:
	// two bytes).
	good := []byte{0x00, 0xfd, 0x0c}
	good = append(good, make([]byte, 16)...)
	good = append(good, 0xfd, 0x80, 0x01, 0x1a, 0x41, 0x00, 0x0b)
	bin = wasmModule(
		sec(1, 1, 0x60, 0, 1, 0x7f),
		sec(3, 1, 0),
		sec(7, 1, 4, 'c', 'a', 'l', 'l', 0, 0),
		sec(10, append([]byte{1, byte(len(good))}, good...)...),
	)
	l, err := h.Load(context.Background(), Module{Name: "simdok", Bytes: bin,
		Sidecar: []byte(`{"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}`)})
	if err != nil {
		t.Fatalf("minimal encodings: %v", err)
	}
	l.Close(context.Background())
}
