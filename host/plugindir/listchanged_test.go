package plugindir

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// wasmFile reads a module of testdata/wasm.
func wasmFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", name))
	if err != nil {
		t.Fatalf("reading test module: %v", err)
	}
	return b
}

// The Dir publishes the new tools: Watch reports them added.
func TestToolListChangedInDir(t *testing.T) {
	t.Parallel()
	e := newPDEnv(t)
	e.put("dyn.wasm", wasmFile(t, "hypermcpv1go.wasm"), nil)
	e.approve("dyn.wasm", manifest.Limits{}, "state")
	d := e.open(Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	add, ok := d.Snapshot().Tool("add_tool")
	if !ok {
		t.Fatalf("tools %v", d.Snapshot().Plugins)
	}
	go func() {
		// While Watch runs (or before: the signal waits for it).
		time.Sleep(100 * time.Millisecond)
		if _, err := add.Call(ctx, tool.Call{ID: "c", Name: "add_tool", Arguments: json.RawMessage(`{}`)}); err != nil {
			t.Error(err)
		}
	}()
	for ch, err := range d.Watch(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(ch.Added, "tool_1") {
			t.Fatalf("change %+v", ch)
		}
		if _, ok := d.Snapshot().Tool("tool_1"); !ok {
			t.Error("tool_1 is not in the snapshot")
		}
		return
	}
	t.Fatal("Watch ended without the change")
}

// TestListChangeCannotTakeAServedTool: a stateful module that adds, at run
// time, a tool another approved plugin already serves does not take it out
// of service (it was a conflict, withheld from both: found by attacking our
// own sandbox); its other new tools are published.
func TestListChangeCannotTakeAServedTool(t *testing.T) {
	t.Parallel()
	e := newPDEnv(t)
	e.put("dyn.wasm", wasmFile(t, "hypermcpv1go.wasm"), nil)
	e.approve("dyn.wasm", manifest.Limits{}, "state")
	e.put("first.wasm", waEnvModule("f"), waSidecar(nil, "tool_1"))
	e.approve("first.wasm", manifest.Limits{})
	d := e.open(Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	add, ok := d.Snapshot().Tool("add_tool")
	if !ok {
		// Seen once under load as a nil dereference: say what the
		// directory made of dyn.wasm instead.
		p, _ := d.Snapshot().Plugin("dyn")
		t.Fatalf("add_tool is not served: dyn.wasm is %v (%v), tools %v", p.Status, p.Err, p.Tools)
	}
	for range 2 { // tool_1, then tool_2
		if _, err := add.Call(ctx, tool.Call{ID: "c", Name: "add_tool", Arguments: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	s := d.Snapshot()
	if len(s.Conflicts) != 0 {
		t.Errorf("conflicts %v", s.Conflicts)
	}
	if p, _ := s.Plugin("first"); !slices.Contains(p.Tools, "tool_1") {
		t.Errorf("first.wasm serves %v, want tool_1 still", p.Tools)
	}
	if p, _ := s.Plugin("dyn"); !slices.Contains(p.Tools, "tool_2") || slices.Contains(p.Tools, "tool_1") || !slices.Contains(p.Shadowed, "tool_1") {
		t.Errorf("dyn.wasm serves %v, shadowed %v", p.Tools, p.Shadowed)
	}
}
