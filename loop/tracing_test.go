package loop_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

type collector struct {
	mu  sync.Mutex
	evs []trace.Event
}

func (c *collector) WriteEvent(ev trace.Event) error {
	c.mu.Lock()
	c.evs = append(c.evs, ev)
	c.mu.Unlock()
	return nil
}

func (c *collector) byType(typ trace.Type) []trace.Event {
	var out []trace.Event
	for _, ev := range c.evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func TestTraceSpanTree(t *testing.T) {
	col := &collector{}
	broken := &counter{name: "broken", reply: func(string) (tool.Result, error) { return tool.Result{}, errors.New("backend died") }}
	p := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("c1", "echo", `{"text":"Authorization: Bearer abcdefgh12345678"}`), call("c2", "broken", `{}`)}, Usage: usage(10, 3)},
		scripted.Turn{Text: "done, key sk-proj-ABCDEFGHIJKLMNOPQRSTUV", Reasoning: "the tools answered", Usage: usage(20, 4)},
	)
	a := &loop.Agent{Provider: p, Tools: registry(t, echo(t), broken), Tracer: trace.New(col), Model: "m"}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	runs := col.byType(trace.RunStart)
	if len(runs) != 1 || runs[0].ParentID != "" || runs[0].Payload.Model != "m" || runs[0].Payload.MaxSteps != 8 || runs[0].Payload.ToolCount != 2 {
		t.Fatalf("run_start = %+v", runs)
	}
	run := runs[0].SpanID
	reqs := col.byType(trace.LLMRequest)
	resps := col.byType(trace.LLMResponse)
	if len(reqs) != 2 || len(resps) != 2 || reqs[0].ParentID != run || resps[0].ParentID != reqs[0].SpanID {
		t.Fatalf("llm spans wrong: %+v / %+v", reqs, resps)
	}
	if resps[0].Payload.InputTokens != 10 || resps[0].Payload.ToolCallCount != 2 || resps[0].Payload.HasReasoning {
		t.Errorf("llm_response payload = %+v", resps[0].Payload)
	}
	if resps[1].Payload.ToolCallCount != 0 || !resps[1].Payload.HasReasoning {
		t.Errorf("final llm_response payload = %+v", resps[1].Payload)
	}
	starts := col.byType(trace.ToolCallStart)
	ends := col.byType(trace.ToolCallEnd)
	if len(starts) != 2 || len(ends) != 2 {
		t.Fatalf("tool events: %d starts %d ends", len(starts), len(ends))
	}
	for _, s := range starts {
		if s.ParentID != reqs[0].SpanID {
			t.Errorf("tool_call_start parent = %s, want the llm_request", s.ParentID)
		}
	}
	endOf := map[string]trace.Event{}
	for _, e := range ends {
		endOf[e.ParentID] = e
	}
	for _, s := range starts {
		e, ok := endOf[s.SpanID]
		if !ok || e.Payload.CallID != s.Payload.CallID {
			t.Errorf("tool_call_end does not close %s", s.Payload.CallID)
		}
		if s.Payload.Name == "broken" && (!e.Payload.Infrastructure || e.Payload.Status != "error" || e.Payload.Error != "backend died") {
			t.Errorf("infrastructure failure not traced as such: %+v", e.Payload)
		}
		if strings.Contains(s.Payload.Arguments, "abcdefgh12345678") {
			t.Errorf("arguments preview leaks: %q", s.Payload.Arguments)
		}
	}
	end := col.byType(trace.RunEnd)
	if len(end) != 1 || end[0].ParentID != run || end[0].Payload.Status != "ok" || end[0].Payload.Steps != 2 || end[0].Payload.InputTokens != 30 {
		t.Fatalf("run_end = %+v", end)
	}
	if strings.Contains(end[0].Payload.Output, "sk-proj-ABCDEFGHIJKLMNOPQRSTUV") || !strings.Contains(end[0].Payload.Output, trace.Redacted) {
		t.Errorf("output preview = %q", end[0].Payload.Output)
	}
	for _, ev := range col.evs {
		if ev.RunID != runs[0].RunID {
			t.Errorf("%s has run id %q", ev.Type, ev.RunID)
		}
	}
}

func TestTraceStopStatuses(t *testing.T) {
	cases := []struct {
		bounds loop.Bounds
		turns  []scripted.Turn
		status string
		event  trace.Type
	}{
		{loop.Bounds{MaxSteps: 1}, []scripted.Turn{calls(call("", "echo", `{"text":"a"}`))}, "max_steps", trace.MaxStepsExceeded},
		{loop.Bounds{TokenBudget: 5}, []scripted.Turn{{ToolCalls: []llm.ToolCall{call("", "echo", `{"text":"a"}`)}, Usage: usage(9, 1)}}, "token_budget", trace.TokenBudgetExceeded},
		{loop.Bounds{}, []scripted.Turn{{Err: errors.New("boom")}}, "error", ""},
	}
	for _, c := range cases {
		col := &collector{}
		a := &loop.Agent{Provider: scripted.New(c.turns...), Tools: registry(t, echo(t)), Bounds: c.bounds, Tracer: trace.New(col)}
		_, _ = a.Run(context.Background(), "go")
		end := col.byType(trace.RunEnd)
		if len(end) != 1 || end[0].Payload.Status != c.status {
			t.Errorf("%s: run_end = %+v", c.status, end)
		}
		if c.event != "" && len(col.byType(c.event)) != 1 {
			t.Errorf("%s: no %s event", c.status, c.event)
		}
	}
}

func TestTracingOffBuildsNoPreviews(t *testing.T) {
	// Without a tracer, a run must not redact or format previews: measured
	// by allocations, which must not grow with the size of tool output.
	big := strings.Repeat("token=abcdefghijkl ", 2000)
	c := &counter{name: "big", reply: func(string) (tool.Result, error) { return tool.Text(big), nil }}
	small := &counter{name: "big", reply: func(string) (tool.Result, error) { return tool.Text("x"), nil }}
	run := func(tl tool.Tool) float64 {
		return testing.AllocsPerRun(20, func() {
			p := scripted.New(calls(call("", "big", `{}`)), text("ok"))
			_, _ = (&loop.Agent{Provider: p, Tools: registry(t, tl)}).Run(context.Background(), "go")
		})
	}
	if a, b := run(c), run(small); a > b+2 {
		t.Fatalf("untraced run allocates with output size: %v vs %v", a, b)
	}
}

func TestTruncationIsTracedUnderTheModelCall(t *testing.T) {
	col := &collector{}
	big := &counter{name: "big", reply: func(string) (tool.Result, error) { return tool.Text(strings.Repeat("é", 500)), nil }}
	p := scripted.New(calls(call("c1", "big", `{}`)), text("ok"))
	a := &loop.Agent{Provider: p, Tools: registry(t, big), Tracer: trace.New(col), Bounds: loop.Bounds{MaxToolResultChars: 200}}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	cut := col.byType(trace.ResultTruncated)
	reqs := col.byType(trace.LLMRequest)
	if len(cut) != 1 || len(reqs) != 2 || cut[0].ParentID != reqs[0].SpanID {
		t.Fatalf("result_truncated = %+v, want one child of the first llm_request", cut)
	}
	if p := cut[0].Payload; p.CallID != "c1" || p.Name != "big" || p.Chars != 500 || p.Limit != 200 {
		t.Errorf("result_truncated payload = %+v", p)
	}
}
