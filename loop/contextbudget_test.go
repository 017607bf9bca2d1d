package loop_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// countingMemory counts Compact calls and keeps every message.
type countingMemory struct{ n atomic.Int32 }

func (m *countingMemory) Compact(_ context.Context, msgs []llm.Message) ([]llm.Message, *llm.Usage, error) {
	m.n.Add(1)
	return msgs, nil, nil
}

func (m *countingMemory) Recall(context.Context, string, int) ([]llm.Message, error) { return nil, nil }

// Once a model call's input tokens reach ContextShare of ContextWindow,
// the memory is compacted and old tool results are pruned from what the
// model is sent, for the rest of the run; below it nothing changes.
func TestContextBudget(t *testing.T) {
	var n atomic.Int32
	echo := countingTool(t, "echo", &n, strings.Repeat("result text ", 20), tool.Flags{})
	turn := func(id string, input int64) scripted.Turn {
		return scripted.Turn{ToolCalls: []llm.ToolCall{call(id, "echo", `{}`)}, Usage: &llm.Usage{InputTokens: input, OutputTokens: 1}}
	}
	model := scripted.New(turn("a", 100), turn("b", 200), turn("c", 300), turn("d", 850), turn("e", 900), scripted.Turn{Text: "done"})
	mem := &countingMemory{}
	var events []trace.Event
	a := &loop.Agent{
		Provider: model, Tools: nestedRegistry(t, echo), Knowledge: loop.Knowledge{Memory: mem},
		Bounds: loop.Bounds{MaxSteps: 10, ContextWindow: 1000},
		Tracer: trace.New(familySink(func(ev trace.Event) { events = append(events, ev) })),
	}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	// Compact: once at the start of the run, once when 850 ≥ 800.
	if mem.n.Load() != 2 {
		t.Errorf("the memory compacted %d times, want 2", mem.n.Load())
	}
	full := func(r *llm.Request) int {
		k := 0
		for _, m := range r.Messages {
			for _, res := range m.ToolResults() {
				if strings.HasPrefix(res.Content, "result text") {
					k++
				}
			}
		}
		return k
	}
	reqs := model.Requests()
	// The 4th request reported 850 input tokens: from the 5th on, only
	// the 2 most recent results stay in full.
	for i, want := range []int{0, 1, 2, 3, 2, 2} {
		if got := full(reqs[i]); got != want {
			t.Errorf("request %d keeps %d results in full, want %d", i+1, got, want)
		}
	}
	budget := 0
	for _, ev := range events {
		if ev.Type == trace.ContextBudget {
			budget++
			if p := payload[trace.Memory](t, ev); p.InputTokens != 850 || p.Status != "compacted, pruned" {
				t.Errorf("context_budget event %+v", ev.Payload)
			}
		}
	}
	if budget != 1 {
		t.Errorf("%d context_budget events, want 1", budget)
	}
	for model, want := range map[string]int64{"claude-sonnet-4-20250514": 200_000, "gpt-4o-mini": 128_000, "gpt-4.1-mini": 1_047_576, "gemini-2.5-flash": 1_048_576, "mystery-7b": 0} {
		if got := loop.ContextWindowFor(model); got != want {
			t.Errorf("ContextWindowFor(%q) = %d, want %d", model, got, want)
		}
	}
	if err := (loop.Bounds{ContextShare: 1.5}).Validate(); err == nil {
		t.Error("a share above 1 is valid")
	}
}
