package loop_test

import (
	"context"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// taintProbe is a memory that keeps its input and records whether each
// Compact was told the run is tainted (memory.WithTaint).
type taintProbe struct {
	mu   sync.Mutex
	seen []bool
}

func (p *taintProbe) Compact(ctx context.Context, msgs []llm.Message) ([]llm.Message, *llm.Usage, error) {
	p.mu.Lock()
	p.seen = append(p.seen, memory.TaintedContext(ctx))
	p.mu.Unlock()
	return msgs, nil, nil
}

func (p *taintProbe) Recall(context.Context, string, int) ([]llm.Message, error) { return nil, nil }

func (p *taintProbe) compactions() []bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]bool(nil), p.seen...)
}

// TestMemoryCompactsUnderTheRunsTaint: a sub-agent of a tainted run has no
// marker in its messages, only its caller's taint; its memory is told,
// so the facts or summary it keeps from the run are stored untrusted. A
// sub-agent of a clean run compacts clean. Our attack on the memory taint
// of issue 38: taint the run knows but its messages do not show.
func TestMemoryCompactsUnderTheRunsTaint(t *testing.T) {
	for _, tainted := range []bool{true, false} {
		probe := &taintProbe{}
		child := &loop.Agent{
			Provider:  scripted.New(scripted.Turn{Text: "noted"}),
			Knowledge: loop.Knowledge{Memory: probe},
		}
		sub, err := child.AsTool("helper", "Helps.")
		if err != nil {
			t.Fatal(err)
		}
		page := &recorder{name: "fetch", flags: tool.Flags{Untrusted: tainted}}
		parent := &loop.Agent{
			Provider: scripted.New(
				scripted.Turn{ToolCalls: []llm.ToolCall{call("p1", "fetch", `{}`)}},
				scripted.Turn{ToolCalls: []llm.ToolCall{call("p2", "helper", `{"request":"note the account"}`)}},
				scripted.Turn{Text: "done"},
			),
			Tools: nestedRegistry(t, page.tool(t), sub),
		}
		if _, err := parent.Run(context.Background(), "go"); err != nil {
			t.Fatal(err)
		}
		got := probe.compactions()
		if len(got) != 1 || got[0] != tainted {
			t.Errorf("parent tainted %v: the sub-agent's memory compacted with taint %v, want [%v]", tainted, got, tainted)
		}
	}
}
