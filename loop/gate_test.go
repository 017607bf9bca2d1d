package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// The gate's promise (docs/GOVERNANCE.md, "Code mode's gate and
// approvals"): a call a tool makes through CallNested passes what a call of
// the model passes, an approval applies to the call approved and no other,
// and every call of a program runs at most once across its re-runs.

// program is a tool that, as a guest with tools: grants does, makes the
// nested calls script returns for its n-th execution (from 1), and returns
// what each gave it, one line per call.
func program(t *testing.T, runs *atomic.Int32, script func(n int32) []tool.Call) tool.Tool {
	t.Helper()
	tl, err := tool.New("program", "Runs a program that calls tools.", func(ctx context.Context, _ struct{}) (string, error) {
		n := runs.Add(1)
		var out []string
		for _, c := range script(n) {
			res, err := loop.CallNested(ctx, c)
			if err != nil {
				return "", err
			}
			mark := "ok"
			if res.IsError {
				mark = "error"
			}
			out = append(out, c.Name+" "+mark+": "+res.Text())
		}
		return strings.Join(out, "\n"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// recorder is a tool that counts its calls by arguments and answers with
// them.
type recorder struct {
	name  string
	flags tool.Flags
	mu    sync.Mutex
	calls []string
}

func (r *recorder) tool(t *testing.T) tool.Tool {
	t.Helper()
	tl, err := tool.New(r.name, "A tool with an effect.", func(_ context.Context, in struct {
		Path string `json:"path,omitempty"`
	}) (string, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.calls = append(r.calls, in.Path)
		return r.name + " " + in.Path, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool.WithFlags(tl, r.flags)
}

func (r *recorder) ran() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

func programTurns() []scripted.Turn {
	return []scripted.Turn{
		{ToolCalls: []llm.ToolCall{call("c1", "program", `{}`)}},
		{Text: "done"},
	}
}

func nc(name, args string) tool.Call { return tool.Call{Name: name, Arguments: json.RawMessage(args)} }

// Class (a): a program pauses for the approval of one call and, run again
// after the decision, makes another under the same id. The approval was
// for the call shown: the other does not run.
func TestNestedApprovalIsBoundToTheCallApproved(t *testing.T) {
	var runs atomic.Int32
	write := &recorder{name: "write_file"}
	a := &loop.Agent{
		Provider: scripted.New(programTurns()...),
		Tools: nestedRegistry(t, write.tool(t), program(t, &runs, func(n int32) []tool.Call {
			if n == 1 {
				return []tool.Call{nc("write_file", `{"path":"report.txt"}`)}
			}
			return []tool.Call{nc("write_file", `{"path":"deploy.sh"}`)}
		})),
		Checks: loop.Checks{Policy: policyFor(map[string]loop.Verdict{"write_file": loop.VerdictApprove})},
	}
	res, err := a.Run(context.Background(), "go")
	if !errors.Is(err, loop.ErrApprovalRequired) {
		t.Fatalf("no pause: %v", err)
	}
	p := res.State.Pending[0]
	if p.Call.ID != "c1/1" || !strings.Contains(string(p.Call.Arguments), "report.txt") || p.Digest() == "" {
		t.Fatalf("pending %+v", p)
	}
	res, err = a.Resume(context.Background(), res.State, loop.Approve("c1/1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := write.ran(); len(got) != 0 {
		t.Fatalf("a call other than the one approved ran: %q", got)
	}
	if got := toolResultText(res.Messages, "c1"); !strings.Contains(got, "ApprovalMismatch") {
		t.Errorf("the program saw %q", got)
	}
}

// Class (a), the other side: the same program, making the same call on
// its re-run, gets it run once.
func TestNestedApprovedCallRunsOnce(t *testing.T) {
	var runs atomic.Int32
	write := &recorder{name: "write_file"}
	a := &loop.Agent{
		Provider: scripted.New(programTurns()...),
		Tools: nestedRegistry(t, write.tool(t), program(t, &runs, func(int32) []tool.Call {
			return []tool.Call{nc("write_file", `{"path":"report.txt"}`)}
		})),
		Checks: loop.Checks{Policy: policyFor(map[string]loop.Verdict{"write_file": loop.VerdictApprove})},
	}
	res, _ := a.Run(context.Background(), "go")
	// Keys in another order and other spacing are the same call.
	res.State.Pending[0].Call.Arguments = json.RawMessage(`{ "path" : "report.txt" }`)
	if _, err := a.Resume(context.Background(), res.State, loop.Approve("c1/1")); err != nil {
		t.Fatal(err)
	}
	if got := write.ran(); len(got) != 1 || got[0] != "report.txt" {
		t.Fatalf("write_file ran %q", got)
	}
}

// Class (b): the calls a program made before it paused for approval run
// once: on its re-run they get their recorded results.
func TestNestedCallsBeforeAPauseRunOnce(t *testing.T) {
	var runs atomic.Int32
	send := &recorder{name: "send"}
	pay := &recorder{name: "pay"}
	script := func(int32) []tool.Call {
		return []tool.Call{nc("send", `{"path":"a"}`), nc("send", `{"path":"b"}`), nc("pay", `{"path":"x"}`), nc("send", `{"path":"c"}`)}
	}
	a := &loop.Agent{
		Provider: scripted.New(programTurns()...),
		Tools:    nestedRegistry(t, send.tool(t), pay.tool(t), program(t, &runs, script)),
		Checks:   loop.Checks{Policy: policyFor(map[string]loop.Verdict{"pay": loop.VerdictApprove})},
	}
	res, err := a.Run(context.Background(), "go")
	if !errors.Is(err, loop.ErrApprovalRequired) {
		t.Fatal(err)
	}
	if len(res.State.Nested) != 2 {
		t.Fatalf("the state records %d nested calls, want the 2 made before the pause: %+v", len(res.State.Nested), res.State.Nested)
	}
	// Through the state's JSON form, as a checkpoint and `resume` do.
	b, err := json.Marshal(res.State)
	if err != nil {
		t.Fatal(err)
	}
	st, err := loop.DecodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	res, err = a.Resume(context.Background(), st, loop.Approve("c1/3"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(send.ran(), ","); got != "a,b,c" {
		t.Errorf("send ran for %q, want a,b,c: each once", got)
	}
	if got := pay.ran(); len(got) != 1 {
		t.Errorf("pay ran %d times", len(got))
	}
	want := "send ok: send a\nsend ok: send b\npay ok: pay x\nsend ok: send c"
	if got := toolResultText(res.Messages, "c1"); got != want {
		t.Errorf("the program's result:\n%s\nwant\n%s", got, want)
	}
	if len(res.State.Nested) != 0 {
		t.Errorf("the record outlived its turn: %+v", res.State.Nested)
	}
}

// Class (b), with a journal: a run stopped mid-program (here cancelled
// after the first nested call) resumes without running that call again.
func TestNestedCallsJournaled(t *testing.T) {
	var runs atomic.Int32
	send := &recorder{name: "send"}
	ctx, cancel := context.WithCancel(context.Background())
	j := loop.NewMemoryJournal()
	script := func(int32) []tool.Call { return []tool.Call{nc("send", `{"path":"a"}`), nc("cancel", `{}`)} }
	stop, err := tool.New("cancel", "Stops the run.", func(ctx context.Context, _ struct{}) (string, error) {
		if runs.Load() == 1 {
			cancel()
			<-ctx.Done()
			return "", ctx.Err()
		}
		return "go on", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A program whose only effects are its nested calls, each journaled,
	// may run again: it is idempotent as a whole.
	prog, err := tool.New("program", "Runs a program.", func(ctx context.Context, _ struct{}) (string, error) {
		runs.Add(1)
		var out []string
		for _, c := range script(runs.Load()) {
			res, err := loop.CallNested(ctx, c)
			if err != nil {
				return "", err
			}
			out = append(out, c.Name+": "+res.Text())
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return strings.Join(out, "\n"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a := &loop.Agent{
		Provider: scripted.New(programTurns()...),
		Tools:    nestedRegistry(t, send.tool(t), tool.WithFlags(stop, tool.Flags{Idempotent: true}), tool.WithFlags(prog, tool.Flags{Idempotent: true})),
		Journal:  j,
	}
	res, err := a.Run(ctx, "go")
	if !errors.Is(err, loop.ErrCancelled) {
		t.Fatalf("not cancelled: %v", err)
	}
	b, _ := json.Marshal(res.State)
	st, err := loop.DecodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	a.Provider = scripted.New(scripted.Turn{Text: "done"})
	res, err = a.Resume(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if got := send.ran(); len(got) != 1 {
		t.Errorf("send ran %d times across the interruption, want once", len(got))
	}
	if got := toolResultText(res.Messages, "c1"); got != "send: send a\ncancel: go on" {
		t.Errorf("the program's result: %q", got)
	}
}

// A journal entry answers only the call it was recorded for: a re-run that
// makes another call under a journaled id is refused.
func TestJournalRefusesAnotherCallUnderARecordedID(t *testing.T) {
	var runs atomic.Int32
	send := &recorder{name: "send"}
	j := loop.NewMemoryJournal()
	a := &loop.Agent{
		Provider: scripted.New(programTurns()...),
		Tools: nestedRegistry(t, send.tool(t), program(t, &runs, func(n int32) []tool.Call {
			return []tool.Call{nc("send", fmt.Sprintf(`{"path":"%d"}`, n))}
		})),
		Journal: j,
	}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	run := j.Entries()[0].RunID
	// A second run under the same id (a resume after a crash whose state
	// lost the record) makes another call as c1/1.
	a.Provider = scripted.New(programTurns()...)
	a.NewRunID = func() string { return run }
	if err := j.Record(context.Background(), loop.JournalEntry{RunID: run, CallID: "c1", Name: "program", Status: loop.JournalStarted}); err != nil {
		t.Fatal(err)
	}
	// Make c1 itself run again (it is "started", and program is idempotent
	// for this test's purpose).
	res, err := (&loop.Agent{Provider: a.Provider, Tools: nestedRegistry(t, send.tool(t), tool.WithFlags(program(t, &runs, func(n int32) []tool.Call {
		return []tool.Call{nc("send", `{"path":"other"}`)}
	}), tool.Flags{Idempotent: true})), Journal: j, NewRunID: a.NewRunID}).Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolResultText(res.Messages, "c1"); !strings.Contains(got, "Diverged") {
		t.Errorf("the program got %q, want the divergence refused", got)
	}
	if got := send.ran(); len(got) != 1 {
		t.Errorf("send ran %q", got)
	}
}

// Class (c): the loop guard and MaxToolCalls count nested calls.
func TestNestedCallsCountInTheGuards(t *testing.T) {
	var runs atomic.Int32
	send := &recorder{name: "send"}
	fifty := func(int32) []tool.Call {
		calls := make([]tool.Call, 50)
		for i := range calls {
			calls[i] = nc("send", `{"path":"same"}`)
		}
		return calls
	}
	a := &loop.Agent{
		Provider: scripted.New(programTurns()...),
		Tools:    nestedRegistry(t, send.tool(t), program(t, &runs, fifty)),
		Bounds:   loop.Bounds{MaxRepeatedToolCalls: 2},
	}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(send.ran()); got != 2 {
		t.Errorf("a guard of 2 let %d identical nested calls run", got)
	}
	if got := toolResultText(res.Messages, "c1"); !strings.Contains(got, "RepeatedCall") {
		t.Errorf("the program did not see the guard's refusal: %.200q", got)
	}

	send2 := &recorder{name: "send"}
	distinct := func(int32) []tool.Call {
		calls := make([]tool.Call, 50)
		for i := range calls {
			calls[i] = nc("send", fmt.Sprintf(`{"path":"%d"}`, i))
		}
		return calls
	}
	a = &loop.Agent{
		Provider: scripted.New(
			scripted.Turn{ToolCalls: []llm.ToolCall{call("c1", "program", `{}`)}},
			scripted.Turn{ToolCalls: []llm.ToolCall{call("c2", "send", `{"path":"model"}`)}},
			scripted.Turn{Text: "done"},
		),
		Tools:  nestedRegistry(t, send2.tool(t), program(t, new(atomic.Int32), distinct)),
		Bounds: loop.Bounds{MaxToolCalls: 5},
	}
	res, err = a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	// The program's call counts as one; four of its nested calls run; the
	// model's next call is over the bound.
	if got := len(send2.ran()); got != 4 {
		t.Errorf("MaxToolCalls 5 let %d nested calls run, want 4", got)
	}
	if got := toolResultText(res.Messages, "c2"); !strings.Contains(got, "ToolCallLimit") {
		t.Errorf("the model's call after the program: %q", got)
	}
	if res.State.ToolCalls != 5 {
		t.Errorf("the state counts %d tool calls, want 5", res.State.ToolCalls)
	}
}

// Class (d): the post-tool hooks and the tool-result guardrails see
// nested results: a secret a hook redacts does not come back whole through
// a program.
func TestNestedResultsAreShapedAsTheModelsAre(t *testing.T) {
	var runs atomic.Int32
	secretTool, err := tool.New("vault", "Reads a secret.", func(context.Context, struct{}) (tool.Result, error) {
		res, err := tool.JSON(map[string]string{"key": "sk-live-123456"})
		return res, err
	})
	if err != nil {
		t.Fatal(err)
	}
	var got tool.Result
	prog, err := tool.New("program", "Runs a program.", func(ctx context.Context, _ struct{}) (string, error) {
		runs.Add(1)
		res, err := loop.CallNested(ctx, nc("vault", `{}`))
		got = res
		return res.Text(), err
	})
	if err != nil {
		t.Fatal(err)
	}
	redact := func(_ context.Context, _ llm.ToolCall, r *loop.HookResult) error {
		r.Content = strings.ReplaceAll(r.Content, "sk-live-123456", "[redacted]")
		return nil
	}
	a := &loop.Agent{
		Provider: scripted.New(programTurns()...),
		Tools:    nestedRegistry(t, secretTool, prog),
		Checks:   loop.Checks{PostToolHooks: []loop.PostToolHook{redact}},
	}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(got); strings.Contains(string(b), "sk-live") {
		t.Errorf("the post-tool hook did not apply to a nested result: %s", b)
	}
	if !strings.Contains(got.Text(), "[redacted]") {
		t.Errorf("the program got %q", got.Text())
	}

	// A guardrail that blocks a nested result stops the run, as it does
	// for the model's.
	block := loop.GuardFunc("no-secrets", func(_ context.Context, in *loop.GuardCheck) (loop.GuardVerdict, error) {
		if strings.Contains(in.Text, "sk-live") {
			return loop.GuardVerdict{Action: loop.GuardBlock, Reason: "a secret"}, nil
		}
		return loop.GuardVerdict{}, nil
	})
	a = &loop.Agent{
		Provider: scripted.New(programTurns()...),
		Tools:    nestedRegistry(t, secretTool, prog),
		Checks:   loop.Checks{ToolResultGuardrails: []loop.Guardrail{block}},
	}
	_, err = a.Run(context.Background(), "go")
	var ge *loop.GuardrailError
	if !errors.As(err, &ge) || ge.Stage != loop.GuardToolResult {
		t.Fatalf("a guardrail's block of a nested result did not stop the run: %v", err)
	}
	if strings.Contains(got.Text(), "sk-live") {
		t.Errorf("the program got the blocked text: %q", got.Text())
	}
}

// The pre-tool hooks see nested calls too: a hook that denies a tool
// denies it inside a program.
func TestNestedCallsPassThePreToolHooks(t *testing.T) {
	var runs atomic.Int32
	send := &recorder{name: "send"}
	deny := func(_ context.Context, c *loop.HookCall) (loop.HookDecision, error) {
		if c.Call.Name == "send" {
			return loop.HookDecision{Deny: "no sending"}, nil
		}
		return loop.HookDecision{}, nil
	}
	a := &loop.Agent{
		Provider: scripted.New(programTurns()...),
		Tools:    nestedRegistry(t, send.tool(t), program(t, &runs, func(int32) []tool.Call { return []tool.Call{nc("send", `{}`)} })),
		Checks:   loop.Checks{PreToolHooks: []loop.PreToolHook{deny}},
	}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if len(send.ran()) != 0 || !strings.Contains(toolResultText(res.Messages, "c1"), "ToolHookDenied: no sending") {
		t.Errorf("send ran %d times; the program saw %q", len(send.ran()), toolResultText(res.Messages, "c1"))
	}
}

// An approval given for a model's call is bound to the call as the person
// saw it: a state edited after the decision (its arguments changed, as a
// tampered checkpoint would be) does not carry the approval to the new
// arguments.
func TestApprovalOfAModelCallIsBoundToItsArguments(t *testing.T) {
	pay := &recorder{name: "pay"}
	a := &loop.Agent{
		Provider: scripted.New(
			scripted.Turn{ToolCalls: []llm.ToolCall{call("c1", "pay", `{"path":"10 EUR"}`)}},
			scripted.Turn{Text: "done"},
		),
		Tools:  nestedRegistry(t, pay.tool(t)),
		Checks: loop.Checks{Policy: policyFor(map[string]loop.Verdict{"pay": loop.VerdictApprove})},
	}
	res, err := a.Run(context.Background(), "go")
	if !errors.Is(err, loop.ErrApprovalRequired) {
		t.Fatal(err)
	}
	// The resume's checkpoint before the tools run fails: the run stops
	// holding the decision, as a crash at that point leaves it.
	a.Checkpoint = func(context.Context, *loop.RunState) error { return errors.New("disk full") }
	_, err = a.Resume(context.Background(), res.State, loop.Approve("c1"))
	var re *loop.RunError
	if !errors.As(err, &re) || re.State.Decisions["c1"].Verdict != loop.VerdictApprove {
		t.Fatalf("want a failed checkpoint holding the decision: %v", err)
	}
	st := re.State.Clone()
	for i := range st.Messages {
		for j := range st.Messages[i].Parts {
			if tc := st.Messages[i].Parts[j].ToolCall; tc != nil && tc.ID == "c1" {
				tc.Arguments = json.RawMessage(`{"path":"10000 EUR"}`)
			}
		}
	}
	st.Pending = nil
	a.Checkpoint = nil
	res, err = a.Resume(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if got := pay.ran(); len(got) != 0 {
		t.Fatalf("the approval of 10 EUR paid %q", got)
	}
	if got := toolResultText(res.Messages, "c1"); !strings.Contains(got, "ApprovalMismatch") {
		t.Errorf("the model saw %q", got)
	}
}

// A program that, run again after a pause, makes at a recorded place a
// call other than the one recorded is refused there: the recorded result
// is not handed to another call, and the other call does not run.
func TestNestedRerunThatDivergesIsRefused(t *testing.T) {
	var runs atomic.Int32
	send := &recorder{name: "send"}
	pay := &recorder{name: "pay"}
	a := &loop.Agent{
		Provider: scripted.New(programTurns()...),
		Tools: nestedRegistry(t, send.tool(t), pay.tool(t), program(t, &runs, func(n int32) []tool.Call {
			first := `{"path":"a"}`
			if n > 1 {
				first = `{"path":"evil"}`
			}
			return []tool.Call{nc("send", first), nc("pay", `{}`)}
		})),
		Checks: loop.Checks{Policy: policyFor(map[string]loop.Verdict{"pay": loop.VerdictApprove})},
	}
	res, err := a.Run(context.Background(), "go")
	if !errors.Is(err, loop.ErrApprovalRequired) {
		t.Fatal(err)
	}
	res, err = a.Resume(context.Background(), res.State, loop.Approve("c1/2"))
	if err != nil {
		t.Fatal(err)
	}
	if got := send.ran(); len(got) != 1 || got[0] != "a" {
		t.Errorf("send ran for %q, want only the first run's a", got)
	}
	got := toolResultText(res.Messages, "c1")
	if !strings.HasPrefix(got, "send error: Diverged") {
		t.Errorf("the program saw %q", got)
	}
}

// A tool left running past its time limit can no longer call through
// CallNested: its call is over, and what it asks now would run outside
// any turn.
func TestNestedCallAfterTheCallerTimedOut(t *testing.T) {
	send := &recorder{name: "send"}
	late := make(chan tool.Result, 1)
	release := make(chan struct{})
	slow, err := tool.New("slow", "Outlives its limit.", func(ctx context.Context, _ struct{}) (string, error) {
		go func() {
			<-release
			res, _ := loop.CallNested(ctx, nc("send", `{"path":"late"}`))
			late <- res
		}()
		<-ctx.Done()
		return "", ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	a := &loop.Agent{
		Provider: scripted.New(
			scripted.Turn{ToolCalls: []llm.ToolCall{call("c1", "slow", `{}`)}},
			scripted.Turn{Text: "done"},
		),
		Tools:  nestedRegistry(t, send.tool(t), slow),
		Bounds: loop.Bounds{ToolTimeout: 1},
	}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	close(release)
	res := <-late
	if len(send.ran()) != 0 || !res.IsError || !strings.Contains(res.Text(), "CallOver") {
		t.Errorf("a call made after the caller's end: send ran %q, it got %q", send.ran(), res.Text())
	}
}

// A model cannot name a call the way a tool's own calls are named
// ("<call id>/<n>"): its id is replaced, so a decision, a record or a
// journal entry for one can never be taken for the other.
func TestModelCallIDsCannotNameNestedCalls(t *testing.T) {
	var runs atomic.Int32
	pay := &recorder{name: "pay"}
	a := &loop.Agent{
		Provider: scripted.New(
			scripted.Turn{ToolCalls: []llm.ToolCall{call("c1", "program", `{}`), call("c1/1", "pay", `{"path":"x"}`)}},
			scripted.Turn{Text: "done"},
		),
		Tools:  nestedRegistry(t, pay.tool(t), program(t, &runs, func(int32) []tool.Call { return []tool.Call{nc("pay", `{"path":"x"}`)} })),
		Checks: loop.Checks{Policy: policyFor(map[string]loop.Verdict{"pay": loop.VerdictApprove})},
	}
	res, err := a.Run(context.Background(), "go")
	if !errors.Is(err, loop.ErrApprovalRequired) {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range res.State.PendingTurn() {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, ",") != "c1,call_1_2" {
		t.Errorf("the turn's ids: %q, want the model's c1/1 renamed", ids)
	}
}

// A tool that calls itself through CallNested is stopped at a depth no
// other bound would reach (the arguments differ each time, and
// MaxToolCalls is off).
func TestNestedCallsNestAtMostSixteenDeep(t *testing.T) {
	var depth atomic.Int32
	var self tool.Tool
	self, err := tool.New("again", "Calls itself.", func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		depth.Store(max(depth.Load(), int32(in.N)))
		if in.N >= 40 {
			return "bottom", nil // without a bound, the test ends here and fails
		}
		res, err := loop.CallNested(ctx, nc("again", fmt.Sprintf(`{"n":%d}`, in.N+1)))
		if err != nil {
			return "", err
		}
		return res.Text(), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a := &loop.Agent{
		Provider: scripted.New(scripted.Turn{ToolCalls: []llm.ToolCall{call("c1", "again", `{"n":0}`)}}, scripted.Turn{Text: "done"}),
		Tools:    nestedRegistry(t, self),
	}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if d := depth.Load(); d != 16 {
		t.Errorf("the deepest call was at depth %d, want 16", d)
	}
	if got := toolResultText(res.Messages, "c1"); !strings.Contains(got, "NestingLimit") {
		t.Errorf("c1 = %q", got)
	}
}
