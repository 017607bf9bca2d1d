package loop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// deadlock bounds the waits of these tests: a wait that runs out fails the
// test (the awaited thing never happened); it is never what passes it.
const deadlock = 10 * time.Second

// pausing streams a scripted provider's answers, and lets a test act at
// chosen points of the stream: after each tool call event (pause) and, for
// the first model call, extra tool calls announced before the script's
// events (announce) that the final answer does not contain.
type pausing struct {
	*scripted.Provider
	pause    func(ctx context.Context, c llm.ToolCall) error
	announce []llm.ToolCall
	// ended is set just before the terminal event of each stream.
	ended atomic.Bool
	calls atomic.Int64
}

func (p *pausing) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		p.ended.Store(false)
		n := p.calls.Add(1)
		if n == 1 {
			for _, c := range p.announce {
				if !yield(llm.StreamEvent{Type: llm.StreamToolCall, ToolCall: &c}, nil) {
					return
				}
				if !p.hold(ctx, c, yield) {
					return
				}
			}
		}
		for ev, err := range p.Provider.Stream(ctx, req) {
			if err == nil && ev.Type == llm.StreamDone {
				p.ended.Store(true)
			}
			if !yield(ev, err) {
				return
			}
			if err == nil && ev.Type == llm.StreamToolCall && !p.hold(ctx, *ev.ToolCall, yield) {
				return
			}
		}
	}
}

func (p *pausing) hold(ctx context.Context, c llm.ToolCall, yield func(llm.StreamEvent, error) bool) bool {
	if p.pause == nil {
		return true
	}
	if err := p.pause(ctx, c); err != nil {
		yield(llm.StreamEvent{}, err)
		return false
	}
	return true
}

// probe is a tool whose behaviour a test scripts, with its context.
type probe struct {
	name  string
	flags tool.Flags
	n     atomic.Int64
	call  func(ctx context.Context, args string) (tool.Result, error)
}

func (p *probe) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: p.name, Description: "probe " + p.name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (p *probe) Flags() tool.Flags { return p.flags }

func (p *probe) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	p.n.Add(1)
	if p.call != nil {
		return p.call(ctx, string(c.Arguments))
	}
	return tool.Text(p.name + " says " + string(c.Arguments)), nil
}

var idempotent = tool.Flags{Idempotent: true}

// events collects trace events.
type events struct {
	mu  sync.Mutex
	evs []trace.Event
}

func (e *events) tracer() *trace.Tracer {
	return trace.New(familySink(func(ev trace.Event) {
		e.mu.Lock()
		e.evs = append(e.evs, ev)
		e.mu.Unlock()
	}))
}

func (e *events) all() []trace.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.evs)
}

func (e *events) of(typ trace.Type) []trace.Event {
	var out []trace.Event
	for _, ev := range e.all() {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func (e *events) runEnd(t *testing.T) trace.Run {
	t.Helper()
	ends := e.of(trace.RunEnd)
	if len(ends) != 1 {
		t.Fatalf("%d run_end events", len(ends))
	}
	return payload[trace.Run](t, ends[0])
}

// drain runs a Stream to its end and returns its events and final error.
func drain(seq iter.Seq2[loop.Event, error]) ([]loop.Event, error) {
	var out []loop.Event
	var last error
	for ev, err := range seq {
		out = append(out, ev)
		last = err
	}
	return out, last
}

func TestEarlyStartBeginsBeforeTheStreamEnds(t *testing.T) {
	checkNoLeak(t)
	started := make(chan struct{})
	lookup := &probe{name: "lookup", flags: idempotent, call: func(context.Context, string) (tool.Result, error) {
		close(started)
		return tool.Text("42"), nil
	}}
	// The stream does not go on past the call until the tool has started:
	// without an early start, the tool phase would never come.
	p := &pausing{Provider: scripted.New(calls(call("c1", "lookup", `{"q":"x"}`)), text("it is 42")),
		pause: func(ctx context.Context, c llm.ToolCall) error {
			select {
			case <-started:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(deadlock):
				return fmt.Errorf("%s did not start while the model was streaming", c.Name)
			}
		}}
	var tr events
	a := &loop.Agent{Provider: p, Tools: registry(t, lookup), Tracer: tr.tracer()}
	evs, err := drain(a.Stream(context.Background(), "go"))
	if err != nil {
		t.Fatal(err)
	}
	if res := evs[len(evs)-1].Result; res == nil || res.Output != "it is 42" {
		t.Fatalf("result = %+v", res)
	}
	if n := lookup.n.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want exactly once", n)
	}
	early := tr.of(trace.ToolCallEarlyStart)
	if len(early) != 1 {
		t.Fatalf("tool_call_early_start events = %+v", early)
	}
	if p := payload[trace.ToolCall](t, early[0]); p.CallID != "c1" || p.Name != "lookup" || p.Step != 1 {
		t.Fatalf("tool_call_early_start events = %+v", early)
	}
	if got := tr.runEnd(t).EarlyToolCalls; got != 1 {
		t.Errorf("run_end early_tool_calls = %d, want 1", got)
	}
	// The trace shows what happened: the early start, then the tool's own
	// span, inside the model call (before llm_response).
	var order []trace.Type
	for _, ev := range tr.all() {
		switch ev.Type {
		case trace.ToolCallEarlyStart, trace.ToolCallStart, trace.LLMResponse:
			if ev.Type != trace.LLMResponse || payload[trace.ModelCall](t, ev).Step == 1 {
				order = append(order, ev.Type)
			}
		}
	}
	want := []trace.Type{trace.ToolCallEarlyStart, trace.ToolCallStart, trace.LLMResponse}
	if !slices.Equal(order, want) {
		t.Errorf("trace order = %v, want %v", order, want)
	}
}

// earlyScript is a turn mixing idempotent and other calls, text, a long
// result and an untrusted one, then an answer.
func earlyScript() []scripted.Turn {
	return []scripted.Turn{
		{Text: "Let me look.", ToolCalls: []llm.ToolCall{
			call("a1", "lookup", `{"q":"a"}`),
			call("a2", "write", `{"v":1}`),
			call("a3", "fetch", `{"url":"u"}`),
			call("a4", "lookup", `{"q":"long"}`),
		}},
		calls(call("b1", "lookup", `{"q":"b"}`)),
		text("done"),
	}
}

func earlyTools(t *testing.T) (*tool.Registry, []*probe) {
	lookup := &probe{name: "lookup", flags: idempotent, call: func(_ context.Context, args string) (tool.Result, error) {
		if args == `{"q":"long"}` {
			return tool.Text(fmt.Sprintf("%0200d", 7)), nil
		}
		return tool.Text("found " + args), nil
	}}
	write := &probe{name: "write"}
	fetch := &probe{name: "fetch", flags: tool.Flags{Idempotent: true, Untrusted: true}}
	return registry(t, lookup, write, fetch), []*probe{lookup, write, fetch}
}

// streamShape is what a consumer sees of a stream event.
type streamShape struct {
	Type    loop.EventType
	Step    int
	Text    string
	Call    string
	Result  string
	IsError bool
	Refused bool
}

func shapes(evs []loop.Event) []streamShape {
	var out []streamShape
	for _, ev := range evs {
		s := streamShape{Type: ev.Type, Step: ev.Step, Text: ev.Text, Refused: ev.Refused}
		if ev.Call != nil {
			s.Call = ev.Call.ID + " " + ev.Call.Name + string(ev.Call.Arguments)
		}
		if ev.ToolResult != nil {
			s.Result, s.IsError = ev.ToolResult.Content, ev.ToolResult.IsError
		}
		out = append(out, s)
	}
	return out
}

func TestEarlyStartIsInvisibleInTheRun(t *testing.T) {
	checkNoLeak(t)
	for _, parallel := range []int{1, 0} {
		t.Run(fmt.Sprintf("MaxParallelTools=%d", parallel), func(t *testing.T) {
			type outcome struct {
				events   []streamShape
				messages []llm.Message
				counts   []int64
				ends     []string // tool_call_end status+content, in call-id order
				early    int
			}
			run := func(maxEarly int) outcome {
				reg, probes := earlyTools(t)
				var tr events
				a := &loop.Agent{Provider: scripted.New(earlyScript()...), Tools: reg, Tracer: tr.tracer(),
					MaxParallelTools: parallel, MaxEarlyTools: maxEarly, Bounds: loop.Bounds{MaxToolResultChars: 120}}
				evs, err := drain(a.Stream(context.Background(), "go"))
				if err != nil {
					t.Fatal(err)
				}
				var o outcome
				o.events = shapes(evs)
				o.messages = evs[len(evs)-1].Result.Messages
				for _, p := range probes {
					o.counts = append(o.counts, p.n.Load())
				}
				for _, ev := range tr.of(trace.ToolCallEnd) {
					p := payload[trace.ToolCall](t, ev)
					o.ends = append(o.ends, p.Name+" "+p.Status+" "+p.Content)
				}
				slices.Sort(o.ends)
				o.early = len(tr.of(trace.ToolCallEarlyStart))
				if got := tr.runEnd(t).EarlyToolCalls; got != o.early {
					t.Errorf("MaxEarlyTools=%d: run_end early_tool_calls = %d, early starts = %d", maxEarly, got, o.early)
				}
				return o
			}
			on, off := run(0), run(-1)
			// lookup a1, fetch a3, lookup a4, lookup b1; never write.
			if on.early != 4 || off.early != 0 {
				t.Fatalf("early starts: %d with early starts on, %d off; want 4 and 0", on.early, off.early)
			}
			on.early, off.early = 0, 0
			if diff := cmp.Diff(off, on, cmp.AllowUnexported(outcome{})); diff != "" {
				t.Fatalf("the run differs with early starts (-off +on):\n%s", diff)
			}
			if want := []int64{3, 1, 1}; !slices.Equal(on.counts, want) {
				t.Errorf("executions = %v, want %v (each call exactly once)", on.counts, want)
			}
		})
	}
}

func TestEarlyStartNeverForOtherTools(t *testing.T) {
	checkNoLeak(t)
	var tr events
	write := &probe{name: "write"}
	p := &pausing{Provider: scripted.New(calls(call("c1", "write", `{}`)), text("ok"))}
	var startedInStream atomic.Bool
	write.call = func(context.Context, string) (tool.Result, error) {
		if !p.ended.Load() {
			startedInStream.Store(true)
		}
		return tool.Text("written"), nil
	}
	// The decision to start early is taken when the call event arrives,
	// before the stream goes on: by the pause, it is visible in the trace.
	var seen []trace.Event
	p.pause = func(context.Context, llm.ToolCall) error {
		seen = tr.of(trace.ToolCallEarlyStart)
		return nil
	}
	a := &loop.Agent{Provider: p, Tools: registry(t, write), Tracer: tr.tracer()}
	if _, err := drain(a.Stream(context.Background(), "go")); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 0 || startedInStream.Load() {
		t.Fatalf("a non-idempotent tool started early (events %+v)", seen)
	}
	if write.n.Load() != 1 {
		t.Fatalf("write ran %d times", write.n.Load())
	}
	if got := tr.runEnd(t).EarlyToolCalls; got != 0 {
		t.Errorf("run_end early_tool_calls = %d without early starts", got)
	}
}

func TestEarlyStartOnlyWhenEveryCheckAllowsIt(t *testing.T) {
	deny := loop.PolicyFunc(func(_ context.Context, in *loop.PolicyInput) (loop.Decision, error) {
		if in.Call.Name == "lookup" {
			return loop.Decision{Verdict: loop.VerdictDeny, Reason: "no lookups"}, nil
		}
		return loop.Decision{}, nil
	})
	approve := loop.PolicyFunc(func(_ context.Context, in *loop.PolicyInput) (loop.Decision, error) {
		if in.Call.Name == "lookup" {
			return loop.Decision{Verdict: loop.VerdictApprove, Reason: "ask first"}, nil
		}
		return loop.Decision{}, nil
	})
	notEarly := loop.PolicyFunc(func(_ context.Context, in *loop.PolicyInput) (loop.Decision, error) {
		if in.Early {
			return loop.Decision{Verdict: loop.VerdictDeny, Reason: "not before the answer is complete"}, nil
		}
		return loop.Decision{}, nil
	})
	repeated := []scripted.Turn{calls(call("c0", "lookup", `{"q":"x"}`)), calls(call("c1", "lookup", `{"q":"x"}`)), text("done")}
	tainting := []scripted.Turn{calls(call("c0", "web", `{}`)), calls(call("c1", "lookup", `{"q":"x"}`)), text("done")}
	for _, tc := range []struct {
		name   string
		turns  []scripted.Turn
		flags  tool.Flags
		agent  func(*loop.Agent)
		result string // what the model sees of c1; "" when the run pauses
		runs   int64  // executions of lookup
	}{
		{name: "policy deny", turns: []scripted.Turn{calls(call("c1", "lookup", `{"q":"x"}`)), text("done")}, flags: idempotent,
			agent: func(a *loop.Agent) { a.Checks.Policy = deny }, result: "ToolPolicyDenied: no lookups"},
		{name: "policy approval", turns: []scripted.Turn{calls(call("c1", "lookup", `{"q":"x"}`)), text("done")}, flags: idempotent,
			agent: func(a *loop.Agent) { a.Checks.Policy = approve }},
		{name: "policy refuses only early checks", turns: []scripted.Turn{calls(call("c1", "lookup", `{"q":"x"}`)), text("done")}, flags: idempotent,
			agent: func(a *loop.Agent) { a.Checks.Policy = notEarly }, result: `lookup says {"q":"x"}`, runs: 1},
		{name: "loop guard", turns: repeated, flags: idempotent,
			agent: func(a *loop.Agent) { a.Bounds.MaxRepeatedToolCalls = 1 }, result: "RepeatedCall: ", runs: 1},
		{name: "loop guard in shadow mode", turns: repeated, flags: idempotent,
			agent: func(a *loop.Agent) { a.Bounds.MaxRepeatedToolCalls, a.Bounds.ShadowGuards = 1, true }, result: `lookup says {"q":"x"}`, runs: 2},
		{name: "trifecta deny", turns: tainting, flags: tool.Flags{Idempotent: true, Egress: true},
			result: "EgressBlocked: "},
		{name: "trifecta approve", turns: tainting, flags: tool.Flags{Idempotent: true, Egress: true},
			agent: func(a *loop.Agent) { a.Bounds.Trifecta = loop.TrifectaApprove }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkNoLeak(t)
			lookup := &probe{name: "lookup", flags: tc.flags}
			web := &probe{name: "web", flags: tool.Flags{Untrusted: true}}
			var tr events
			a := &loop.Agent{Provider: scripted.New(tc.turns...), Tools: registry(t, lookup, web), Tracer: tr.tracer()}
			if tc.agent != nil {
				tc.agent(a)
			}
			evs, err := drain(a.Stream(context.Background(), "go"))
			for _, ev := range tr.of(trace.ToolCallEarlyStart) {
				if payload[trace.ToolCall](t, ev).CallID == "c1" {
					t.Fatalf("c1 started early although a check refused it")
				}
			}
			if got := lookup.n.Load(); got != tc.runs {
				t.Errorf("lookup ran %d times, want %d", got, tc.runs)
			}
			res := evs[len(evs)-1].Result
			if tc.result == "" {
				if !errors.Is(err, loop.ErrApprovalRequired) || len(res.Pending) != 1 || res.Pending[0].Call.ID != "c1" {
					t.Fatalf("err = %v, pending = %+v; want a pause for c1", err, res.Pending)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, r := range toolResults(res.Messages) {
				if r.CallID == "c1" {
					got = r.Content
				}
			}
			if len(got) < len(tc.result) || got[:len(tc.result)] != tc.result {
				t.Errorf("c1's result = %q, want it to start with %q", got, tc.result)
			}
		})
	}
}

func TestEarlyStartRefusedByTheToolPhaseIsDiscarded(t *testing.T) {
	checkNoLeak(t)
	// Two identical calls in one turn with a loop guard of 1: when the first
	// arrives it is the only one and may start; the tool phase counts both
	// and refuses both. The tool phase wins: the early result is dropped.
	lookup := &probe{name: "lookup", flags: idempotent}
	var tr events
	a := &loop.Agent{Provider: scripted.New(calls(call("c1", "lookup", `{"q":"x"}`), call("c2", "lookup", `{"q":"x"}`)), text("done")),
		Tools: registry(t, lookup), Tracer: tr.tracer(), Bounds: loop.Bounds{MaxRepeatedToolCalls: 1}}
	evs, err := drain(a.Stream(context.Background(), "go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range toolResults(evs[len(evs)-1].Result.Messages) {
		if !r.IsError || r.Content[:len("RepeatedCall: ")] != "RepeatedCall: " {
			t.Errorf("%s: %q, want a RepeatedCall refusal", r.CallID, r.Content)
		}
	}
	starts, drops := tr.of(trace.ToolCallEarlyStart), tr.of(trace.ToolCallEarlyDiscarded)
	if len(starts) != 1 || payload[trace.ToolCall](t, starts[0]).CallID != "c1" {
		t.Fatalf("early starts = %+v, want c1 only", starts)
	}
	if len(drops) != 1 || payload[trace.ToolCall](t, drops[0]).CallID != "c1" || payload[trace.ToolCall](t, drops[0]).Reason != "refused by the tool phase's checks" {
		t.Fatalf("discards = %+v", drops)
	}
	if got := tr.runEnd(t).EarlyToolCalls; got != 0 {
		t.Errorf("run_end early_tool_calls = %d, want 0 (nothing used)", got)
	}
}

func TestEarlyStartOrphanIsCancelled(t *testing.T) {
	checkNoLeak(t)
	running := make(chan struct{})
	var cancelled atomic.Bool
	slow := &probe{name: "slow", flags: idempotent, call: func(ctx context.Context, args string) (tool.Result, error) {
		close(running)
		select {
		case <-ctx.Done():
			cancelled.Store(true)
			return tool.Result{}, ctx.Err()
		case <-time.After(deadlock):
			return tool.Text("never cancelled"), nil
		}
	}}
	lookup := &probe{name: "lookup", flags: idempotent}
	// The stream announces "ghost", which the final answer lacks.
	p := &pausing{Provider: scripted.New(calls(call("c1", "lookup", `{}`)), text("done")),
		announce: []llm.ToolCall{call("ghost", "slow", `{}`)},
		pause: func(ctx context.Context, c llm.ToolCall) error {
			if c.ID != "ghost" {
				return nil
			}
			select {
			case <-running:
				return nil
			case <-time.After(deadlock):
				return errors.New("the orphan never started")
			}
		}}
	var tr events
	a := &loop.Agent{Provider: p, Tools: registry(t, slow, lookup), Tracer: tr.tracer()}
	evs, err := drain(a.Stream(context.Background(), "go"))
	if err != nil {
		t.Fatal(err)
	}
	// The run waited for the orphan: it has seen its cancellation by now.
	if !cancelled.Load() {
		t.Fatal("the orphan was not cancelled")
	}
	for _, m := range evs[len(evs)-1].Result.Messages {
		for _, c := range m.ToolCalls() {
			if c.ID == "ghost" {
				t.Fatal("the orphan is in the transcript")
			}
		}
		for _, r := range m.ToolResults() {
			if r.CallID == "ghost" {
				t.Fatal("the orphan's result is in the transcript")
			}
		}
	}
	for _, ev := range evs {
		if ev.Call != nil && ev.Call.ID == "ghost" {
			t.Fatalf("the stream showed the orphan: %+v", ev)
		}
	}
	drops := tr.of(trace.ToolCallEarlyDiscarded)
	if len(drops) != 1 || payload[trace.ToolCall](t, drops[0]).CallID != "ghost" || payload[trace.ToolCall](t, drops[0]).Reason != "not in the model's final answer" {
		t.Fatalf("discards = %+v", drops)
	}
	if got := tr.runEnd(t).EarlyToolCalls; got != 1 {
		t.Errorf("run_end early_tool_calls = %d, want 1 (c1's)", got)
	}
}

func TestEarlyStartEndsWithTheRun(t *testing.T) {
	for _, how := range []string{"consumer stops", "context cancelled", "stream fails", "checkpoint fails"} {
		t.Run(how, func(t *testing.T) {
			checkNoLeak(t)
			running := make(chan struct{})
			var cancelled atomic.Bool
			slow := &probe{name: "slow", flags: idempotent, call: func(ctx context.Context, _ string) (tool.Result, error) {
				close(running)
				<-ctx.Done() // only the end of the run ends it
				cancelled.Store(true)
				return tool.Result{}, ctx.Err()
			}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			turns := []scripted.Turn{{Text: "thinking out loud for a while", ToolCalls: []llm.ToolCall{call("c1", "slow", `{}`)}}, text("done")}
			if how == "stream fails" {
				turns[0].Err, turns[0].MidStream = errors.New("connection reset"), true
			}
			p := &pausing{Provider: scripted.NewWithOptions(scripted.Options{ChunkSize: 4}, turns...)}
			if how == "stream fails" {
				// The call must be announced before the failure: announce it.
				p.announce = []llm.ToolCall{call("c1", "slow", `{}`)}
			}
			p.pause = func(context.Context, llm.ToolCall) error {
				select {
				case <-running:
				case <-time.After(deadlock):
					return errors.New("the call did not start early")
				}
				if how == "context cancelled" {
					cancel()
				}
				return nil
			}
			a := &loop.Agent{Provider: p, Tools: registry(t, slow)}
			if how == "checkpoint fails" {
				// The turn's calls are adopted, then the checkpoint before
				// the tool phase fails: the run ends without awaiting them.
				a.Checkpoint = func(context.Context, *loop.RunState) error { return errors.New("disk full") }
			}
			var last error
			for ev, err := range a.Stream(ctx, "go") {
				last = err
				if how == "consumer stops" && ev.Type == loop.EventToolStart {
					break
				}
			}
			if !cancelled.Load() {
				t.Fatal("the early call outlived the run")
			}
			switch how {
			case "context cancelled":
				if !errors.Is(last, loop.ErrCancelled) {
					t.Errorf("err = %v, want ErrCancelled", last)
				}
			case "stream fails", "checkpoint fails":
				var re *loop.RunError
				if !errors.As(last, &re) {
					t.Errorf("err = %v, want a *RunError", last)
				}
			}
			if n := slow.n.Load(); n != 1 {
				t.Errorf("slow ran %d times", n)
			}
		})
	}
}

func TestEarlyStartsStayWithinMaxParallelTools(t *testing.T) {
	turn := calls(call("c1", "lookup", `{"q":1}`), call("c2", "lookup", `{"q":2}`), call("c3", "write", `{}`), call("c4", "lookup", `{"q":3}`))
	for _, tc := range []struct{ parallel, early, peak int }{{1, 0, 1}, {2, 0, 2}, {8, 2, 2}, {8, 0, 3}} {
		t.Run(fmt.Sprintf("parallel=%d,early=%d", tc.parallel, tc.early), func(t *testing.T) {
			checkNoLeak(t)
			var inflight, peak atomic.Int64
			entered, gate := make(chan struct{}, 8), make(chan struct{})
			lookup := &probe{name: "lookup", flags: idempotent, call: func(ctx context.Context, args string) (tool.Result, error) {
				n := inflight.Add(1)
				for m := peak.Load(); n > m && !peak.CompareAndSwap(m, n); m = peak.Load() {
				}
				entered <- struct{}{}
				<-gate
				inflight.Add(-1)
				return tool.Text("ok " + args), nil
			}}
			// The stream ends only once as many lookups as the bound allows
			// have started; then the gate opens and everything finishes.
			p := &pausing{Provider: scripted.New(turn, text("done"))}
			p.pause = func(_ context.Context, c llm.ToolCall) error {
				if c.ID != "c4" {
					return nil
				}
				for i := range tc.peak {
					select {
					case <-entered:
					case <-time.After(deadlock):
						return fmt.Errorf("only %d lookups started, want %d", i, tc.peak)
					}
				}
				close(gate)
				return nil
			}
			a := &loop.Agent{Provider: p, Tools: registry(t, lookup, &probe{name: "write"}), MaxParallelTools: tc.parallel, MaxEarlyTools: tc.early}
			if _, err := drain(a.Stream(context.Background(), "go")); err != nil {
				t.Fatal(err)
			}
			if got := peak.Load(); got != int64(tc.peak) {
				t.Errorf("at most %d lookups ran at once, want %d", got, tc.peak)
			}
		})
	}
}

func TestEarlyStartAndTheJournal(t *testing.T) {
	checkNoLeak(t)
	// A crash after the early call ran but before the turn was checkpointed:
	// the resumed run asks the model again, gets the same call, and takes
	// its result from the journal instead of running it again.
	lookup := &probe{name: "lookup", flags: idempotent}
	j := &signalJournal{Journal: loop.NewMemoryJournal(), finished: make(chan string, 4)}
	// The first time c2 streams, the stream goes on once c2's result is in
	// the journal: the crash comes after the early call, before the turn
	// is checkpointed.
	var once sync.Once
	p := &pausing{Provider: scripted.New(
		calls(call("c1", "echo", `{"text":"a"}`)),
		calls(call("c2", "lookup", `{"q":"x"}`)),
		calls(call("c2", "lookup", `{"q":"x"}`)), // the same turn, asked again after the crash
		text("done"),
	), pause: func(_ context.Context, c llm.ToolCall) error {
		var err error
		if c.ID == "c2" {
			once.Do(func() {
				for id := ""; id != "c2"; {
					select {
					case id = <-j.finished:
					case <-time.After(deadlock):
						err = errors.New("c2 did not finish early")
						return
					}
				}
			})
		}
		return err
	}}
	var saved *loop.RunState
	crash := errors.New("power cut")
	var tr events
	a := &loop.Agent{Provider: p, Tools: registry(t, echo(t), lookup), Journal: j, Tracer: tr.tracer(),
		Checkpoint: func(_ context.Context, st *loop.RunState) error {
			if st.Step == 2 {
				return crash
			}
			saved = st.Clone()
			return nil
		}}
	if _, err := drain(a.Stream(context.Background(), "go")); !errors.Is(err, loop.ErrCheckpoint) {
		t.Fatalf("err = %v, want the crash", err)
	}
	if lookup.n.Load() != 1 || saved == nil || saved.Step != 1 {
		t.Fatalf("lookup ran %d times; last checkpoint %+v", lookup.n.Load(), saved)
	}
	a.Checkpoint = nil
	evs, err := drain(a.StreamResume(context.Background(), saved))
	if err != nil {
		t.Fatal(err)
	}
	if n := lookup.n.Load(); n != 1 {
		t.Fatalf("lookup ran %d times across the crash, want once", n)
	}
	var got string
	for _, r := range toolResults(evs[len(evs)-1].Result.Messages) {
		if r.CallID == "c2" {
			got = r.Content
		}
	}
	if got != `lookup says {"q":"x"}` {
		t.Fatalf("c2's result after resume = %q", got)
	}
	replays := tr.of(trace.JournalReplay)
	if len(replays) != 1 || payload[trace.ToolCall](t, replays[0]).CallID != "c2" {
		t.Fatalf("journal_replay events = %+v", replays)
	}
}

func TestEarlyStartRecordingReplays(t *testing.T) {
	checkNoLeak(t)
	reg, _ := earlyTools(t)
	var buf bytes.Buffer
	rec := loop.NewRecorder(&buf, loop.RecordOptions{})
	a := &loop.Agent{Provider: scripted.New(earlyScript()...), Tools: reg, Recorder: rec, Bounds: loop.Bounds{MaxToolResultChars: 120}}
	evs, err := drain(a.Stream(context.Background(), "go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	recording, err := loop.ReadRecording(&buf)
	if err != nil {
		t.Fatal(err)
	}
	res, err := recording.Replay(context.Background(), loop.ReplayOptions{})
	if err != nil {
		t.Fatalf("offline replay of a run with early starts: %v", err)
	}
	if diff := cmp.Diff(evs[len(evs)-1].Result.Messages, res.Messages); diff != "" {
		t.Errorf("replayed transcript differs (-recorded +replayed):\n%s", diff)
	}
}

func TestEarlyStartsShareMaxParallelToolsWithTheToolPhase(t *testing.T) {
	checkNoLeak(t)
	// MaxParallelTools 1: "write" comes first in the turn but must wait
	// while "lookup", started early, still runs.
	var lookupRunning atomic.Bool
	var overlapped atomic.Bool
	entered, gate := make(chan struct{}), make(chan struct{})
	lookup := &probe{name: "lookup", flags: idempotent, call: func(context.Context, string) (tool.Result, error) {
		lookupRunning.Store(true)
		close(entered)
		<-gate
		lookupRunning.Store(false)
		return tool.Text("found"), nil
	}}
	write := &probe{name: "write", call: func(context.Context, string) (tool.Result, error) {
		overlapped.Store(lookupRunning.Load())
		return tool.Text("written"), nil
	}}
	p := &pausing{Provider: scripted.New(calls(call("c1", "write", `{}`), call("c2", "lookup", `{}`)), text("done")),
		pause: func(_ context.Context, c llm.ToolCall) error {
			if c.ID != "c2" {
				return nil
			}
			select {
			case <-entered:
				return nil
			case <-time.After(deadlock):
				return errors.New("lookup did not start early")
			}
		}}
	a := &loop.Agent{Provider: p, Tools: registry(t, lookup, write), MaxParallelTools: 1}
	for ev, err := range a.Stream(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == loop.EventToolStart && ev.Call.ID == "c1" {
			// A write that does not wait for the slot runs now, while
			// lookup is held; one that waits runs after the gate opens. The
			// delay only gives a wrong implementation time to show itself.
			time.AfterFunc(20*time.Millisecond, func() { close(gate) })
		}
	}
	if overlapped.Load() {
		t.Fatal("write ran while lookup, started early, was running (MaxParallelTools 1)")
	}
	if lookup.n.Load() != 1 || write.n.Load() != 1 {
		t.Fatalf("executions: lookup %d, write %d", lookup.n.Load(), write.n.Load())
	}
}

// signalJournal reports each finished entry it records.
type signalJournal struct {
	loop.Journal
	finished chan string
}

func (j *signalJournal) Record(ctx context.Context, e loop.JournalEntry) error {
	err := j.Journal.Record(ctx, e)
	if e.Status == loop.JournalFinished {
		j.finished <- e.CallID
	}
	return err
}

// A discarded early call still running when the run ends finishes before
// run_end: no tool span closes after its run's.
func TestEarlyStartEndsBeforeRunEnd(t *testing.T) {
	checkNoLeak(t)
	running := make(chan struct{})
	runEnded := make(chan struct{})
	slow := &probe{name: "slow", flags: idempotent, call: func(ctx context.Context, _ string) (tool.Result, error) {
		close(running)
		<-ctx.Done()
		// A tool slow to honour the cancellation: it returns at run_end,
		// or after a moment when the run waits for it (as it must).
		select {
		case <-runEnded:
		case <-time.After(100 * time.Millisecond):
		}
		return tool.Result{}, ctx.Err()
	}}
	p := &pausing{Provider: scripted.New(text("done")),
		announce: []llm.ToolCall{call("ghost", "slow", `{}`)},
		pause: func(ctx context.Context, c llm.ToolCall) error {
			select {
			case <-running:
				return nil
			case <-time.After(deadlock):
				return errors.New("the orphan never started")
			}
		}}
	var tr events
	var once sync.Once
	tracer := trace.New(familySink(func(ev trace.Event) {
		tr.mu.Lock()
		tr.evs = append(tr.evs, ev)
		tr.mu.Unlock()
		if ev.Type == trace.RunEnd {
			once.Do(func() { close(runEnded) })
		}
	}))
	a := &loop.Agent{Provider: p, Tools: registry(t, slow), Tracer: tracer}
	if _, err := drain(a.Stream(context.Background(), "go")); err != nil {
		t.Fatal(err)
	}
	evs := tr.all()
	if len(evs) == 0 || evs[len(evs)-1].Type != trace.RunEnd {
		var types []trace.Type
		for _, ev := range evs {
			types = append(types, ev.Type)
		}
		t.Fatalf("run_end is not the last event: %v", types)
	}
}

// A tool started early that calls tools through CallNested makes no call
// before the tool phase admitted (and counted) its own: with
// MaxToolCalls 2, the program and one of its calls run, as in a turn
// without early starts.
func TestEarlyStartNestedCallsWaitForTheToolPhase(t *testing.T) {
	checkNoLeak(t)
	send := &recorder{name: "send"}
	var runs atomic.Int32
	prog := tool.WithFlags(program(t, &runs, func(int32) []tool.Call {
		return []tool.Call{nc("send", `{"path":"1"}`), nc("send", `{"path":"2"}`), nc("send", `{"path":"3"}`)}
	}), idempotent)
	var sentDuringStream atomic.Int32
	p := &pausing{Provider: scripted.New(calls(call("c1", "program", `{}`)), text("done")),
		pause: func(ctx context.Context, c llm.ToolCall) error {
			// The stream holds the call's announcement until the program
			// started, then gives it a second to make a call, were it
			// allowed to (with the rule, it cannot: the wait is the whole
			// second, and the test passes either way once it has waited).
			for start := time.Now(); runs.Load() == 0; time.Sleep(time.Millisecond) {
				if time.Since(start) > deadlock {
					return fmt.Errorf("the program did not start early")
				}
			}
			for start := time.Now(); len(send.ran()) == 0 && time.Since(start) < time.Second; {
				time.Sleep(time.Millisecond)
			}
			sentDuringStream.Store(int32(len(send.ran())))
			return nil
		}}
	a := &loop.Agent{Provider: p, Tools: registry(t, send.tool(t), prog), Bounds: loop.Bounds{MaxToolCalls: 2}}
	evs, err := drain(a.Stream(context.Background(), "go"))
	if err != nil {
		t.Fatal(err)
	}
	if n := sentDuringStream.Load(); n != 0 {
		t.Errorf("%d nested calls ran while the model was still streaming", n)
	}
	if got := send.ran(); len(got) != 1 {
		t.Errorf("send ran %q, want one call: the program and it make the 2 MaxToolCalls allows", got)
	}
	if res := evs[len(evs)-1].Result; res == nil || res.State.ToolCalls != 2 {
		t.Errorf("result %+v", res)
	}
}
