package loop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/marker"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

func TestAsToolCountsSubAgentUsageInParentBudget(t *testing.T) {
	checkNoLeak(t)
	var buf bytes.Buffer
	tr := trace.New(familyJSONL(&buf))
	subP := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("s1", "echo", `{"text":"x"}`)}, Usage: usage(100, 20)},
		scripted.Turn{Text: "sub answer", Usage: usage(150, 30)},
	)
	sub := &loop.Agent{Provider: subP, Tools: registry(t, echo(t)), System: "You are the researcher.", Tracer: tr}
	researcher, err := sub.AsTool("researcher", "Research a question.")
	if err != nil {
		t.Fatal(err)
	}
	parentP := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("p1", "researcher", `{"request":"find x"}`)}, Usage: usage(50, 5)},
		scripted.Turn{Text: "never: the budget stops the run first"},
	)
	parent := &loop.Agent{Provider: parentP, Tools: registry(t, researcher), Bounds: loop.Bounds{TokenBudget: 300}, Tracer: tr}
	res, err := parent.Run(context.Background(), "question")
	if !errors.Is(err, loop.ErrTokenBudget) {
		t.Fatalf("delegation bypassed the budget: %v (%+v)", err, res)
	}
	if res.Usage.InputTokens != 300 || res.Usage.OutputTokens != 55 || res.Usage.TotalTokens != 355 {
		t.Fatalf("parent usage = %+v", res.Usage)
	}
	var out struct {
		Output string `json:"output"`
		Steps  int    `json:"steps"`
		Tokens int64  `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(toolResults(res.Messages)[0].Content), &out); err != nil || out.Output != "sub answer" || out.Steps != 2 || out.Tokens != 300 {
		t.Fatalf("tool output = %+v (%v)", out, err)
	}
	// The sub-run is stateless: its own system prompt, then the request.
	sent := subP.Requests()[0].Messages
	if len(sent) != 2 || sent[0].Text() != "You are the researcher." || sent[1].Text() != "find x" {
		t.Errorf("sub-run started with %+v", sent)
	}
	// One trace tree: the sub-run is a child of the parent's tool call.
	var events []trace.Event
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var ev trace.Event
		_ = json.Unmarshal(line, &ev)
		events = append(events, ev)
	}
	var toolSpan string
	for _, ev := range events {
		if ev.Type == trace.ToolCallStart && payload[trace.ToolCall](t, ev).Name == "researcher" {
			toolSpan = ev.SpanID
		}
	}
	found := false
	for _, ev := range events {
		if ev.Type == trace.RunStart && ev.ParentID == toolSpan && toolSpan != "" {
			found = true
		}
	}
	if !found {
		t.Error("the sub-run's run_start is not a child of the delegating tool call")
	}
}

func TestAsToolFailureIsAToolError(t *testing.T) {
	sub := &loop.Agent{Provider: scripted.New(scripted.Turn{Err: &llm.ProviderError{Provider: "scripted", Status: 500, Message: "upstream down"}})}
	helper, _ := sub.AsTool("helper", "Helps.")
	p := scripted.New(calls(call("", "helper", `{"request":"do it"}`)), text("I could not get help."))
	res, err := (&loop.Agent{Provider: p, Tools: registry(t, helper)}).Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	r := toolResults(res.Messages)[0]
	if !r.IsError || !strings.Contains(r.Content, "sub-agent helper failed") || !strings.Contains(r.Content, "upstream down") {
		t.Fatalf("result = %+v", r)
	}

	// A sub-run stopped by a bound is an error result too, and what it
	// spent and read before stopping still counts for the caller: its
	// tokens, and the taint of the untrusted page it fetched.
	bounded := &loop.Agent{
		Provider: scripted.New(scripted.Turn{ToolCalls: []llm.ToolCall{call("s", "fetch", `{}`)}, Usage: usage(100, 10)}),
		Tools:    registry(t, webTool()),
		Bounds:   loop.Bounds{MaxSteps: 1},
	}
	helper, _ = bounded.AsTool("helper", "Helps.")
	p = scripted.New(calls(call("", "helper", `{"request":"do it"}`)), scripted.Turn{Text: "gave up", Usage: usage(5, 1)})
	res, err = (&loop.Agent{Provider: p, Tools: registry(t, helper)}).Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	r = toolResults(res.Messages)[0]
	if !r.IsError || !strings.Contains(r.Content, "sub-agent helper failed: loop: max_steps=1 exceeded") {
		t.Fatalf("bounded sub-run result = %+v", r)
	}
	if res.Usage.InputTokens != 105 || res.Usage.OutputTokens != 11 {
		t.Errorf("the stopped sub-run's spend was not counted: %+v", res.Usage)
	}
	if !res.Tainted {
		t.Error("the stopped sub-run's taint was laundered")
	}
}

func TestDelegateRunsSpecialistsInParallelInRequestOrder(t *testing.T) {
	checkNoLeak(t)
	mk := func(answers ...string) *loop.Agent {
		var turns []scripted.Turn
		for _, a := range answers {
			turns = append(turns, scripted.Turn{Text: a, Usage: usage(10, 1)})
		}
		return &loop.Agent{Provider: scripted.New(turns...)}
	}
	page := &counter{name: "fetch", flags: tool.Flags{Untrusted: true}, reply: func(string) (tool.Result, error) { return tool.Text("a page"), nil }}
	webP := scripted.New(calls(call("", "fetch", `{}`)), scripted.Turn{Text: "web says hi", Usage: usage(5, 5)})
	web := &loop.Agent{Provider: webP, Tools: registry(t, page)}
	d, err := loop.Delegate(map[string]*loop.Agent{"logs": mk("log A", "log B"), "payments": mk("pay A"), "web": web}, loop.DelegateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Spec().Description, "logs, payments, web") {
		t.Errorf("description = %q", d.Spec().Description)
	}
	args := `{"requests":[{"specialist":"logs","request":"1"},{"specialist":"payments","request":"2"},{"specialist":"nobody","request":"3"},{"specialist":"logs","request":"4"},{"specialist":"web","request":"5"}]}`
	p := scripted.New(calls(call("d1", "delegate", args)), text("summary"))
	res, err := (&loop.Agent{Provider: p, Tools: registry(t, d)}).Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	content := toolResults(res.Messages)[0].Content
	if !strings.HasPrefix(content, marker.UntrustedOpen) || !res.Tainted {
		t.Fatalf("a tainted specialist did not taint the caller: %q", content)
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(content, marker.UntrustedOpen+"\n"), "\n"+marker.UntrustedClose)
	var out struct {
		Responses []struct {
			Specialist, Output, Error string
		}
		Tokens int64
	}
	if err := json.Unmarshal([]byte(inner), &out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out.Responses {
		got = append(got, r.Specialist+":"+r.Output+r.Error)
	}
	want := []string{"logs:log A", "payments:pay A", "nobody:Unknown specialist. Available: logs, payments, web.", "logs:log B", "web:web says hi"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("responses %v\nwant %v", got, want)
	}
	if out.Tokens != 43 || res.Usage.TotalTokens != 43 {
		t.Errorf("tokens = %d, parent usage %+v", out.Tokens, res.Usage)
	}
}
