package synth

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// TestCreatedToolsAreUntrusted: a tool the model wrote, which no person
// approved, is untrusted: what it returns is framed as data and taints
// the run, though it holds no grant. Found attacking our fix of issue
// 38's quarantine hole: create_tool had the same one, and a tool written
// in a tainted run could hand its instructions to a later one.
func TestCreatedToolsAreUntrusted(t *testing.T) {
	w := scripted.New(turn(draft{Name: "reverse_word", Description: "Reverses a word.", InputSchema: reverseSchema, Source: reverseJS,
		SelfTests: []map[string]any{{"args": map[string]any{"word": "ab"}, "expect": map[string]any{"reversed": "ba"}}}}))
	b := newBuilder(t, w, nil)
	reg := hostRegistry(t)
	ct := b.CreateTool(reg, CreateToolOptions{})
	defer ct.Close(context.Background())
	res, err := ct.Call(context.Background(), tool.Call{ID: "c1", Name: "create_tool", Arguments: json.RawMessage(`{"capability":"reverse a word"}`)})
	if err != nil || res.IsError {
		t.Fatalf("create_tool: %+v, %v", res, err)
	}
	created, ok := reg.Get("reverse_word")
	if !ok {
		t.Fatal("the created tool is not registered")
	}
	if f := tool.FlagsOf(created); !f.Untrusted || len(f.Permissions) != 0 {
		t.Errorf("a created tool without grants has flags %+v; want untrusted", f)
	}
}
