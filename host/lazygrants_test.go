package host

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/autoagent-go/autoagent/tool"
)

// Grants are asked at call time, as Extism does (issue 44 item 4): a
// module that imports http_request without a net: grant loads, its tools
// that do not reach the network run, and each call of the import is
// refused with a capability refusal, recorded as one; the host goes on.
// lazytime.wasm is a hyper-mcp v2 plugin after hyper-mcp's time plugin.
func TestLazyGrantNet(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		_, _ = w.Write([]byte("1700000000"))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	h, rec := newTestHost(t, Options{})

	l := load(t, h, "lazytime.wasm", Module{})
	if res := call(t, l, "now", `{}`); res.IsError || !plausibleEpoch(res.Text()) {
		t.Fatalf("now without any grant: %+v", res)
	}
	if r := rec.last(t); r.Outcome != OutcomeOK || len(r.Denied) != 0 {
		t.Errorf("now's record: %+v", r)
	}

	res := call(t, l, "sync", fmt.Sprintf(`{"url":%q}`, srv.URL))
	want := "net: call of extism:host/env.http_request refused: the module was not granted net:HOST; it loads without the grant, and each call of the function is refused until it is approved with one"
	if !res.IsError || res.Text() != want {
		t.Fatalf("sync without a net grant: %+v\nwant the error %q", res, want)
	}
	r := rec.last(t)
	if r.Outcome != OutcomeDenied || !slices.Equal(r.Denied, []string{want}) || len(r.Used) != 0 {
		t.Errorf("the refusal's record: %+v", r)
	}
	if served.Load() != 0 {
		t.Fatalf("the server was reached %d times without a grant", served.Load())
	}
	// The host and the module go on.
	if res := call(t, l, "now", `{}`); res.IsError {
		t.Errorf("now after a refusal: %+v", res)
	}
	mustEcho(t, h)

	// The same bytes granted the server's address: the call runs.
	g := load(t, h, "lazytime.wasm", Module{Name: "granted", Grants: grants(t, "net:127.0.0.1:"+u.Port())})
	if res := call(t, g, "sync", fmt.Sprintf(`{"url":%q}`, srv.URL)); res.IsError || res.Text() != "1700000000" {
		t.Fatalf("sync granted: %+v", res)
	}
	if r := rec.last(t); r.Outcome != OutcomeOK || !slices.Contains(r.Used, "net:127.0.0.1:"+u.Port()) {
		t.Errorf("the granted call's record: %+v", r)
	}
}

func plausibleEpoch(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n > 1_600_000_000 && n < 1<<40
}

// A guest cannot catch the refusal and try again: the first refused call
// ends the guest call, as Extism's host functions panic. A loop of 10^6
// calls asks once and is refused once, whatever the machine's speed.
func TestLazyGrantRetryEndsAtFirstRefusal(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{})
	l := load(t, h, "lazytime.wasm", Module{})
	res := call(t, l, "retry", `{"url":"http://127.0.0.1:1/","times":1000000}`)
	if !res.IsError || !strings.Contains(res.Text(), "net: call of extism:host/env.http_request refused") {
		t.Fatalf("retry: %+v", res)
	}
	if r := rec.last(t); r.Outcome != OutcomeDenied || len(r.Denied) != 1 {
		t.Errorf("retry's record: %d refusals (%+v), want 1", len(r.Denied), r)
	}
	// With a grant of another host the loop is refused at its first
	// request too (the policy's refusal, not the gate's).
	g := load(t, h, "lazytime.wasm", Module{Name: "other", Grants: grants(t, "net:api.example.com")})
	res = call(t, g, "retry", `{"url":"http://127.0.0.1:1/","times":1000000}`)
	if !res.IsError || !strings.Contains(res.Text(), "net: request to http://127.0.0.1:1/ refused") {
		t.Fatalf("retry granted another host: %+v", res)
	}
	if r := rec.last(t); len(r.Denied) != 1 {
		t.Errorf("retry granted another host: %d refusals, want 1", len(r.Denied))
	}
}

// kv and tools: the same. The module loads; the call is refused before
// any store or dispatcher is reached; with the grant it works.
func TestLazyGrantKVAndTools(t *testing.T) {
	t.Parallel()
	var dispatched atomic.Int64
	h, rec := newTestHost(t, Options{CallTool: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		dispatched.Add(1)
		return tool.Text("sunny"), nil
	}})
	kv := load(t, h, "kv.wasm", Module{})
	res := call(t, kv, "kv", `{"op":"set","key":"k","value":"v"}`)
	if want := "kv: call of extism:host/user.kv_set refused: the module was not granted kv:NAMESPACE"; !res.IsError || !strings.HasPrefix(res.Text(), want) {
		t.Fatalf("kv set without a grant: %+v, want %q", res, want)
	}
	if r := rec.last(t); r.Outcome != OutcomeDenied || len(r.Denied) != 1 {
		t.Errorf("kv record: %+v", r)
	}
	kvg := load(t, h, "kv.wasm", Module{Name: "kvg", Grants: grants(t, "kv:notes")})
	if res := call(t, kvg, "kv", `{"op":"set","key":"k","value":"v"}`); res.IsError {
		t.Fatalf("kv set granted: %+v", res)
	}
	if res := call(t, kvg, "kv", `{"op":"get","key":"k"}`); res.Text() != "v" {
		t.Fatalf("kv get granted: %+v", res)
	}
	// The ungranted module still sees nothing of the store.
	if res := call(t, kv, "kv", `{"op":"get","key":"k"}`); !res.IsError || !strings.Contains(res.Text(), "kv: call of extism:host/user.kv_get refused") {
		t.Fatalf("kv get without a grant: %+v", res)
	}

	hc := load(t, h, "hostcall.wasm", Module{})
	res = call(t, hc, "hostcall", `{"tool":"weather"}`)
	if want := "tools: call of extism:host/user.tool_call refused: the module was not granted tools:NAME"; !res.IsError || !strings.HasPrefix(res.Text(), want) {
		t.Fatalf("tool_call without a grant: %+v, want %q", res, want)
	}
	if dispatched.Load() != 0 {
		t.Fatal("a tool was dispatched without a grant")
	}
	hcg := load(t, h, "hostcall.wasm", Module{Name: "hcg", Grants: grants(t, "tools:weather")})
	if res := call(t, hcg, "hostcall", `{"tool":"weather"}`); res.IsError || res.Text() != "sunny" || dispatched.Load() != 1 {
		t.Fatalf("tool_call granted: %+v", res)
	}
}

// fs has no import to refuse: without a grant no directory is preopened,
// and every path fails with an errno, as before (host/ABI.md §3).
func TestLazyGrantFSNeedsNoImport(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	ins, err := h.Inspect(t.Context(), "fsattack", wasmFile(t, "fsattack.wasm"), wasmFile(t, "fsattack.tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	if u := ins.Ungranted(nil); len(u) != 0 {
		t.Errorf("fs needs no import, yet ungranted imports %v", u)
	}
}

// An initialiser that calls an import it was not granted is refused like
// any call: the instance is not made, the call fails with the refusal,
// and no snapshot keeps the state it left, so every call asks again
// (and is refused again); with the grant it runs.
func TestLazyGrantInInitialiser(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		_, _ = w.Write([]byte("from the server"))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	sidecar := []byte(`{"tools":[{"name":"ok","description":"Returns what the initialiser fetched.","inputSchema":{"type":"object"}}]}`)
	h, rec := newTestHost(t, Options{})
	// Without the url its initialiser calls nothing, and its instances
	// start from a snapshot: the checks below are not vacuous.
	quiet := load(t, h, "lazyinit.wasm", Module{Name: "quiet", Sidecar: sidecar})
	if res := call(t, quiet, "ok", `{}`); res.IsError || quiet.snaps.snap.Load() == nil {
		t.Fatalf("without the url: %+v, snapshot %v (refused: %q)", res, quiet.snaps.snap.Load() != nil, quiet.snaps.refused)
	}
	l := load(t, h, "lazyinit.wasm", Module{Sidecar: sidecar, Config: map[string]string{"url": srv.URL}})
	for i := range 3 {
		res := call(t, l, "ok", `{}`)
		if !res.IsError || !strings.Contains(res.Text(), "net: call of extism:host/env.http_request refused: the module was not granted net:HOST") {
			t.Fatalf("call %d: %+v", i, res)
		}
		if r := rec.last(t); r.Outcome != OutcomeDenied {
			t.Errorf("call %d's record: %+v", i, r)
		}
	}
	if l.snaps.snap.Load() != nil {
		t.Error("a snapshot was taken of an initialiser a refusal ended")
	}
	if served.Load() != 0 {
		t.Fatalf("the server was reached %d times without a grant", served.Load())
	}
	g := load(t, h, "lazyinit.wasm", Module{Name: "granted", Sidecar: sidecar, Config: map[string]string{"url": srv.URL},
		Grants: grants(t, "net:127.0.0.1:"+u.Port())})
	for i := range 2 {
		if res := call(t, g, "ok", `{}`); res.IsError || res.Text() != "from the server" {
			t.Fatalf("granted call %d: %+v", i, res)
		}
	}
	if g.snaps.snap.Load() != nil {
		t.Error("a snapshot was taken of an initialiser that used a capability")
	}
	mustEcho(t, h)
}

// Inspect says which capability imports a set of grants leaves ungranted,
// and what each needs, in a sandbox process (the default) as in this one.
func TestInspectUngranted(t *testing.T) {
	t.Parallel()
	for _, opts := range []Options{{}, {Isolation: Isolation{InProcess: true}}} {
		t.Run(fmt.Sprint(opts.Isolation.InProcess), func(t *testing.T) { testInspectUngranted(t, opts) })
	}
}

func testInspectUngranted(t *testing.T, opts Options) {
	h, _ := newTestHost(t, opts)
	ins, err := h.Inspect(t.Context(), "lazytime", wasmFile(t, "lazytime.wasm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ins.Needs, []string{"net"}) {
		t.Errorf("needs %v", ins.Needs)
	}
	want := []GatedImport{{Import: "extism:host/env.http_request", Need: "net"}}
	if got := ins.Ungranted(nil); !slices.Equal(got, want) {
		t.Errorf("ungranted with no grants: %v, want %v", got, want)
	}
	if got := ins.Ungranted(grants(t, "clock", "kv:x")); !slices.Equal(got, want) {
		t.Errorf("ungranted with other grants: %v, want %v", got, want)
	}
	if got := ins.Ungranted(grants(t, "net:example.com")); len(got) != 0 {
		t.Errorf("ungranted with a net grant: %v", got)
	}

	opts.Functions = testFunctions(nil)
	fh, _ := newTestHost(t, opts)
	ins, err = fh.Inspect(t.Context(), "hostfn", wasmFile(t, "hostfn.wasm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := ins.Ungranted(grants(t, "host:extism:host/user.mult"))
	if want := []GatedImport{{Import: "app.upper", Need: "host:app.upper"}}; !slices.Equal(got, want) {
		t.Errorf("hostfn ungranted: %v, want %v", got, want)
	}
	kv, err := h.Inspect(t.Context(), "kv", wasmFile(t, "kv.wasm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := kv.Ungranted(grants(t, "net:example.com")); len(got) != 4 || got[0].Need != "kv" {
		t.Errorf("kv ungranted: %v", got)
	}
}

// An application host function: the module loads without its host:
// grant; each call is refused before the function runs.
func TestLazyGrantHostFunction(t *testing.T) {
	t.Parallel()
	var ran atomic.Int64
	h, rec := newTestHost(t, Options{Functions: testFunctions(func(context.Context, *Caller, []uint64) error {
		ran.Add(1)
		return nil
	})})
	l := load(t, h, "hostfn.wasm", Module{Grants: grants(t, "host:extism:host/user.mult")})
	res := call(t, l, "upper", `{"s":"abc"}`)
	want := "host: call of host function app.upper refused: the module was not granted host:app.upper; it loads without the grant, and each call of the function is refused until it is approved with one"
	if !res.IsError || res.Text() != want {
		t.Fatalf("upper without its grant: %+v\nwant %q", res, want)
	}
	if r := rec.last(t); r.Outcome != OutcomeDenied {
		t.Errorf("record %+v", r)
	}
	if ran.Load() != 0 {
		t.Fatalf("the host function ran %d times without its grant", ran.Load())
	}
	if res := call(t, l, "mult", `{"a":6,"b":7}`); res.IsError || res.Text() != "6 x 7 = 42" {
		t.Errorf("the granted function: %+v", res)
	}
}

// startCallsModule: (start $s) where $s calls extism:host/env.http_request
// (0, 0), and an exported `call` returning 0.
func startCallsModule() []byte {
	mod, name := "extism:host/env", "http_request"
	imp := []byte{1}
	imp = append(appendU32(imp, uint32(len(mod))), mod...)
	imp = append(appendU32(imp, uint32(len(name))), name...)
	imp = append(imp, 0, 2)
	return wasmModule(
		sec(1, 3, 0x60, 0, 0, 0x60, 0, 1, 0x7f, 0x60, 2, 0x7e, 0x7e, 1, 0x7e), // () -> (), () -> i32, (i64, i64) -> i64
		sec(2, imp...),
		sec(3, 2, 0, 1),
		sec(7, 1, 4, 'c', 'a', 'l', 'l', 0, 2),
		sec(8, 1), // start = $s
		sec(10, 2,
			9, 0, 0x42, 0x00, 0x42, 0x00, 0x10, 0x00, 0x1a, 0x0b, // http_request(0, 0); drop
			4, 0, 0x41, 0x00, 0x0b),
	)
}

// A module's start function (which runs as the instance is made, before
// any initialiser) calling an import it was not granted is refused like
// any call; granted, the call reaches the function (which then finds no
// request document).
func TestLazyGrantInStartFunction(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{})
	sidecar := []byte(`{"tools":[{"name":"t","description":"start calls http_request","inputSchema":{"type":"object"}}]}`)
	l, err := h.Load(t.Context(), Module{Name: "startcalls", Bytes: startCallsModule(), Sidecar: sidecar})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(t.Context())
	for i := range 2 {
		if res := call(t, l, "t", `{}`); !res.IsError || !strings.Contains(res.Text(), "net: call of extism:host/env.http_request refused: the module was not granted net:HOST") {
			t.Fatalf("call %d: %+v", i, res)
		}
		if r := rec.last(t); r.Outcome != OutcomeDenied {
			t.Errorf("call %d's record: %+v", i, r)
		}
	}
	g, err := h.Load(t.Context(), Module{Name: "granted", Bytes: startCallsModule(), Sidecar: sidecar, Grants: grants(t, "net:example.com")})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(t.Context())
	if res := call(t, g, "t", `{}`); !res.IsError || !strings.Contains(res.Text(), "http_request: the request is not JSON") {
		t.Fatalf("granted: %+v", res)
	}
	mustEcho(t, h)
}
