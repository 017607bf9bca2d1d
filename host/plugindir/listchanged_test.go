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
	e.approve("dyn.wasm", manifest.Limits{})
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
