package sandbox_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/pluginload"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/google/go-cmp/cmp"
)

// collect returns a tracer whose events land in the returned function's
// result.
func collect() (*trace.Tracer, func() []trace.Event) {
	var mu sync.Mutex
	var evs []trace.Event
	tr := trace.New(trace.SinkFunc(func(ev trace.Event) {
		mu.Lock()
		evs = append(evs, ev)
		mu.Unlock()
	}))
	return tr, func() []trace.Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]trace.Event(nil), evs...)
	}
}

func TestTraceSandboxCallsWithoutTracer(t *testing.T) {
	if sandbox.TraceSandboxCalls(nil) != nil {
		t.Error("TraceSandboxCalls(nil) returned an observer; the host would call it for nothing")
	}
}

func TestTraceSandboxCallsEvent(t *testing.T) {
	tr, events := collect()
	observe := sandbox.TraceSandboxCalls(tr)
	observe(context.Background(), host.CallRecord{
		Duration: 1500 * time.Microsecond, Module: "fetch", SHA256: "ab12", ABI: host.ABIExtism,
		Tool: "fetch_url", CallID: "call_7",
		Grants: []string{"net:api.example.com", "clock"}, Used: []string{"net:api.example.com"},
		Denied:     []string{"net: evil.example is not granted", "env: HOME is not granted"},
		MemoryPeak: 2 << 20, Pooled: true, Outcome: host.OutcomeDenied, Error: "refused",
	})
	observe(context.Background(), host.CallRecord{Module: "echo", ABI: host.ABIWASICommand, Tool: "echo", CallID: "c2", Outcome: host.OutcomeOK})

	evs := events()
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2", len(evs))
	}
	for _, ev := range evs {
		if ev.Type != trace.SandboxCall {
			t.Errorf("event type %q, want %q", ev.Type, trace.SandboxCall)
		}
	}
	want := trace.Sandbox{
		Name: "fetch_url", CallID: "call_7", DurationMS: 1.5, Error: "refused",
		Module: "fetch", SHA256: "ab12", ABI: "extism", Outcome: "denied",
		Grants: []string{"net:api.example.com", "clock"}, GrantsUsed: []string{"net:api.example.com"},
		Denied:     []string{"net: evil.example is not granted", "env: HOME is not granted"},
		MemoryPeak: 2 << 20, Pooled: true,
	}
	if diff := cmp.Diff(want, evs[0].Payload); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
	// Nothing refused: no denied attribute at all.
	want = trace.Sandbox{Name: "echo", CallID: "c2", Module: "echo", ABI: "wasi-command", Outcome: "ok"}
	if diff := cmp.Diff(want, evs[1].Payload); diff != "" {
		t.Errorf("payload of a call with nothing refused (-want +got):\n%s", diff)
	}
	// In the trace file: memory_peak a number, pooled a boolean, the lists
	// arrays (format 2), the attributes under "attrs" as before.
	for i, line := range []string{
		`"payload":{"name":"fetch_url","call_id":"call_7","error":"refused","duration_ms":1.5,"attrs":{"abi":"extism","denied":["net: evil.example is not granted","env: HOME is not granted"],"grants":["net:api.example.com","clock"],"grants_used":["net:api.example.com"],"memory_peak":2097152,"module":"fetch","outcome":"denied","pooled":true,"sha256":"ab12"}}}`,
		`"payload":{"name":"echo","call_id":"c2","attrs":{"abi":"wasi-command","grants":[],"grants_used":[],"memory_peak":0,"module":"echo","outcome":"ok","pooled":false,"sha256":""}}}`,
	} {
		if b, _ := json.Marshal(evs[i]); !strings.HasSuffix(string(b), line) {
			t.Errorf("trace line %s\nwant it to end %s", b, line)
		}
	}
}

// The observer hands the tracer copies of the record's lists: a sink that
// changes what it is given does not change the host's record.
func TestTraceSandboxCallsCopiesTheLists(t *testing.T) {
	tr := trace.New(trace.SinkFunc(func(ev trace.Event) {
		p := ev.Payload.(trace.Sandbox)
		p.Grants[0], p.GrantsUsed[0], p.Denied[0] = "changed", "changed", "changed"
	}))
	r := host.CallRecord{Tool: "t", Grants: []string{"clock"}, Used: []string{"clock"}, Denied: []string{"env: HOME"}}
	sandbox.TraceSandboxCalls(tr)(context.Background(), r)
	if r.Grants[0] != "clock" || r.Used[0] != "clock" || r.Denied[0] != "env: HOME" {
		t.Errorf("a sink changed the host's record: %+v", r)
	}
}

// HostOptions wires the tracer to the host: a call of a sandboxed tool from
// the published registry leaves one SandboxCall event.
func TestPluginsOpenTracesSandboxedCalls(t *testing.T) {
	echo, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatalf("test module: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), echo, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	tr, events := collect()

	// Unapproved and not quarantined: listed as pending, not loaded.
	h, d, err := pluginload.Open(ctx, sandbox.HostOptions(nil), plugindir.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	snap := d.Snapshot()
	if len(snap.Plugins) != 1 || snap.Plugins[0].Status != plugindir.StatusPending || len(snap.Tools()) != 0 {
		t.Errorf("an unapproved module: %+v, tools %d; want pending and no tools", snap.Plugins, len(snap.Tools()))
	}
	d.Close(ctx)
	h.Close(ctx)

	h, d, err = pluginload.Open(ctx, sandbox.HostOptions(tr), plugindir.Options{Dir: dir, Quarantine: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	defer d.Close(ctx)
	reg := &tool.Registry{}
	if err := d.Publish(reg); err != nil {
		t.Fatal(err)
	}
	echoTool, ok := reg.Get("echo")
	if !ok {
		t.Fatalf("the quarantined echo module's tool is not in the registry (%d tools)", reg.Len())
	}
	res, err := echoTool.Call(ctx, tool.Call{ID: "c1", Name: "echo", Arguments: json.RawMessage(`{"msg":"hi"}`)})
	if err != nil || res.IsError {
		t.Fatalf("echo: %+v, %v", res, err)
	}
	evs := events()
	var p trace.Sandbox
	if len(evs) == 1 {
		p, _ = evs[0].Payload.(trace.Sandbox)
	}
	if len(evs) != 1 || evs[0].Type != trace.SandboxCall || p.Name != "echo" || p.CallID != "c1" || p.Outcome != "ok" {
		t.Errorf("events after one sandboxed call: %+v", evs)
	}
}

// In a run, a sandbox_call event belongs to the tool call's span and to
// the run: trace summaries and viewers attach it there.
func TestSandboxCallJoinsItsToolSpan(t *testing.T) {
	tr, events := collect()
	echoRun(t, tr, tr)
	var toolSpan, runID string
	var sandbox *trace.Event
	for _, ev := range events() {
		switch ev.Type {
		case trace.ToolCallStart:
			toolSpan, runID = ev.SpanID, ev.RunID
		case trace.SandboxCall:
			sandbox = &ev
		}
	}
	if sandbox == nil || toolSpan == "" {
		t.Fatalf("no sandbox_call or tool_call_start event in %+v", events())
	}
	if sandbox.ParentID != toolSpan || sandbox.RunID != runID || runID == "" {
		t.Errorf("sandbox_call parent %q run %q; want the tool span %q and run %q", sandbox.ParentID, sandbox.RunID, toolSpan, runID)
	}
}

// A missing directory holds no plugins; a corrupt manifest is an error
// naming the file, and nothing is left open.
func TestPluginsOpenMissingDirAndCorruptManifest(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	h, d, err := pluginload.Open(ctx, sandbox.HostOptions(nil), plugindir.Options{Dir: filepath.Join(t.TempDir(), "none")})
	if err != nil {
		t.Fatalf("a missing directory: %v", err)
	}
	if n := len(d.Snapshot().Plugins); n != 0 {
		t.Errorf("a missing directory holds %d plugins", n)
	}
	d.Close(ctx)
	h.Close(ctx)

	dir := t.TempDir()
	manifest := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(manifest, []byte(`{"version": 1, "tools": {`), 0o644); err != nil {
		t.Fatal(err)
	}
	h, d, err = pluginload.Open(ctx, sandbox.HostOptions(nil), plugindir.Options{Dir: dir})
	if err == nil || h != nil || d != nil {
		t.Fatalf("a corrupt manifest: %v, %v, %v; want only an error", h, d, err)
	}
	if !strings.Contains(err.Error(), manifest) {
		t.Errorf("the error %q does not name the manifest %s", err, manifest)
	}
}

// A run traced by a tracer of its own (a served run's) gets its sandbox
// calls in that trace, not only in the tracer the host was built with: the
// loop names its tracer in the call's context.
func TestSandboxCallGoesToTheRunsTracer(t *testing.T) {
	hostTr, hostEvents := collect()
	runTr, runEvents := collect()
	tools := echoRun(t, hostTr, runTr)
	count := func(evs []trace.Event) (n int) {
		for _, ev := range evs {
			if ev.Type == trace.SandboxCall {
				n++
			}
		}
		return n
	}
	if n := count(runEvents()); n != 1 {
		t.Errorf("%d sandbox_call events in the run's trace, want 1", n)
	}
	if n := count(hostEvents()); n != 0 {
		t.Errorf("%d sandbox_call events in the host's tracer, want them in the run's", n)
	}
	// Outside a traced run, the host's tracer gets them.
	if _, err := tools.Call(context.Background(), tool.Call{ID: "x", Name: "echo", Arguments: json.RawMessage(`{"msg":"hi"}`)}); err != nil {
		t.Fatal(err)
	}
	if n := count(hostEvents()); n != 1 {
		t.Errorf("%d sandbox_call events in the host's tracer for a call outside a run, want 1", n)
	}
}

// echoRun loads testdata's echo.wasm into a host whose sandbox calls are
// traced to hostTr and runs an agent traced to runTr that calls echo once;
// it returns the registry of the module's tools, open until t ends.
func echoRun(t *testing.T, hostTr, runTr *trace.Tracer) *tool.Registry {
	t.Helper()
	echo, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatalf("test module: %v", err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	h, err := host.New(ctx, host.Options{OnCall: sandbox.TraceSandboxCalls(hostTr), KVDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	l, err := h.Load(ctx, host.Module{Name: "echo", Bytes: echo})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(ctx) })
	tools, err := tool.NewRegistry(l.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "echo", Arguments: json.RawMessage(`{"msg":"hi"}`)}}},
		scripted.Turn{Text: "done"},
	)
	agent := &loop.Agent{Provider: model, Tools: tools, Tracer: runTr, Bounds: loop.Bounds{MaxSteps: 3}}
	if _, err := agent.Run(ctx, "echo hi"); err != nil {
		t.Fatal(err)
	}
	return tools
}
