package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host/internal/kvcap"
	"github.com/autoagent-go/autoagent/host/internal/notify"
	"github.com/autoagent-go/autoagent/host/internal/toolcall"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// testFunctions are hostfn.wasm's host functions: mult as go-sdk's
// TestHost_simple has it, app.upper through Extism memory blocks.
func testFunctions(upper func(ctx context.Context, c *Caller, stack []uint64) error) []Function {
	if upper == nil {
		upper = func(_ context.Context, c *Caller, stack []uint64) error {
			in, err := c.Read(stack[0])
			if err != nil {
				return err
			}
			c.Free(stack[0])
			stack[0], err = c.Write(bytes.ToUpper(in))
			return err
		}
	}
	return []Function{
		{Name: "mult", Params: []api.ValueType{api.ValueTypeI64, api.ValueTypeI64}, Results: []api.ValueType{api.ValueTypeI64},
			Description: "multiplies", Local: true, Trusted: true, Idempotent: true,
			Func: func(_ context.Context, _ *Caller, stack []uint64) error {
				stack[0] = stack[0] * stack[1]
				return nil
			}},
		{Namespace: "app", Name: "upper", Params: []api.ValueType{api.ValueTypeI64}, Results: []api.ValueType{api.ValueTypeI64},
			Func: upper},
	}
}

var hostfnGrants = []string{"host:extism:host/user.mult", "host:app.upper"}

func TestHostFunctions(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{Functions: testFunctions(nil)})
	l := load(t, h, "hostfn.wasm", Module{Grants: grants(t, hostfnGrants...)})
	if res := call(t, l, "mult", `{"a":21,"b":2}`); res.IsError || res.Text() != "21 x 2 = 42" {
		t.Errorf("mult: %+v", res)
	}
	if res := call(t, l, "upper", `{"s":"frodo"}`); res.IsError || res.Text() != "FRODO" {
		t.Errorf("upper: %+v", res)
	}
	if r := rec.last(t); !slices.Equal(r.Used, []string{"host:app.upper"}) {
		t.Errorf("the call used %v", r.Used)
	}
	// The flags follow what each function claims: mult disclaims every
	// effect, upper claims nothing, so it counts as egress, untrusted and
	// not idempotent.
	only := load(t, h, "hostfn.wasm", Module{Name: "multonly", Grants: grants(t, "host:extism:host/user.mult", "host:app.upper")})
	tl, _ := only.Tool("mult")
	if f := tool.FlagsOf(tl); !f.Egress || !f.Untrusted || f.Idempotent {
		t.Errorf("flags with upper granted: %+v", f)
	}
	if f := flagsFor(grants(t, "host:extism:host/user.mult"), nil, h.functions); f.Egress || f.Untrusted || !f.Idempotent ||
		!slices.Contains(f.Permissions, "host:extism:host/user.mult") {
		t.Errorf("flags of mult alone: %+v", f)
	}
	if f := flagsFor(grants(t, "host:other.fn"), nil, h.functions); !f.Egress || !f.Untrusted || f.Idempotent {
		t.Errorf("flags of an unknown function: %+v", f)
	}
}

// A module may import a host function only from a host that has it with
// the same signature (without its grant it loads, and each call is
// refused: TestLazyGrantHostFunction).
func TestHostFunctionImports(t *testing.T) {
	t.Parallel()
	var ie *ImportError
	bare, _ := newTestHost(t, Options{})
	_, err := bare.Load(t.Context(), Module{Name: "hostfn", Bytes: wasmFile(t, "hostfn.wasm"), Grants: grants(t, hostfnGrants...)})
	if !errors.As(err, &ie) || !ie.Unregistered || !strings.Contains(err.Error(), "host.Options.Functions") {
		t.Errorf("on a host without the functions: %v", err)
	}

	fs := testFunctions(nil)
	fs[1].Params = []api.ValueType{api.ValueTypeI32}
	wrong, _ := newTestHost(t, Options{Functions: fs})
	_, err = wrong.Load(t.Context(), Module{Name: "hostfn", Bytes: wasmFile(t, "hostfn.wasm"), Grants: grants(t, hostfnGrants...)})
	if !errors.As(err, &ie) || ie.Detail != "want (i32) -> i64, module has (i64) -> i64" {
		t.Errorf("with another signature: %v", err)
	}
}

// Inspect reviews a module where it is approved, often not in the program
// that registers its functions: they are listed and requested, and its
// describe runs against stand-ins, in the sandbox process as in this one.
func TestInspectHostFunctions(t *testing.T) {
	t.Parallel()
	for _, opts := range []Options{{}, {Isolation: Isolation{InProcess: true}}, {Functions: testFunctions(nil)}} {
		h, _ := newTestHost(t, opts)
		ins, err := h.Inspect(t.Context(), "hostfn", wasmFile(t, "hostfn.wasm"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ins.HostFunctions, []string{"app.upper", "extism:host/user.mult"}) || len(ins.Description.Tools) != 2 {
			t.Errorf("inspection: %+v", ins)
		}
		req, err := ins.Requested()
		if err != nil {
			t.Fatal(err)
		}
		if s := manifest.GrantStrings(req); !slices.Equal(s, []string{"host:app.upper", "host:extism:host/user.mult"}) {
			t.Errorf("requested %v", s)
		}
		if !ins.Implies(manifest.Grant{Kind: manifest.KindHost, Name: "app.upper"}) || ins.Implies(manifest.Grant{Kind: manifest.KindHost, Name: "app.lower"}) {
			t.Error("Implies of host grants")
		}
		// A describe that calls a host function is refused, stand-in
		// or not: describe has no capabilities.
		_, err = h.Inspect(t.Context(), "hostfndescribe", wasmFile(t, "hostfndescribe.wasm"), nil)
		if !errors.Is(err, ErrDescribe) || !strings.Contains(err.Error(), "host: call of host function app.upper refused: describe runs with no capabilities") {
			t.Errorf("a describe calling a host function: %v", err)
		}
	}
	h, _ := newTestHost(t, Options{Functions: testFunctions(nil)})
	_, err := h.Load(t.Context(), Module{Name: "hostfndescribe", Bytes: wasmFile(t, "hostfndescribe.wasm"), Grants: grants(t, hostfnGrants...)})
	if !errors.Is(err, ErrDescribe) || !strings.Contains(err.Error(), "refused: describe runs with no capabilities") {
		t.Errorf("loading a module whose describe calls a granted host function: %v", err)
	}
}

// A function's failures end the call with them; the host serves on.
func TestHostFunctionFailures(t *testing.T) {
	t.Parallel()
	var kept *Caller
	cases := []struct {
		name  string
		upper func(ctx context.Context, c *Caller, stack []uint64) error
		want  string
	}{
		{"error", func(context.Context, *Caller, []uint64) error { return errors.New("boom") }, "host function app.upper: boom"},
		{"panic", func(context.Context, *Caller, []uint64) error { panic("oops") }, "host function app.upper: panic: oops"},
		{"bad offset", func(_ context.Context, c *Caller, _ []uint64) error {
			_, err := c.Read(12345)
			return err
		}, "host function app.upper: host: 12345 is not an Extism memory block"},
		{"past the memory limit", func(_ context.Context, c *Caller, stack []uint64) error {
			var err error
			stack[0], err = c.Write(make([]byte, 80<<20))
			if err == nil {
				return errors.New("Write did not fail")
			}
			return nil // ignored: the call ends with the limit anyway
		}, "memory limit"},
		{"deadline", func(ctx context.Context, _ *Caller, _ []uint64) error {
			select {
			case <-ctx.Done(): // the call's time limit reaches the function
				return ctx.Err()
			case <-time.After(hangBound / 2): // before call calls it a hang
				return errors.New("the call's deadline did not reach the function")
			}
		}, "time limit"},
		{"kept", func(_ context.Context, c *Caller, stack []uint64) error {
			kept = c
			var err error
			stack[0], err = c.WriteString("ok")
			return err
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, rec := newTestHost(t, Options{Functions: testFunctions(c.upper)})
			// Only the deadline case is to reach the time limit; the others
			// get one no loaded machine reaches.
			limit := 30 * time.Second
			if c.name == "deadline" {
				limit = 300 * time.Millisecond
			}
			l := load(t, h, "hostfn.wasm", Module{Grants: grants(t, hostfnGrants...), Limits: Limits{Timeout: limit}})
			res := call(t, l, "upper", `{"s":"x"}`)
			if c.want == "" {
				if res.IsError || res.Text() != "ok" {
					t.Fatalf("%+v", res)
				}
			} else if !res.IsError || !strings.Contains(res.Text(), c.want) {
				t.Fatalf("result %+v, want an error containing %q", res, c.want)
			}
			if c.name == "deadline" {
				// The limit's error and outcome: the function saw the
				// call's context end (else it fails the call its own way).
				if o := rec.last(t).Outcome; o != OutcomeLimit {
					t.Errorf("outcome %v", o)
				}
			}
			if res := call(t, l, "mult", `{"a":6,"b":7}`); res.Text() != "6 x 7 = 42" {
				t.Errorf("the next call: %+v", res)
			}
		})
	}
	if kept == nil {
		t.Fatal("the kept Caller was not set")
	}
	if _, err := kept.Read(8); !errors.Is(err, errCallerDone) {
		t.Errorf("a Caller kept past its function: %v", err)
	}
	if _, err := kept.Write([]byte("x")); !errors.Is(err, errCallerDone) {
		t.Errorf("a Caller kept past its function: %v", err)
	}
}

func TestHostFunctionRegistration(t *testing.T) {
	t.Parallel()
	ok := testFunctions(nil)[0]
	for _, c := range []struct {
		name string
		f    func(*Function)
		want string
	}{
		{"nil Func", func(f *Function) { f.Func = nil }, "Func is nil"},
		{"the host's own function", func(f *Function) { f.Name = "kv_get" }, "host's own function"},
		{"the kernel's namespace", func(f *Function) { f.Namespace = "extism:host/env" }, "host's own namespace"},
		{"WASI", func(f *Function) { f.Namespace = "wasi_snapshot_preview1" }, "host's own namespace"},
		{"no name", func(f *Function) { f.Name = "" }, "NAMESPACE.NAME"},
		{"a reference type", func(f *Function) { f.Params = []api.ValueType{api.ValueTypeExternref} }, "is not i32, i64, f32 or f64"},
	} {
		f := ok
		c.f(&f)
		if _, err := New(t.Context(), Options{NoDiskCache: true, Functions: []Function{f}}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if _, err := New(t.Context(), Options{NoDiskCache: true, Functions: []Function{ok, ok}}); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("twice: %v", err)
	}
}

// A plugin written for Extism, with plain exports and neither describe nor
// call, becomes tools through a sidecar naming each export.
func TestExportTool(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{})
	tools := func(ts ...string) []byte {
		return []byte(`{"tools":[` + strings.Join(ts, ",") + `]}`)
	}
	tl := func(name, export string) string {
		return `{"name":"` + name + `","description":"d","inputSchema":{"type":"object"},"export":"` + export + `"}`
	}
	l, err := h.Load(t.Context(), Module{Name: "plain", Bytes: wasmFile(t, "plain.wasm"),
		Sidecar: tools(tl("vowels", "count_vowels"), tl("binary", "binary"), tl("fail", "fail"))})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(t.Context())
	if l.ABI() != ABIExtism {
		t.Errorf("ABI %v", l.ABI())
	}
	if res := call(t, l, "vowels", `{"input":"hello world"}`); res.IsError || res.Text() != `{"count":3}` {
		t.Errorf("vowels: %+v", res)
	}
	if r := rec.last(t); r.InputBytes != len("hello world") || r.Outcome != OutcomeOK {
		t.Errorf("record %+v", r)
	}
	// Without an input string, the input is the arguments' JSON text.
	if res := call(t, l, "vowels", `{"x":"aaa"}`); res.Text() != `{"count":3}` {
		t.Errorf("vowels of the arguments: %+v", res)
	}
	if res := call(t, l, "binary", `{}`); !res.IsError || res.Text() != "tool binary returned 2 bytes that are not UTF-8 text" {
		t.Errorf("binary: %+v", res)
	}
	if res := call(t, l, "fail", `{}`); !res.IsError || res.Text() != "plain failure" {
		t.Errorf("fail: %+v", res)
	}
	for _, c := range []struct{ sidecar, want string }{
		{`{"tools":[{"name":"x","description":"d","inputSchema":{"type":"object"}}]}`, `tool "x": the module exports no call function`},
		{string(tools(tl("x", "nothere"))), `export "nothere" is not a function the module exports`},
		{string(tools(tl("x", "wrongtype"))), `export "wrongtype" has type (i32) -> i32`},
		{string(tools(tl("x", "describe"))), `export "describe" is not one a tool may call`},
		{string(tools(tl("x", "autoagent:stack"))), `is not one a tool may call`},
	} {
		_, err := h.Load(t.Context(), Module{Name: "plain", Bytes: wasmFile(t, "plain.wasm"), Sidecar: []byte(c.sidecar)})
		if !errors.Is(err, ErrDescribe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.sidecar, err, c.want)
		}
	}
	// Our own tool modules' call export, called raw: the input is the
	// call document, the output its MCP result as text.
	e, err := h.Load(t.Context(), Module{Name: "echo", Bytes: wasmFile(t, "echo.wasm"), Sidecar: tools(tl("raw", "call"))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(t.Context())
	in, _ := json.Marshal(map[string]string{"input": `{"params":{"name":"echo","arguments":{"a":1}}}`})
	if res := call(t, e, "raw", string(in)); res.IsError || res.Text() != `{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}` {
		t.Errorf("raw call: %+v", res)
	}
}

// Every function of the host's own in extism:host/user is refused as a
// host: grant (manifest keeps the list of names apart from this package).
func TestOwnUserFunctionsAreNotGrantable(t *testing.T) {
	for _, fs := range [][]string{names(toolcall.Funcs), names(kvcap.Funcs), names(notify.Funcs)} {
		for _, name := range fs {
			if _, err := manifest.ParseGrant("host:" + userModule + "." + name); err == nil {
				t.Errorf("host:%s.%s parses as a grant", userModule, name)
			}
			if embedderImport(userModule, name) {
				t.Errorf("%s is taken for an application's function", name)
			}
		}
	}
}
