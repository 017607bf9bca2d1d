package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
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
	checkFamily(ev)
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

// wrongFamily lists the events, seen by any test's collector or
// familySink, whose payload is not the family of their type: read back
// from a trace file, such an event would be another value (its fields
// lost). TestMain fails the package when there is one.
var wrongFamily struct {
	sync.Mutex
	events []string
}

// checkFamily reads ev back from its JSON line and records it in
// wrongFamily when it differs.
func checkFamily(ev trace.Event) {
	b, err := json.Marshal(ev)
	var back trace.Event
	if err == nil {
		err = json.Unmarshal(b, &back)
	}
	if err != nil || !reflect.DeepEqual(back.Payload, ev.Payload) {
		wrongFamily.Lock()
		wrongFamily.events = append(wrongFamily.events, fmt.Sprintf("%s with a %T payload: %s (%v)", ev.Type, ev.Payload, b, err))
		wrongFamily.Unlock()
	}
}

// checked is a sink that checks each event's family first.
type checked struct{ trace.Sink }

func (c checked) WriteEvent(ev trace.Event) error {
	checkFamily(ev)
	return c.Sink.WriteEvent(ev)
}

// familySink is trace.SinkFunc(f), checked.
func familySink(f func(trace.Event)) trace.Sink { return checked{trace.SinkFunc(f)} }

// familyJSONL is trace.JSONL(w), checked.
func familyJSONL(w io.Writer) trace.Sink { return checked{trace.JSONL(w)} }

func TestMain(m *testing.M) {
	code := m.Run()
	if len(wrongFamily.events) > 0 {
		fmt.Fprintf(os.Stderr, "events whose payload is not their type's family:\n  %s\n", strings.Join(wrongFamily.events, "\n  "))
		code = 1
	}
	os.Exit(code)
}

// payload returns ev's payload as the family P, and fails the test when
// it is another.
func payload[P trace.Payload](t *testing.T, ev trace.Event) P {
	t.Helper()
	p, ok := ev.Payload.(P)
	if !ok {
		t.Fatalf("%s carries a %T payload", ev.Type, ev.Payload)
	}
	return p
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
	if len(runs) != 1 {
		t.Fatalf("run_start = %+v", runs)
	}
	if p := payload[trace.Run](t, runs[0]); runs[0].ParentID != "" || p.Model != "m" || p.MaxSteps != 8 || p.ToolCount != 2 {
		t.Fatalf("run_start = %+v", runs)
	}
	run := runs[0].SpanID
	reqs := col.byType(trace.LLMRequest)
	resps := col.byType(trace.LLMResponse)
	if len(reqs) != 2 || len(resps) != 2 || reqs[0].ParentID != run || resps[0].ParentID != reqs[0].SpanID {
		t.Fatalf("llm spans wrong: %+v / %+v", reqs, resps)
	}
	if p := payload[trace.ModelCall](t, resps[0]); p.InputTokens != 10 || p.ToolCallCount != 2 || p.HasReasoning {
		t.Errorf("llm_response payload = %+v", p)
	}
	if p := payload[trace.ModelCall](t, resps[1]); p.ToolCallCount != 0 || !p.HasReasoning {
		t.Errorf("final llm_response payload = %+v", p)
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
		sp := payload[trace.ToolCall](t, s)
		ep, _ := e.Payload.(trace.ToolCall) // zero when there is no end
		if !ok || ep.CallID != sp.CallID {
			t.Errorf("tool_call_end does not close %s", sp.CallID)
		}
		if sp.Name == "broken" && (!ep.Infrastructure || ep.Status != "error" || ep.Error != "backend died") {
			t.Errorf("infrastructure failure not traced as such: %+v", ep)
		}
		if strings.Contains(sp.Arguments, "abcdefgh12345678") {
			t.Errorf("arguments preview leaks: %q", sp.Arguments)
		}
	}
	end := col.byType(trace.RunEnd)
	if len(end) != 1 {
		t.Fatalf("run_end = %+v", end)
	}
	if p := payload[trace.Run](t, end[0]); end[0].ParentID != run || p.Status != "ok" || p.Steps != 2 || p.InputTokens != 30 {
		t.Fatalf("run_end = %+v", end)
	}
	if out := payload[trace.Run](t, end[0]).Output; strings.Contains(out, "sk-proj-ABCDEFGHIJKLMNOPQRSTUV") || !strings.Contains(out, trace.Redacted) {
		t.Errorf("output preview = %q", out)
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
		if len(end) != 1 || payload[trace.Run](t, end[0]).Status != c.status {
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
	if p := payload[trace.ToolCall](t, cut[0]); p.CallID != "c1" || p.Name != "big" || p.Chars != 500 || p.Limit != 200 {
		t.Errorf("result_truncated payload = %+v", p)
	}
}

// The events no other traced test reaches: a cancelled run, the post-turn
// hook's three, and a call whose outcome the journal does not know, each
// with its family's fields (and checked by checkFamily, as every event of
// these tests is).
func TestTraceCancelHookAndUnknownOutcome(t *testing.T) {
	col := &collector{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&loop.Agent{Provider: scripted.New(text("never")), Tracer: trace.New(col)}).Run(ctx, "go"); !errors.Is(err, loop.ErrCancelled) {
		t.Fatalf("cancelled run: %v", err)
	}
	if c := col.byType(trace.Cancelled); len(c) != 1 || payload[trace.Run](t, c[0]) != (trace.Run{}) {
		t.Errorf("cancelled events = %+v", c)
	}

	col = &collector{}
	hookCalls := 0
	a := &loop.Agent{Provider: scripted.New(text("v1"), text("v2")), Tracer: trace.New(col), Checks: loop.Checks{MaxCorrections: 2, PostTurn: func(context.Context, *loop.Turn) (*llm.Message, error) {
		if hookCalls++; hookCalls == 1 {
			m := llm.UserText("Cite your sources.")
			return &m, nil
		}
		return nil, errors.New("checker down")
	}},
	}
	if res, err := a.Run(context.Background(), "go"); err != nil || res.Output != "v2" {
		t.Fatalf("run with a post-turn hook: %+v, %v", res, err)
	}
	invoked, corrections, failures := col.byType(trace.HookInvoked), col.byType(trace.HookCorrection), col.byType(trace.HookError)
	if len(invoked) != 2 || len(corrections) != 1 || len(failures) != 1 {
		t.Fatalf("hook events: %d invoked, %d corrections, %d errors", len(invoked), len(corrections), len(failures))
	}
	if p := payload[trace.Hook](t, invoked[1]); p.Step != 2 || p.Corrections != 1 {
		t.Errorf("second post_turn_hook_invoked = %+v", p)
	}
	if p := payload[trace.Hook](t, corrections[0]); corrections[0].ParentID != invoked[0].SpanID || p.Step != 1 || p.Content != "Cite your sources." {
		t.Errorf("post_turn_hook_correction = %+v, %+v", corrections[0], p)
	}
	if p := payload[trace.Hook](t, failures[0]); failures[0].ParentID != invoked[1].SpanID || !strings.Contains(p.Error, "checker down") {
		t.Errorf("post_turn_hook_error = %+v, %+v", failures[0], p)
	}

	path := filepath.Join(t.TempDir(), "state.json")
	pay := payTool(tool.Flags{})
	store, err := loop.OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	a = &loop.Agent{Provider: scripted.New(calls(call("c", "pay", `{}`))), Tools: registry(t, pay), Checkpoint: store.Checkpoint, Journal: failingFinish{store.Journal()}}
	if _, err := a.Run(context.Background(), "pay"); !errors.Is(err, loop.ErrJournal) {
		t.Fatalf("first run: %v", err)
	}
	store.Close()
	if store, err = loop.OpenFileStore(path); err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	st, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	col = &collector{}
	b := &loop.Agent{Provider: scripted.New(text("checked")), Tools: registry(t, pay), Tracer: trace.New(col)}
	store.Attach(b)
	if _, err := b.Resume(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if u := col.byType(trace.OutcomeUnknown); len(u) != 1 || payload[trace.ToolCall](t, u[0]) != (trace.ToolCall{Step: 1, Name: "pay", CallID: "c"}) {
		t.Errorf("outcome_unknown events = %+v", u)
	}
}

// Tracing to a JSONL sink costs a run one allocation per event (its span
// id) and three per tool call (the context carrying the call's span, two,
// and the string of its arguments' preview), and no more: each payload is
// written where it is, never copied to the heap.
func TestTracingAllocatesOnlySpans(t *testing.T) {
	const steps = 4
	p := scripted.New(stepScript(steps)...)
	reg := registry(t, nopTool{})
	allocs := func(tr *trace.Tracer) float64 {
		a := &loop.Agent{Provider: p, Tools: reg, Bounds: loop.Bounds{MaxSteps: steps}, Tracer: tr}
		return testing.AllocsPerRun(20, func() {
			p.Reset()
			if res, err := a.Run(context.Background(), "go"); err != nil || res.Steps != steps {
				t.Fatalf("run: %v (%+v)", err, res)
			}
		})
	}
	events := 0
	p.Reset()
	if _, err := (&loop.Agent{Provider: p, Tools: reg, Bounds: loop.Bounds{MaxSteps: steps}, Tracer: trace.New(trace.SinkFunc(func(trace.Event) { events++ }))}).Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	untraced, traced := allocs(nil), allocs(trace.New(trace.JSONL(io.Discard)))
	t.Logf("%d events: %v allocations traced, %v untraced", events, traced, untraced)
	if want := float64(events + 3*(steps-1)); traced-untraced > want {
		t.Errorf("tracing %d events and %d tool calls allocated %v times, want at most %v", events, steps-1, traced-untraced, want)
	}
}
