package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/durable"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/policy"
	"github.com/autoagent-go/autoagent/tool"
)

// lineRunner is a codemode.Runner whose programs are lines "NAME ARGS",
// each a call through loop.CallNested; its result lists what each call
// gave and whether the program was tainted after it. It stands for the
// JavaScript engine (TestWorkflowCodeModeJavaScript runs that), and
// stops, as the engine does, at a refusal of kind ProgramSuspended or
// ProgramCallLimit, the result's field (goOn: it does not). A line "taint" reports
// taint; a line "hold" waits while the file hold exists (the fault
// tests; the file hold.held says it holds).
//
// swap makes it a program that is not deterministic: from its run number
// swapFrom on, it replaces swap[0] with swap[1] in the code.
type lineRunner struct {
	goOn     bool
	hold     string
	runs     atomic.Int32
	swap     [2]string
	swapFrom int32
}

func (l *lineRunner) Run(ctx context.Context, p codemode.Program) (tool.Result, error) {
	code := p.Code
	if n := l.runs.Add(1); l.swapFrom > 0 && n >= l.swapFrom {
		code = strings.ReplaceAll(code, l.swap[0], l.swap[1])
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(code), "\n") {
		name, args, _ := strings.Cut(line, " ")
		switch name {
		case "taint":
			tool.ReportTaint(ctx)
			continue
		case "hold":
			if _, err := os.Stat(l.hold); err == nil {
				appendLine(filepath.Dir(l.hold), filepath.Base(l.hold)+".held", "")
			}
			hold(ctx, l.hold)
			continue
		}
		res, err := loop.CallNested(ctx, tool.Call{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			return tool.Result{}, err
		}
		mark := "ok"
		if res.IsError {
			mark = "error"
		}
		out = append(out, fmt.Sprintf("%s %s: %s (tainted: %v)", name, mark, res.Text(), tool.Tainted(ctx)))
		if res.IsError && !l.goOn && (res.Refusal == string(refusal.ProgramSuspended) || res.Refusal == string(refusal.ProgramCallLimit)) {
			return tool.Errorf("the program was stopped: %s", res.Text()), nil
		}
	}
	return tool.Text(strings.Join(out, "\n")), nil
}

// programTurns is a stateless model that runs code as run_program call
// c1, then answers "done".
func programTurns(code string) scriptedTurns {
	b, _ := json.Marshal(codemode.Input{Code: code})
	return scriptedTurns{{ID: "c1", Name: codemode.ToolName, Arguments: b}}
}

// programAgent is an agent in code mode whose model runs code once.
func programAgent(t *testing.T, runner codemode.Runner, code string, tools ...tool.Tool) *loop.Agent {
	t.Helper()
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return &loop.Agent{
		Provider: programTurns(code), Tools: reg, System: "You run programs.", Bounds: loop.Bounds{MaxSteps: 8},
		CodeMode: codemode.Config{Mode: codemode.Only, Runner: runner},
	}
}

// threeCalls is a program of three calls, the second of a tool that is
// not idempotent.
const threeCalls = "get {\"n\":1}\npay {\"n\":2}\nget {\"n\":3}"

// shop is get (idempotent) and pay (an effect), counting their
// executions.
func shop() (get, pay *counter) {
	return &counter{name: "get", flags: tool.Flags{Idempotent: true}}, &counter{name: "pay"}
}

// localRun runs agent as run id, as the workflow names its runs.
func localRun(t *testing.T, a *loop.Agent, id string, opts ...loop.ResumeOption) *loop.Result {
	t.Helper()
	a.NewRunID = func() string { return id }
	res, err := a.Run(t.Context(), "go")
	var stop *loop.StopError
	if len(opts) > 0 {
		if !errors.As(err, &stop) {
			t.Fatalf("the local run did not pause: %v", err)
		}
		res, err = a.Resume(t.Context(), stop.State, opts...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A program in a workflow: one Program activity per call it makes, plus
// one; each call passes the gate in the workflow and runs once as a tool
// activity, with the nested call's id ("c1/2") and key; the result is the
// local run's.
func TestWorkflowCodeModeMatchesLocalRun(t *testing.T) {
	lget, lpay := shop()
	want := localRun(t, programAgent(t, &lineRunner{}, threeCalls, lget, lpay), "run-cm")

	get, pay := shop()
	runner := &lineRunner{}
	e := env(t, &durable.Activities{Agent: programAgent(t, runner, threeCalls, get, pay)})
	e.SetStartWorkflowOptions(startOptions("run-cm"))
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
	got := result(t, e)
	if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
		t.Errorf("the workflow's result differs from the local run's:\n got %s\nwant %s", g, w)
	}
	out := jsonOf(t, got.Messages)
	for _, s := range []string{"get ok: get ran 1", "pay ok: pay ran 1", "get ok: get ran 2"} {
		if !strings.Contains(out, s) {
			t.Errorf("the program's result lacks %q: %s", s, out)
		}
	}
	if k := strings.Join(get.keys, ","); k != "run-cm/c1/1,run-cm/c1/3" {
		t.Errorf("get ran with keys %s", k)
	}
	if k := strings.Join(pay.keys, ","); k != "run-cm/c1/2" {
		t.Errorf("pay ran with keys %s", k)
	}
	if n := runner.runs.Load(); n != 4 {
		t.Errorf("the program ran %d times on the worker, want 4 (one per call, then to its end)", n)
	}
}

// bilingual is a lineRunner that says it runs JavaScript and Python, as a
// codemode.ByLanguage over both engines does.
type bilingual struct{ *lineRunner }

func (bilingual) Languages() []string { return []string{codemode.JavaScript, codemode.Python} }

// firstTools keeps the tools offered in the model's first request.
type firstTools struct {
	scriptedTurns
	tools atomic.Pointer[[]llm.ToolSpec]
}

func (f *firstTools) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	f.tools.CompareAndSwap(nil, &req.Tools)
	return f.scriptedTurns.Complete(ctx, req)
}

// The workflow declares the languages of the worker's runner: a worker
// running Python programs too has its model told so, as a local run does.
func TestWorkflowCodeModeOffersTheWorkersLanguages(t *testing.T) {
	get, pay := shop()
	a := programAgent(t, bilingual{&lineRunner{}}, threeCalls, get, pay)
	model := &firstTools{scriptedTurns: programTurns(threeCalls)}
	a.Provider = model
	e := env(t, &durable.Activities{Agent: a})
	e.SetStartWorkflowOptions(startOptions("run-langs"))
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
	result(t, e)
	tools := model.tools.Load()
	if tools == nil || len(*tools) != 1 || !strings.Contains(string((*tools)[0].InputSchema), `"enum":["javascript","python"]`) {
		t.Fatalf("the workflow's model was offered %+v; want run_program in javascript and python", tools)
	}
}

// A call of the program that needs approval pauses the workflow with the
// nested call pending ("c1/2", Parent "c1"); the decision is accepted for
// it, and after it each call has run exactly once; the result is the
// local run's given the same decision.
func TestWorkflowCodeModeApproval(t *testing.T) {
	pol, err := policy.Parse([]byte(approvePay))
	if err != nil {
		t.Fatal(err)
	}
	lget, lpay := shop()
	local := programAgent(t, &lineRunner{}, threeCalls, lget, lpay)
	local.Checks.Policy = pol
	want := localRun(t, local, "run-cm", loop.Approve("c1/2"))

	get, pay := shop()
	runner := &lineRunner{}
	agent := programAgent(t, runner, threeCalls, get, pay)
	agent.Checks.Policy = pol
	e := env(t, &durable.Activities{Agent: agent})
	e.SetStartWorkflowOptions(startOptions("run-cm"))
	var paused durable.Status
	var ranBefore, runsBefore int32
	var refused error
	e.RegisterDelayedCallback(func() {
		paused = queryState(t, e)
		ranBefore, runsBefore = pay.ran.Load(), runner.runs.Load()
		e.UpdateWorkflow(durable.UpdateDecide, "u1", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { refused = err },
			OnAccept:   func() {},
			OnComplete: func(any, error) {},
		}, []durable.Decision{{CallID: "c1/2", Approved: true}})
	}, time.Minute)
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
	got := result(t, e)
	if paused.State != "awaiting_approval" || len(paused.Pending) != 1 || paused.Pending[0].Call.ID != "c1/2" || paused.Pending[0].Parent != "c1" {
		t.Fatalf("state while paused = %+v", paused)
	}
	if refused != nil {
		t.Fatalf("the decision for the program's call was refused: %v", refused)
	}
	if ranBefore != 0 {
		t.Errorf("pay ran %d times before the decision", ranBefore)
	}
	// Two runs reach the call awaiting approval, and the program stops
	// there; after the decision it runs again from its start: four runs
	// for its three calls.
	if runsBefore != 2 || runner.runs.Load() != 6 {
		t.Errorf("the program ran %d times before the decision (want 2), %d in all (want 6)", runsBefore, runner.runs.Load())
	}
	if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
		t.Errorf("the workflow's result differs from the local run's:\n got %s\nwant %s", g, w)
	}
	if k := strings.Join(get.keys, ","); k != "run-cm/c1/1,run-cm/c1/3" {
		t.Errorf("get ran with keys %s (each once)", k)
	}
	if k := strings.Join(pay.keys, ","); k != "run-cm/c1/2" {
		t.Errorf("pay ran with keys %s (once, after the approval)", k)
	}
}

// A worker lost mid-program: a Program activity that timed out is run
// again (it has no effect); a call of a tool that is not idempotent whose
// worker was lost is OutcomeUnknown for the program, never run again, and
// the program goes on.
func TestWorkflowCodeModeLostWorker(t *testing.T) {
	get, pay := shop()
	acts := &durable.Activities{Agent: programAgent(t, &lineRunner{}, threeCalls, get, pay)}
	e := env(t, acts)
	payTries, programTries := 0, 0
	e.OnActivity(durable.ActivityTool, mockAny, mockAny).Return(func(ctx context.Context, in durable.ToolInput) (*durable.ToolOutput, error) {
		if in.Name == "pay" {
			payTries++
			return nil, temporal.NewTimeoutError(enums.TIMEOUT_TYPE_HEARTBEAT, nil)
		}
		return acts.Tool(ctx, in)
	})
	e.OnActivity(durable.ActivityProgram, mockAny, mockAny).Return(func(ctx context.Context, in durable.ProgramInput) (*durable.ProgramOutput, error) {
		programTries++
		if programTries == 3 {
			// The worker is lost after the call of pay: the run that
			// needs the third call is tried again.
			return nil, temporal.NewTimeoutError(enums.TIMEOUT_TYPE_HEARTBEAT, nil)
		}
		return acts.Program(ctx, in)
	})
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
	res := result(t, e)
	out := jsonOf(t, res.Messages)
	if payTries != 1 || !strings.Contains(out, "pay error: OutcomeUnknown: `pay`") || !strings.Contains(out, "get ok: get ran 2") {
		t.Errorf("pay tried %d times (want once); transcript %s", payTries, out)
	}
	if programTries != 5 || get.ran.Load() != 2 {
		t.Errorf("the program was tried %d times (want 5: one lost, run again), get ran %d times (want 2)", programTries, get.ran.Load())
	}
}

// MaxCalls bounds a program's calls, and so its activities: the engine
// stops at the refusal of the call past it; a runner that goes on is
// stopped by the workflow.
func TestWorkflowCodeModeCallLimit(t *testing.T) {
	code := "get {\"n\":1}\nget {\"n\":2}\nget {\"n\":3}\nget {\"n\":4}\nget {\"n\":5}"
	for _, goOn := range []bool{false, true} {
		get, _ := shop()
		runner := &lineRunner{goOn: goOn}
		agent := programAgent(t, runner, code, get)
		agent.CodeMode.MaxCalls = 2
		e := env(t, &durable.Activities{Agent: agent})
		e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
		out := jsonOf(t, result(t, e).Messages)
		want := "the program was stopped: ProgramCallLimit: a program may make 2 tool calls"
		if goOn {
			want = "ProgramCallLimit: a program may make 2 tool calls; this one went on calling after that and was stopped (3 tool calls, which took place (get, get, get))"
		}
		if !strings.Contains(out, want) || get.ran.Load() != 2 || runner.runs.Load() != 4 {
			t.Errorf("goOn %v: get ran %d times (want 2), the program %d times (want 4); transcript %s", goOn, get.ran.Load(), runner.runs.Load(), out)
		}
	}
}

// A program whose runs would overflow the workflow's history is stopped,
// saying which calls it made; the run goes on (here it continues as new
// after the step, its history being long).
func TestWorkflowCodeModeHistoryBound(t *testing.T) {
	get, _ := shop()
	code := strings.Repeat("get {}\n", 20)
	e := env(t, &durable.Activities{Agent: programAgent(t, &lineRunner{}, code, get)})
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}, Options: durable.Options{MaxHistory: 10}})
	var can *workflow.ContinueAsNewError
	if err := e.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("want continue-as-new after the step, got %v", err)
	}
	var next durable.WorkflowInput
	if err := converterGet(can, &next); err != nil {
		t.Fatal(err)
	}
	out := jsonOf(t, next.State.Messages)
	want := fmt.Sprintf("ProgramTooLong: the program was stopped after %d tool calls, which took place", get.ran.Load())
	if n := get.ran.Load(); n == 0 || n >= 20 || !strings.Contains(out, want) {
		t.Errorf("get ran %d times; transcript %s", n, out)
	}
}

// Taint in a program as in a local run: the program sees it from the
// untrusted result on (and not before, on its later runs either), or from
// its start when the run was tainted before it (mail read by a direct
// call); its result is framed untrusted and taints the run; so does taint
// the program reports itself.
func TestWorkflowCodeModeTaint(t *testing.T) {
	mail := func() *counter {
		return &counter{name: "read_mail", flags: tool.Flags{Untrusted: true, Idempotent: true}}
	}
	build := func(code string, before bool) *loop.Agent {
		get, _ := shop()
		a := programAgent(t, &lineRunner{}, code, get, mail())
		if before {
			a.CodeMode.Mode = codemode.Also
			a.Provider = append(scriptedTurns{{ID: "m1", Name: "read_mail", Arguments: json.RawMessage(`{}`)}}, a.Provider.(scriptedTurns)...)
		}
		return a
	}
	for _, c := range []struct {
		code   string
		before bool
	}{
		{"get {}\nread_mail {}\nget {}", false},
		{"get {}\ntaint", false},
		{"get {}\nget {}", true},
	} {
		want := localRun(t, build(c.code, c.before), "run-taint")
		e := env(t, &durable.Activities{Agent: build(c.code, c.before)})
		e.SetStartWorkflowOptions(startOptions("run-taint"))
		e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
		got := result(t, e)
		if !want.Tainted {
			t.Fatalf("%q: the local run is not tainted: the test shows nothing", c.code)
		}
		if g, w := jsonOf(t, got.Messages), jsonOf(t, want.Messages); g != w || !loop.IsTainted(got.Messages) {
			t.Errorf("%q: tainted %v; the transcript differs from the local run's:\n got %s\nwant %s", c.code, loop.IsTainted(got.Messages), g, w)
		}
	}
}

// A worker whose agent has code mode but no runner is refused at the
// start, saying what is missing.
func TestWorkflowCodeModeNeedsARunner(t *testing.T) {
	get, _ := shop()
	agent := programAgent(t, nil, "get {}", get)
	agent.CodeMode.Runner = nil
	e := env(t, &durable.Activities{Agent: agent})
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
	if err := e.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "code mode only but no Runner") {
		t.Fatalf("a worker with no runner: %v", err)
	}
}

// Our attacks on durable code mode: each is a way around a promise of the
// gate that a durable run could have opened, shown shut.

// A program's egress call after an untrusted result of the same program
// is refused by the trifecta in the workflow, as in a local run: the
// program's taint is the workflow's, not the worker's.
func TestWorkflowCodeModeTrifecta(t *testing.T) {
	build := func() (*loop.Agent, *counter) {
		mail := &counter{name: "read_mail", flags: tool.Flags{Untrusted: true}}
		send := &counter{name: "send", flags: tool.Flags{Egress: true}}
		return programAgent(t, &lineRunner{}, "read_mail {}\nsend {}", mail, send), send
	}
	la, lsend := build()
	want := localRun(t, la, "run-tri")
	agent, send := build()
	e := env(t, &durable.Activities{Agent: agent})
	e.SetStartWorkflowOptions(startOptions("run-tri"))
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
	got := result(t, e)
	if lsend.ran.Load() != 0 || !strings.Contains(jsonOf(t, want.Messages), "send error:") {
		t.Fatalf("the local run sent: the test shows nothing: %s", jsonOf(t, want.Messages))
	}
	if send.ran.Load() != 0 {
		t.Errorf("send ran %d times after the program read untrusted mail", send.ran.Load())
	}
	if g, w := jsonOf(t, got.Messages), jsonOf(t, want.Messages); g != w {
		t.Errorf("the transcript differs from the local run's:\n got %s\nwant %s", g, w)
	}
}

// An approval is bound to the call approved: a program that, run again
// after the decision, makes another call at the approved place gets it
// refused, and nothing runs that no one approved.
func TestWorkflowCodeModeApprovalIsBoundToTheCall(t *testing.T) {
	pol, err := policy.Parse([]byte(approvePay))
	if err != nil {
		t.Fatal(err)
	}
	get, pay := shop()
	// Runs 1 and 2 reach the pause; from run 3 on (after the decision)
	// the program pays another amount.
	agent := programAgent(t, &lineRunner{swap: [2]string{`pay {"n":2}`, `pay {"n":99}`}, swapFrom: 3}, threeCalls, get, pay)
	agent.Checks.Policy = pol
	e := env(t, &durable.Activities{Agent: agent})
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(durable.UpdateDecide, "u1", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("the decision was refused: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, []durable.Decision{{CallID: "c1/2", Approved: true}})
	}, time.Minute)
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
	out := jsonOf(t, result(t, e).Messages)
	if pay.ran.Load() != 0 || !strings.Contains(out, "pay error: ApprovalMismatch") {
		t.Errorf("pay ran %d times with arguments no one approved; transcript %s", pay.ran.Load(), out)
	}
	if get.ran.Load() != 2 {
		t.Errorf("get ran %d times, want 2 (c1/1 once, answered from the record after the pause)", get.ran.Load())
	}
}

// A program that is not deterministic (its second run on the worker makes
// another first call) gets Diverged for it; nothing runs twice, and the
// call it made instead never runs.
func TestWorkflowCodeModeDivergedProgram(t *testing.T) {
	get, _ := shop()
	runner := &lineRunner{swap: [2]string{`get {"n":1}`, `get {"n":7}`}, swapFrom: 2}
	e := env(t, &durable.Activities{Agent: programAgent(t, runner, "get {\"n\":1}\nget {\"n\":2}", get)})
	e.SetStartWorkflowOptions(startOptions("run-div"))
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
	out := jsonOf(t, result(t, e).Messages)
	if k := strings.Join(get.keys, ","); k != "run-div/c1/1,run-div/c1/2" || !strings.Contains(out, "get error: Diverged: call c1/1 of `get`") {
		t.Errorf("get ran with keys %s; transcript %s", k, out)
	}
}

// What a program hands its worker, and what the worker hands back, stays
// under Temporal's payload limit: a record too large stops the program,
// saying which calls it made; an output too large is an error result.
func TestWorkflowCodeModePayloadLimit(t *testing.T) {
	big, err := tool.NewFromSpec(llm.ToolSpec{Name: "big", Description: "big", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, tool.Call) (tool.Result, error) {
		return tool.Text(strings.Repeat("x", 900<<10)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	get, _ := shop()
	e := env(t, &durable.Activities{Agent: programAgent(t, &lineRunner{}, "big {}\nbig {}\nget {}", big, get)})
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
	out := jsonOf(t, result(t, e).Messages)
	if !strings.Contains(out, "ProgramTooLarge: the program was stopped after 2 tool calls, which took place (big, big)") || get.ran.Load() != 0 {
		t.Errorf("a record over the limit: get ran %d times; transcript %.300s", get.ran.Load(), out)
	}

	huge := runnerFunc(func(context.Context, codemode.Program) (tool.Result, error) {
		return tool.Text(strings.Repeat("y", 2<<20)), nil
	})
	e = env(t, &durable.Activities{Agent: programAgent(t, huge, "anything", get)})
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
	if out := jsonOf(t, result(t, e).Messages); !strings.Contains(out, "over Temporal's payload limit: the program's output is") {
		t.Errorf("an output over the limit: %.300s", out)
	}
}

type runnerFunc func(ctx context.Context, p codemode.Program) (tool.Result, error)

func (f runnerFunc) Run(ctx context.Context, p codemode.Program) (tool.Result, error) {
	return f(ctx, p)
}

// A sub-agent in code mode runs its programs in its child workflow, with
// its own runner (the Program activity finds it by the sub-agent's path).
func TestWorkflowCodeModeSubAgent(t *testing.T) {
	get, pay := shop()
	sub := programAgent(t, &lineRunner{}, threeCalls, get, pay)
	payer, err := sub.AsTool("payer", "pays things")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tool.NewRegistry(payer)
	if err != nil {
		t.Fatal(err)
	}
	parent := &loop.Agent{Provider: scriptedTurns{{ID: "p1", Name: "payer", Arguments: json.RawMessage(`{"request":"pay"}`)}}, Tools: reg}
	got, children := runParent(t, &durable.Activities{Agent: parent}, "get it paid")
	if strings.Join(children, ",") != "parent/p1" || got.Output != "done" {
		t.Fatalf("children %v, result %+v", children, got)
	}
	if k := strings.Join(pay.keys, ","); k != "parent/p1/c1/2" || get.ran.Load() != 2 {
		t.Errorf("pay ran with keys %s, get %d times", k, get.ran.Load())
	}
}

// Cancelling a run mid-program cancels the program's run on the worker
// (its context ends) and ends the run cancelled; the calls after it never
// run.
func TestWorkflowCodeModeCancel(t *testing.T) {
	get, _ := shop()
	var e *testsuite.TestWorkflowEnvironment
	stopped := make(chan error, 1)
	runs := 0
	blocking := runnerFunc(func(ctx context.Context, p codemode.Program) (tool.Result, error) {
		if runs++; runs == 1 {
			return loop.CallNested(ctx, tool.Call{Name: "get", Arguments: json.RawMessage(`{}`)})
		}
		if _, err := loop.CallNested(ctx, tool.Call{Name: "get", Arguments: json.RawMessage(`{}`)}); err != nil {
			return tool.Result{}, err
		}
		e.CancelWorkflow()
		select {
		case <-ctx.Done():
			stopped <- ctx.Err()
		case <-time.After(time.Minute):
			stopped <- nil
		}
		return loop.CallNested(ctx, tool.Call{Name: "get", Arguments: json.RawMessage(`{}`)})
	})
	e = env(t, &durable.Activities{Agent: programAgent(t, blocking, "get twice", get)})
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}, Options: durable.Options{Heartbeat: time.Second}})
	if err := <-stopped; err == nil {
		t.Fatal("the program's context did not end when the run was cancelled")
	}
	res := result(t, e)
	if res.StopReason != loop.StopCancelled || get.ran.Load() != 1 {
		t.Errorf("stop %s, get ran %d times (want cancelled, once)", res.StopReason, get.ran.Load())
	}
}
