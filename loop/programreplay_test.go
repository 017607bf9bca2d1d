package loop_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/internal/loopwire"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// A program run on its record: each call at a recorded place, with
// JSON-equal arguments, gets the recorded result; another call there is
// refused (Diverged); the first call past the record is noted, not run,
// and it and every later call are refused with ProgramSuspended; calls
// after the end are refused.
func TestReplayProgramContextAnswersFromTheRecord(t *testing.T) {
	record := []loopwire.RecordedCall{
		{Name: "get", Arguments: json.RawMessage(`{"id":1,"tags":["a","b"]}`), Result: tool.Result{Content: []tool.Content{{Type: "text", Text: "one"}}, StructuredContent: json.RawMessage(`{"n":1}`)}},
		{Name: "pay", Arguments: json.RawMessage(`{"n":2}`), Result: tool.Errorf("ToolPolicyDenied: no")},
		{Name: "get"}, // recorded with no arguments: {} is the same call
		{Name: "get", Arguments: json.RawMessage(`{"id":4}`), Result: tool.Text("four")},
	}
	info := loopwire.Call{RunID: "run", Step: 2, CallID: "c1", Name: codemode.ToolName}
	ctx, end := loopwire.ReplayProgramContext(context.Background(), info, false, record)
	if got, ok := loop.CallInfoFrom(ctx); !ok || got != loop.CallInfo(info) {
		t.Fatalf("CallInfoFrom = %+v, %v", got, ok)
	}
	nested := func(name, args string) tool.Result {
		t.Helper()
		res, err := loop.CallNested(ctx, tool.Call{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s %s: %v", name, args, err)
		}
		return res
	}
	if r := nested("get", `{ "tags": ["a", "b"], "id": 1 }`); r.IsError || r.Text() != "one" || string(r.StructuredContent) != `{"n":1}` {
		t.Errorf("call 1 (recorded, arguments spelled otherwise): %+v", r)
	}
	if r := nested("pay", `{"n":2}`); !r.IsError || r.Text() != "ToolPolicyDenied: no" {
		t.Errorf("call 2 (a recorded refusal): %+v", r)
	}
	if r := nested("get", ``); r.IsError {
		t.Errorf("call 3 (no arguments, recorded as none): %+v", r)
	}
	if r := nested("get", `{"id":5}`); !r.IsError || !strings.HasPrefix(r.Text(), "Diverged: call c1/4 of `get`") {
		t.Errorf("call 4 (other arguments than recorded): %+v", r)
	}
	if r := nested("refund", `{"id":9}`); !r.IsError || !strings.HasPrefix(r.Text(), "ProgramSuspended:") || r.Refusal != string(refusal.ProgramSuspended) {
		t.Errorf("call 5 (past the record): %+v", r)
	}
	if r := nested("get", `{"id":1}`); !r.IsError || !strings.HasPrefix(r.Text(), "ProgramSuspended:") || r.Refusal != string(refusal.ProgramSuspended) {
		t.Errorf("call 6 (after the suspension): %+v", r)
	}
	got := end()
	if got.Next == nil || got.Next.ID != "c1/5" || got.Next.Name != "refund" || string(got.Next.Arguments) != `{"id":9}` {
		t.Fatalf("Next = %+v, want refund {\"id\":9} as c1/5", got.Next)
	}
	if got.Report != (loopwire.CallReport{}) {
		t.Errorf("Report = %+v, want nothing reported", got.Report)
	}
	if r := nested("get", `{"id":1}`); !r.IsError || !strings.HasPrefix(r.Text(), "CallOver:") {
		t.Errorf("a call after the end: %+v", r)
	}
}

// A recorded refusal keeps its kind through the record's JSON (a durable
// run's history), so a replayed call-limit refusal still stops the
// program; a tool's own result, JSON and all, carries none.
func TestRecordedCallKeepsTheRefusalKind(t *testing.T) {
	limit := tool.Errorf("ProgramCallLimit: a program may make 2 tool calls")
	limit.Refusal = string(refusal.ProgramCallLimit)
	b, err := json.Marshal([]loopwire.RecordedCall{{Name: "get", Result: limit}, {Name: "get", Result: tool.Errorf("ProgramCallLimit: a tool's own words")}})
	if err != nil {
		t.Fatal(err)
	}
	var back []loopwire.RecordedCall
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[0].Result.Refusal != string(refusal.ProgramCallLimit) || back[1].Result.Refusal != "" || back[0].Result.Text() != limit.Text() {
		t.Fatalf("through JSON %s: %+v", b, back)
	}
	ctx, _ := loopwire.ReplayProgramContext(context.Background(), loopwire.Call{CallID: "c1"}, false, back)
	if r, _ := loop.CallNested(ctx, tool.Call{Name: "get"}); r.Refusal != string(refusal.ProgramCallLimit) {
		t.Errorf("the replayed refusal: %+v", r)
	}
	var forged tool.Result
	if err := json.Unmarshal([]byte(`{"content":[],"isError":true,"refusal":"ProgramSuspended","Refusal":"ProgramSuspended"}`), &forged); err != nil || forged.Refusal != "" {
		t.Errorf("a result's JSON set its refusal kind: %+v, %v", forged, err)
	}
}

// The recorded result a call gets is a copy: a program that alters it
// does not alter the record.
func TestReplayProgramContextCopiesResults(t *testing.T) {
	record := []loopwire.RecordedCall{{Name: "get", Result: tool.Text("kept")}}
	ctx, _ := loopwire.ReplayProgramContext(context.Background(), loopwire.Call{CallID: "c1"}, false, record)
	res, _ := loop.CallNested(ctx, tool.Call{Name: "get"})
	res.Content[0].Text = "changed"
	if record[0].Result.Text() != "kept" {
		t.Fatalf("the record's result became %q", record[0].Result.Text())
	}
}

// A program that needs no call past its record ends with Next nil; its
// context carries the caller's taint, and a recorded untrusted result
// taints it from that call on, as in the run; what the program reports
// (taint, usage) comes back.
func TestReplayProgramContextReportsAndTaint(t *testing.T) {
	record := []loopwire.RecordedCall{{Name: "get", Result: tool.Text("x")}, {Name: "read_mail", Result: tool.Text("mail"), Untrusted: true}}
	for _, tainted := range []bool{false, true} {
		ctx, end := loopwire.ReplayProgramContext(context.Background(), loopwire.Call{CallID: "c1"}, tainted, record)
		var seen []bool
		for _, c := range record {
			seen = append(seen, tool.Tainted(ctx))
			if _, err := loop.CallNested(ctx, tool.Call{Name: c.Name}); err != nil {
				t.Fatal(err)
			}
		}
		seen = append(seen, tool.Tainted(ctx))
		if want := []bool{tainted, tainted, true}; !slices.Equal(seen, want) {
			t.Errorf("tainted %v: the program's context says %v before, between and after its calls; want %v", tainted, seen, want)
		}
		if r := end(); !r.Report.Tainted {
			t.Errorf("tainted %v: the untrusted result did not taint the program's result: %+v", tainted, r)
		}
		ctx, end = loopwire.ReplayProgramContext(context.Background(), loopwire.Call{CallID: "c1"}, tainted, record[:1])
		if _, err := loop.CallNested(ctx, tool.Call{Name: "get"}); err != nil {
			t.Fatal(err)
		}
		tool.ReportTaint(ctx)
		loop.ReportUsage(ctx, llm.Usage{InputTokens: 3})
		got := end()
		if got.Next != nil || !got.Report.Tainted || !got.Report.HaveUsage || got.Report.Usage.InputTokens != 3 {
			t.Errorf("tainted %v: %+v", tainted, got)
		}
	}
}

// NestedPaused says a tool's nested call awaits approval: true after the
// call the policy sends to a person, false for an ordinary call and
// outside a run.
func TestNestedPaused(t *testing.T) {
	var seen []bool
	runner := runnerFunc(func(ctx context.Context, p codemode.Program) (tool.Result, error) {
		for _, name := range strings.Fields(p.Code) {
			if _, err := loop.CallNested(ctx, tool.Call{Name: name}); err != nil {
				return tool.Result{}, err
			}
			seen = append(seen, loopwire.NestedPaused(ctx))
		}
		return tool.Text("done"), nil
	})
	pay := &recorder{name: "pay"}
	a := &loop.Agent{
		Provider: scriptedProgram("echo pay echo"),
		Tools:    nestedRegistry(t, echo(t), pay.tool(t)),
		Checks:   loop.Checks{Policy: policyFor(map[string]loop.Verdict{"pay": loop.VerdictApprove})},
		CodeMode: codemode.Config{Mode: codemode.Only, Runner: runner},
	}
	if _, err := a.Run(context.Background(), "go"); err == nil {
		t.Fatal("the run did not pause")
	}
	if len(seen) != 3 || seen[0] || !seen[1] || !seen[2] {
		t.Fatalf("NestedPaused after each call: %v, want [false true true]", seen)
	}
	if loopwire.NestedPaused(context.Background()) {
		t.Fatal("NestedPaused outside a run")
	}
}

type runnerFunc func(ctx context.Context, p codemode.Program) (tool.Result, error)

func (f runnerFunc) Run(ctx context.Context, p codemode.Program) (tool.Result, error) {
	return f(ctx, p)
}

// scriptedProgram is a model that calls run_program with code, then
// answers.
func scriptedProgram(code string) *scripted.Provider {
	b, _ := json.Marshal(codemode.Input{Code: code})
	return scripted.New(calls(call("c1", codemode.ToolName, string(b))), text("done"))
}
