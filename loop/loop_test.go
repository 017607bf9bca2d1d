package loop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/google/go-cmp/cmp"
)

func TestRunCallsToolsAndAnswers(t *testing.T) {
	checkNoLeak(t)
	p := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("c1", "echo", `{"text":"hi"}`)}, Usage: usage(10, 2)},
		scripted.Turn{Text: "The tool said hi.", Usage: &llm.Usage{InputTokens: 20, OutputTokens: 5, CachedTokens: 8}},
	)
	a := &loop.Agent{Provider: p, Tools: registry(t, echo(t)), System: "Be brief."}
	res, err := a.Run(context.Background(), "say hi")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "The tool said hi." || res.Steps != 2 || res.StopReason != loop.StopDone {
		t.Fatalf("result = %+v", res)
	}
	want := llm.Usage{InputTokens: 30, OutputTokens: 7, CachedTokens: 8, TotalTokens: 37}
	if res.Usage != want || !res.UsageReported {
		t.Errorf("usage = %+v", res.Usage)
	}
	roles := []llm.Role{}
	for _, m := range res.Messages {
		roles = append(roles, m.Role)
	}
	if !cmp.Equal(roles, []llm.Role{"system", "user", "assistant", "tool", "assistant"}) {
		t.Errorf("roles = %v", roles)
	}
	reqs := p.Requests()
	if got := reqs[0].Messages[0].Text(); got != "Be brief." {
		t.Errorf("system prompt sent = %q", got)
	}
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "echo" {
		t.Errorf("tools sent = %+v", reqs[0].Tools)
	}
	rs := resultsSent(reqs[1])
	if len(rs) != 1 || rs[0].CallID != "c1" || rs[0].Content != "echo: hi" || rs[0].IsError {
		t.Errorf("tool result sent = %+v", rs)
	}
}

func TestResultJSONIsTheCLIContract(t *testing.T) {
	a := &loop.Agent{Provider: scripted.New(scripted.Turn{Text: "4", Usage: usage(3, 1)})}
	res, err := a.Run(context.Background(), "2+2?")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"messages", "output", "steps", "stop_reason", "usage"}, slices.Sorted(maps.Keys(got))); diff != "" {
		t.Fatalf("top-level keys (-want +got):\n%s", diff)
	}
	if string(got["usage"]) != `{"input_tokens":3,"output_tokens":1,"cached_tokens":0,"total_tokens":4}` {
		t.Errorf("usage = %s", got["usage"])
	}
	if string(got["stop_reason"]) != `"done"` || string(got["output"]) != `"4"` || string(got["steps"]) != "1" {
		t.Errorf("result = %s", b)
	}
	var msgs []llm.Message
	if err := json.Unmarshal(got["messages"], &msgs); err != nil || len(msgs) != 3 {
		t.Errorf("messages = %s (%v)", got["messages"], err)
	}
}

func TestDefaultsAndSystemPrompt(t *testing.T) {
	p := scripted.New(text("a"), text("b"), text("c"))
	a := &loop.Agent{Provider: p}
	if _, err := a.Run(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if got := p.Requests()[0].Messages[0].Text(); got != loop.DefaultSystemPrompt {
		t.Errorf("default system prompt = %q", got)
	}
	n := 0
	a.SystemFunc = func(context.Context) (string, error) { n++; return "computed " + string(rune('0'+n)), nil }
	_, _ = a.Run(context.Background(), "x")
	if got := p.Requests()[1].Messages[0].Text(); got != "computed 1" {
		t.Errorf("computed prompt = %q", got)
	}
	a.SystemFunc = func(context.Context) (string, error) { return "", errors.New("db down") }
	if _, err := a.Run(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "system prompt: db down") {
		t.Errorf("SystemFunc error = %v", err)
	}
	if p.Calls() != 2 {
		t.Error("the model was called although the system prompt failed")
	}
	// RunMessages uses the caller's history as is.
	_, _ = a.RunMessages(context.Background(), []llm.Message{llm.UserText("only user")})
	if got := p.Requests()[2].Messages; len(got) != 1 || got[0].Role != llm.RoleUser {
		t.Errorf("RunMessages sent %+v", got)
	}
	if _, err := a.RunMessages(context.Background(), nil); err == nil {
		t.Error("empty history accepted")
	}
	if _, err := a.RunMessages(context.Background(), []llm.Message{{Role: "robot"}}); err == nil || !strings.Contains(err.Error(), "messages[0]") {
		t.Errorf("invalid history: %v", err)
	}
	if _, err := (&loop.Agent{}).Run(context.Background(), "x"); !errors.Is(err, loop.ErrNoProvider) {
		t.Errorf("no provider: %v", err)
	}
	bad := &loop.Agent{Provider: p, Bounds: loop.Bounds{Trifecta: "maybe"}}
	if _, err := bad.Run(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "trifecta_guard") {
		t.Errorf("bad bounds: %v", err)
	}
}

func TestMaxStepsStopsWithResumableState(t *testing.T) {
	loopTurn := calls(call("", "echo", `{"text":"again"}`))
	p := scripted.New(loopTurn, loopTurn, loopTurn, text("finally"))
	a := &loop.Agent{Provider: p, Tools: registry(t, echo(t)), Bounds: loop.Bounds{MaxSteps: 2}}
	res, err := a.Run(context.Background(), "go")
	if !errors.Is(err, loop.ErrMaxSteps) {
		t.Fatalf("err = %v", err)
	}
	var se *loop.StopError
	if !errors.As(err, &se) || se.MaxSteps != 2 || se.State == nil || !strings.Contains(err.Error(), "max_steps=2 exceeded") {
		t.Fatalf("stop error = %#v", err)
	}
	if res == nil || res.StopReason != loop.StopMaxSteps || res.Steps != 2 || res.State != se.State || res.Output != "" {
		t.Fatalf("result = %+v", res)
	}
	a.Bounds.MaxSteps = 4
	res, err = a.Resume(context.Background(), se.State)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "finally" || res.Steps != 4 {
		t.Fatalf("resumed = %+v", res)
	}
}

func TestTokenBudgetStopsWithTypedErrorAndResumes(t *testing.T) {
	checkNoLeak(t)
	p := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("c1", "echo", `{"text":"1"}`)}, Usage: usage(60, 10)},
		scripted.Turn{ToolCalls: []llm.ToolCall{call("c2", "echo", `{"text":"2"}`)}, Usage: usage(80, 10)},
		scripted.Turn{Text: "done", Usage: usage(90, 5)},
	)
	a := &loop.Agent{Provider: p, Tools: registry(t, echo(t)), Bounds: loop.Bounds{TokenBudget: 150}}
	res, err := a.Run(context.Background(), "go")
	var se *loop.StopError
	if !errors.As(err, &se) || !errors.Is(err, loop.ErrTokenBudget) {
		t.Fatalf("err = %v", err)
	}
	if se.Spent != 160 || se.TokenBudget != 150 || !strings.Contains(err.Error(), "token_budget=150 exceeded (spent=160)") {
		t.Errorf("stop error = %+v (%v)", se, err)
	}
	if res.StopReason != loop.StopTokenBudget || res.Steps != 2 || p.Calls() != 2 {
		t.Fatalf("the call that crossed the budget must complete and no further call be made: %+v, calls %d", res, p.Calls())
	}
	// The state survives JSON, and resuming it with a raised budget finishes.
	b, err := json.Marshal(se.State)
	if err != nil {
		t.Fatal(err)
	}
	st, err := loop.DecodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	if st.Step != 2 || st.Usage.InputTokens != 140 || len(st.Messages) != 6 || st.Status != loop.StopTokenBudget {
		t.Fatalf("decoded state = %+v", st)
	}
	a.Bounds.TokenBudget = 1000
	res, err = a.Resume(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "done" || res.Steps != 3 || res.Usage.InputTokens != 230 {
		t.Fatalf("resumed result = %+v", res)
	}
	if got := resultsSent(p.Requests()[2]); len(got) != 2 {
		t.Errorf("resumed request lost history: %d results", len(got))
	}
}

func TestRunStateJSONRoundTrip(t *testing.T) {
	a := &loop.Agent{
		Provider: scripted.New(calls(call("x", "echo", `{"text":"é ✓"}`)), text("ok")),
		Tools:    registry(t, echo(t)),
		Bounds:   loop.Bounds{MaxSteps: 1},
	}
	_, err := a.Run(context.Background(), "go")
	var se *loop.StopError
	if !errors.As(err, &se) {
		t.Fatal(err)
	}
	b1, _ := json.Marshal(se.State)
	st, err := loop.DecodeState(b1)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(st)
	if string(b1) != string(b2) {
		t.Fatalf("not stable:\n%s\n%s", b1, b2)
	}
	for _, want := range []string{`"version":1`, `"run_id":"run_`, `"step":1`, `"status":"max_steps"`} {
		if !strings.Contains(string(b1), want) {
			t.Errorf("state JSON lacks %s: %s", want, b1)
		}
	}
	bad := []string{
		`{"version":2,"messages":[]}`,
		`{"version":1,"messages":[],"surprise":1}`,
		`{"version":1,"messages":[{"role":"robot","parts":[]}]}`,
		`{"version":1,"messages":[],"turn_start":5}`,
		`{"version":1,"messages":[],"decisions":{"nope":{"verdict":"approve"}}}`,
		`{"version":1,"messages":[]} trailing`,
		`not json`,
	}
	for _, s := range bad {
		if _, err := loop.DecodeState([]byte(s)); !errors.Is(err, loop.ErrBadState) {
			t.Errorf("DecodeState(%s) = %v, want ErrBadState", s, err)
		}
	}
	if _, err := a.Resume(context.Background(), &loop.RunState{Version: 9}); !errors.Is(err, loop.ErrBadState) {
		t.Errorf("Resume of a bad state: %v", err)
	}
}

func TestResumeOfADoneRunDoesNotCallTheModel(t *testing.T) {
	p := scripted.New(text("answer"))
	a := &loop.Agent{Provider: p}
	res, err := a.Run(context.Background(), "q")
	if err != nil {
		t.Fatal(err)
	}
	again, err := a.Resume(context.Background(), res.State)
	if err != nil || again.Output != "answer" || again.StopReason != loop.StopDone || p.Calls() != 1 {
		t.Fatalf("resume of done run = %+v, %v (calls %d)", again, err, p.Calls())
	}
}

func TestProviderErrorKeepsState(t *testing.T) {
	perr := &llm.ProviderError{Provider: "scripted", Status: 503, Retryable: true}
	p := scripted.New(calls(call("c1", "echo", `{"text":"a"}`)), scripted.Turn{Err: perr}, text("recovered"))
	a := &loop.Agent{Provider: p, Tools: registry(t, echo(t))}
	res, err := a.Run(context.Background(), "go")
	if res != nil {
		t.Errorf("result on failure: %+v", res)
	}
	var re *loop.RunError
	if !errors.As(err, &re) || !llm.IsRetryable(err) || re.Step != 2 {
		t.Fatalf("err = %#v", err)
	}
	if re.State.Step != 1 || len(re.State.Messages) != 4 {
		t.Fatalf("state after failure = step %d, %d messages", re.State.Step, len(re.State.Messages))
	}
	res, err = a.Resume(context.Background(), re.State)
	if err != nil || res.Output != "recovered" || res.Steps != 2 {
		t.Fatalf("resume after provider error = %+v, %v", res, err)
	}
}

func TestToolCallIDsAreRunUnique(t *testing.T) {
	e := &counter{name: "t"}
	p := scripted.New(
		calls(call("", "t", `{"a":1}`), call("", "t", `{"a":2}`), call("dup", "t", `{}`)),
		calls(call("dup", "t", `{"b":1}`), call("call_1_1", "t", `{}`)),
		text("ok"),
	)
	a := &loop.Agent{Provider: p, Tools: registry(t, e)}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range res.Messages {
		for _, c := range m.ToolCalls() {
			ids = append(ids, c.ID)
		}
	}
	want := []string{"call_1_1", "call_1_2", "dup", "call_2_1", "call_2_2"}
	if !cmp.Equal(ids, want) {
		t.Fatalf("ids = %v, want %v", ids, want)
	}
	var resultIDs []string
	for _, r := range toolResults(res.Messages) {
		resultIDs = append(resultIDs, r.CallID)
	}
	if !cmp.Equal(resultIDs, want) {
		t.Errorf("results answer %v", resultIDs)
	}
	// The provider's own response was not modified.
	if id := p.Requests()[1].Messages[2].ToolCalls()[0].ID; id != "call_1_1" {
		t.Errorf("request carried %q", id)
	}
}

func TestStreamYieldsEventsInOrder(t *testing.T) {
	checkNoLeak(t)
	p := scripted.NewWithOptions(scripted.Options{ChunkSize: 4},
		scripted.Turn{Text: "Let me check.", ToolCalls: []llm.ToolCall{call("a", "echo", `{"text":"1"}`), call("b", "echo", `{"text":"2"}`)}},
		scripted.Turn{Text: "All done here."},
	)
	a := &loop.Agent{Provider: p, Tools: registry(t, echo(t))}
	var kinds []string
	var deltas strings.Builder
	var final *loop.Result
	for ev, err := range a.Stream(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case loop.EventText:
			deltas.WriteString(ev.Text)
			if len(kinds) == 0 || kinds[len(kinds)-1] != "text" {
				kinds = append(kinds, "text")
			}
		case loop.EventToolStart:
			kinds = append(kinds, "start:"+ev.Call.ID)
		case loop.EventToolEnd:
			kinds = append(kinds, "end:"+ev.Call.ID+"="+ev.ToolResult.Content)
		case loop.EventDone:
			kinds = append(kinds, "done")
			final = ev.Result
		}
	}
	want := []string{"text", "start:a", "start:b", "end:a=echo: 1", "end:b=echo: 2", "text", "done"}
	if !cmp.Equal(kinds, want) {
		t.Errorf("events = %v\nwant     %v", kinds, want)
	}
	if deltas.String() != "Let me check.All done here." {
		t.Errorf("deltas = %q", deltas.String())
	}
	if final == nil || final.Output != "All done here." {
		t.Errorf("final = %+v", final)
	}
}

func TestStreamStopEndsWithDoneAndError(t *testing.T) {
	p := scripted.New(calls(call("", "echo", `{"text":"x"}`)), calls(call("", "echo", `{"text":"y"}`)))
	a := &loop.Agent{Provider: p, Tools: registry(t, echo(t)), Bounds: loop.Bounds{MaxSteps: 1}}
	var last loop.Event
	var lastErr error
	n := 0
	for ev, err := range a.Stream(context.Background(), "go") {
		last, lastErr = ev, err
		n++
	}
	if last.Type != loop.EventDone || !errors.Is(lastErr, loop.ErrMaxSteps) || last.Result == nil || last.Result.StopReason != loop.StopMaxSteps {
		t.Fatalf("last = %+v, %v", last, lastErr)
	}
	// A provider failure also ends with a done event, without a result.
	a = &loop.Agent{Provider: scripted.New(scripted.Turn{Err: errors.New("boom")})}
	for ev, err := range a.Stream(context.Background(), "go") {
		last, lastErr = ev, err
	}
	if last.Type != loop.EventDone || last.Result != nil || lastErr == nil {
		t.Fatalf("failure: %+v, %v", last, lastErr)
	}
}

func TestCorruptStreamIsAnError(t *testing.T) {
	a := &loop.Agent{Provider: noDoneProvider{}}
	var lastErr error
	for _, err := range a.Stream(context.Background(), "go") {
		lastErr = err
	}
	if !errors.Is(lastErr, llm.ErrIncompleteStream) {
		t.Fatalf("err = %v", lastErr)
	}
}

// noDoneProvider streams text and ends without a done event.
type noDoneProvider struct{}

func (noDoneProvider) Complete(context.Context, *llm.Request) (*llm.Response, error) {
	return nil, errors.New("unused")
}

func (noDoneProvider) Stream(context.Context, *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		yield(llm.StreamEvent{Type: llm.StreamText, Text: "partial"}, nil)
	}
}

func TestParseBounds(t *testing.T) {
	b, err := loop.ParseBounds([]byte(`{"max_steps":5,"token_budget":1000,"max_tool_result_chars":4000,"prune_tool_results_after":6,"prune_batch":2,"max_repeated_tool_calls":3,"trifecta_guard":"approve","shadow_guards":true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := loop.Bounds{MaxSteps: 5, TokenBudget: 1000, MaxToolResultChars: 4000, PruneToolResultsAfter: 6, PruneBatch: 2, MaxRepeatedToolCalls: 3, Trifecta: loop.TrifectaApprove, ShadowGuards: true}
	if b != want {
		t.Fatalf("bounds = %+v", b)
	}
	out, _ := json.Marshal(b)
	if again, err := loop.ParseBounds(out); err != nil || again != b {
		t.Fatalf("round trip: %+v %v", again, err)
	}
	if out, _ := json.Marshal(loop.Bounds{}); string(out) != "{}" {
		t.Errorf("zero bounds = %s", out)
	}
	for src, want := range map[string]string{
		`{"max_step":5}`:            "unknown field",
		`{"max_steps":-1}`:          "max_steps is -1",
		`{"trifecta_guard":"warn"}`: "trifecta_guard",
		`[]`:                        "cannot unmarshal",
	} {
		if _, err := loop.ParseBounds([]byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseBounds(%s) = %v, want %q", src, err, want)
		}
	}
}

func TestConcurrentRunsShareTracerRecorderAndJournal(t *testing.T) {
	checkNoLeak(t)
	col := &collector{}
	var rec bytes.Buffer
	recorder := loop.NewRecorder(&rec, loop.RecordOptions{})
	journal := loop.NewMemoryJournal()
	p := scripted.NewWithOptions(scripted.Options{PerConversation: true},
		calls(call("", "echo", `{"text":"a"}`), call("", "echo", `{"text":"b"}`)),
		text("done"),
	)
	a := &loop.Agent{Provider: p, Tools: registry(t, echo(t)), Tracer: trace.New(col), Recorder: recorder, Journal: journal}
	const n = 50
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res, err := a.Run(context.Background(), "go"); err != nil || res.Output != "done" {
				t.Errorf("run: %+v %v", res, err)
			}
		}()
	}
	wg.Wait()
	if got := len(col.byType(trace.RunEnd)); got != n {
		t.Errorf("%d run_end events", got)
	}
	if got := len(journal.Entries()); got != 4*n {
		t.Errorf("%d journal entries, want %d", got, 4*n)
	}
	if err := recorder.Err(); err != nil || bytes.Count(rec.Bytes(), []byte(`"kind":"end"`)) != n {
		t.Errorf("recording: %v, %d ends", err, bytes.Count(rec.Bytes(), []byte(`"kind":"end"`)))
	}
}

// panicky is a provider whose Complete panics.
type panicky struct{ llm.Provider }

func (panicky) Complete(context.Context, *llm.Request) (*llm.Response, error) { panic("nil pointer") }

// panicMemory is a memory whose Compact panics.
type panicMemory struct{ fakeMemory }

func (*panicMemory) Compact(context.Context, []llm.Message) ([]llm.Message, *llm.Usage, error) {
	panic("index out of range")
}

func TestHostCodePanicsFailTheStepNotTheProcess(t *testing.T) {
	// Provider: the run fails with a RunError that keeps the state.
	_, err := (&loop.Agent{Provider: panicky{}}).Run(context.Background(), "go")
	var re *loop.RunError
	if !errors.As(err, &re) || re.State == nil || !strings.Contains(err.Error(), "provider panicked: nil pointer") {
		t.Errorf("provider panic: %v", err)
	}
	// System prompt function: the run fails before any model call.
	p := scripted.New(text("never"))
	a := &loop.Agent{Provider: p, SystemFunc: func(context.Context) (string, error) { panic("no config") }}
	if _, err := a.Run(context.Background(), "go"); err == nil || !strings.Contains(err.Error(), "panicked: no config") || p.Calls() != 0 {
		t.Errorf("SystemFunc panic: %v (model calls %d)", err, p.Calls())
	}
	// Memory: fail-open, the run goes on with the original messages.
	var buf bytes.Buffer
	a = &loop.Agent{Provider: scripted.New(text("fine")), Knowledge: loop.Knowledge{Memory: &panicMemory{}}, Tracer: trace.New(familyJSONL(&buf))}
	res, err := a.Run(context.Background(), "go")
	if err != nil || res.Output != "fine" || len(res.Messages) != 3 || !strings.Contains(buf.String(), `"memory panicked: index out of range"`) {
		t.Errorf("memory panic: %+v, %v\n%s", res, err, buf.String())
	}
	// Checkpoint: the run stops with ErrCheckpoint.
	a = &loop.Agent{Provider: scripted.New(text("fine")), Checkpoint: func(context.Context, *loop.RunState) error { panic("disk gone") }}
	if _, err := a.Run(context.Background(), "go"); !errors.Is(err, loop.ErrCheckpoint) || !strings.Contains(err.Error(), "checkpoint panicked: disk gone") {
		t.Errorf("checkpoint panic: %v", err)
	}
}
