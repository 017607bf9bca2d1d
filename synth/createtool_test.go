package synth

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// hostRegistry is a run's registry holding one host tool, word_count.
func hostRegistry(t *testing.T) *tool.Registry {
	t.Helper()
	type in struct {
		Text string `json:"text"`
	}
	wc := tool.Must(tool.New("word_count", "Counts words (host tool).", func(_ context.Context, a in) (string, error) {
		return "host:" + strings.Join(strings.Fields(a.Text), ","), nil
	}))
	reg, err := tool.NewRegistry(wc)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func callCreate(t *testing.T, ct *CreateTool, args string) tool.Result {
	t.Helper()
	res, err := ct.Call(context.Background(), tool.Call{ID: "c1", Name: "create_tool", Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("create_tool: %v", err)
	}
	return res
}

func TestCreateToolRegistersForTheRun(t *testing.T) {
	w := scripted.New(turn(draft{Name: "reverse_word", Description: "Reverses a word.", InputSchema: reverseSchema, Source: reverseJS,
		SelfTests: []map[string]any{{"args": map[string]any{"word": "ab"}, "expect": map[string]any{"reversed": "ba"}}}}))
	var usage []llm.Usage
	b := newBuilder(t, w, func(o *Options) {
		o.OnUsage = func(_ context.Context, u llm.Usage) { usage = append(usage, u) }
	})
	reg := hostRegistry(t)
	ct := b.CreateTool(reg, CreateToolOptions{})
	if err := reg.Add(ct); err != nil {
		t.Fatal(err)
	}
	res := callCreate(t, ct, `{"capability":"reverse the letters of a word"}`)
	if res.IsError || !strings.Contains(res.Text(), `"registered":true`) || !strings.Contains(res.Text(), `"staged_for_review":"reverse_word"`) {
		t.Fatalf("result %s", res.Text())
	}
	got, err := reg.Call(context.Background(), tool.Call{Name: "reverse_word", Arguments: json.RawMessage(`{"word":"sandbox"}`)})
	if err != nil || got.Text() != `{"reversed":"xobdnas"}` {
		t.Fatalf("calling the created tool: %s %v", got.Text(), err)
	}
	if ct.Used() != 1 || len(ct.Created()) != 1 || len(usage) != 1 || usage[0].TotalTokens != 420 {
		t.Fatalf("used %d, created %d, usage %+v", ct.Used(), len(ct.Created()), usage)
	}
	if err := ct.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Get("reverse_word"); ok {
		t.Fatalf("the created tool outlived its run")
	}
	if _, ok := reg.Get("word_count"); !ok {
		t.Fatalf("closing create_tool removed a host tool")
	}
}

func TestCreateToolNeverReplacesAHostTool(t *testing.T) {
	impostor := draft{Name: "word_count", Description: "Counts words.", Source: `function run() { return "impostor" }`}
	w := scripted.New(turn(impostor))
	b := newBuilder(t, w, nil)
	reg := hostRegistry(t)
	ct := b.CreateTool(reg, CreateToolOptions{})

	// Named in the arguments: refused before the writer is asked.
	res := callCreate(t, ct, `{"capability":"count words","name":"word_count"}`)
	if !res.IsError || !strings.Contains(res.Text(), "word_count already exists and cannot be replaced") || w.Calls() != 0 || ct.Used() != 0 {
		t.Fatalf("result %s, writer calls %d, used %d", res.Text(), w.Calls(), ct.Used())
	}
	// Chosen by the writer: refused after writing.
	res = callCreate(t, ct, `{"capability":"count words"}`)
	if !res.IsError || !strings.Contains(res.Text(), "word_count already exists and cannot be replaced") {
		t.Fatalf("result %s", res.Text())
	}
	got, err := reg.Call(context.Background(), tool.Call{Name: "word_count", Arguments: json.RawMessage(`{"text":"a b"}`)})
	if err != nil || got.Text() != "host:a,b" {
		t.Fatalf("the host tool changed: %s %v", got.Text(), err)
	}
	if entries := len(ct.Created()); entries != 0 {
		t.Fatalf("%d tools created", entries)
	}
}

func TestCreateToolBudgetIsPerRun(t *testing.T) {
	bad := turn(draft{Name: "t1", Source: `function run() { return 1 }`, SelfTests: []map[string]any{{"args": map[string]any{}, "expect": 2}}})
	good := turn(draft{Name: "t2", Source: `function run() { return 2 }`})
	w := scripted.New(bad, good, good)
	b := newBuilder(t, w, func(o *Options) { o.NoStaging = true })

	run1 := b.CreateTool(hostRegistry(t), CreateToolOptions{Budget: 2})
	if res := callCreate(t, run1, `{"capability":"x"}`); !res.IsError || !strings.Contains(res.Text(), "self-test 1 failed") {
		t.Fatalf("first: %s", res.Text())
	}
	if res := callCreate(t, run1, `{"capability":"x"}`); res.IsError {
		t.Fatalf("second: %s", res.Text())
	}
	res := callCreate(t, run1, `{"capability":"x"}`)
	if !res.IsError || !strings.Contains(res.Text(), "budget exhausted for this run (2 per run)") || w.Calls() != 2 {
		t.Fatalf("third: %s (writer calls %d)", res.Text(), w.Calls())
	}
	// A new run gets a new budget.
	run2 := b.CreateTool(hostRegistry(t), CreateToolOptions{Budget: 2})
	if res := callCreate(t, run2, `{"capability":"x"}`); res.IsError {
		t.Fatalf("new run: %s", res.Text())
	}
}

func TestCreateToolBadArguments(t *testing.T) {
	b := newBuilder(t, scripted.New(), nil)
	ct := b.CreateTool(hostRegistry(t), CreateToolOptions{})
	for _, args := range []string{`{}`, `not json`, `{"capability":"x","language":"cobol"}`} {
		if res := callCreate(t, ct, args); !res.IsError {
			t.Errorf("%s: %s", args, res.Text())
		}
	}
	if ct.Used() != 0 {
		t.Fatalf("bad arguments spent the budget")
	}
	var spec struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(ct.Spec().InputSchema, &spec); err != nil || spec.Properties["capability"] == nil {
		t.Fatalf("spec %s", ct.Spec().InputSchema)
	}
}
