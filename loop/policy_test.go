package loop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

func TestPolicyFailsClosed(t *testing.T) {
	cases := map[string]loop.PolicyFunc{
		"error": func(context.Context, *loop.PolicyInput) (loop.Decision, error) {
			return loop.Decision{}, errors.New("policy store down")
		},
		"panic": func(context.Context, *loop.PolicyInput) (loop.Decision, error) { panic("nil map") },
		"verdict": func(context.Context, *loop.PolicyInput) (loop.Decision, error) {
			return loop.Decision{Verdict: "maybe"}, nil
		},
	}
	for name, pol := range cases {
		t.Run(name, func(t *testing.T) {
			rm := &counter{name: "rm"}
			p := scripted.New(calls(call("c1", "rm", `{"path":"/"}`)), text("ok"))
			a := &loop.Agent{Provider: p, Tools: registry(t, rm), Checks: loop.Checks{Policy: pol}}
			res, err := a.Run(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			r := toolResults(res.Messages)[0]
			if rm.count() != 0 || !r.IsError || !strings.HasPrefix(r.Content, "ToolPolicyDenied: policy error: ") {
				t.Fatalf("ran %d times, result %+v", rm.count(), r)
			}
		})
	}
}

func TestPolicySeesCallFlagsAndTaint(t *testing.T) {
	page := &counter{name: "fetch", flags: tool.Flags{Untrusted: true}}
	mail := &counter{name: "mail", flags: tool.Flags{Egress: true, Permissions: []string{"email"}}}
	var seen []loop.PolicyInput
	pol := loop.PolicyFunc(func(_ context.Context, in *loop.PolicyInput) (loop.Decision, error) {
		seen = append(seen, *in)
		if in.Call.Name == "mail" && in.Tainted {
			return loop.Decision{Verdict: loop.VerdictDeny, Reason: "no mail after reading the web"}, nil
		}
		return loop.Decision{}, nil
	})
	p := scripted.New(calls(call("1", "fetch", `{}`), call("2", "mail", `{}`)), calls(call("3", "mail", `{}`)), text("ok"))
	a := &loop.Agent{Provider: p, Tools: registry(t, page, mail), Checks: loop.Checks{Policy: pol}, Bounds: loop.Bounds{Trifecta: loop.TrifectaOff}}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	// Same turn: both see the pre-turn (untainted) state; mail runs once.
	if len(seen) != 3 || seen[0].Tainted || seen[1].Tainted || !seen[2].Tainted {
		t.Fatalf("tainted seen: %v %v %v", seen[0].Tainted, seen[1].Tainted, seen[2].Tainted)
	}
	if !seen[1].Flags.Egress || seen[1].Flags.Permissions[0] != "email" || seen[1].Spec.Name != "mail" || !seen[1].Known || seen[1].Step != 1 {
		t.Errorf("policy input = %+v", seen[1])
	}
	if mail.count() != 1 {
		t.Errorf("mail ran %d times", mail.count())
	}
	if r := toolResults(res.Messages)[2]; r.Content != "ToolPolicyDenied: no mail after reading the web" {
		t.Errorf("denial = %q", r.Content)
	}
}

func TestGuardsRunFirstAndPolicyCannotUnblock(t *testing.T) {
	c := &counter{name: "search"}
	allowAll := loop.PolicyFunc(func(context.Context, *loop.PolicyInput) (loop.Decision, error) {
		return loop.Decision{Verdict: loop.VerdictAllow}, nil
	})
	p := scripted.New(calls(call("", "search", `{}`)), calls(call("", "search", `{}`)), text("ok"))
	a := &loop.Agent{Provider: p, Tools: registry(t, c), Checks: loop.Checks{Policy: allowAll}, Bounds: loop.Bounds{MaxRepeatedToolCalls: 1}}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if c.count() != 1 || !strings.HasPrefix(toolResults(res.Messages)[1].Content, "RepeatedCall: ") {
		t.Fatalf("the policy un-blocked a guard: ran %d", c.count())
	}
}

func approvePolicy(name string) loop.Policy {
	return loop.PolicyFunc(func(_ context.Context, in *loop.PolicyInput) (loop.Decision, error) {
		if in.Call.Name == name {
			return loop.Decision{Verdict: loop.VerdictApprove, Reason: "payments need a human"}, nil
		}
		return loop.Decision{}, nil
	})
}

func TestApprovalPauseExecutesNothingAndResumeRunsOnce(t *testing.T) {
	checkNoLeak(t)
	pay := &counter{name: "pay"}
	lookup := &counter{name: "lookup"}
	p := scripted.New(
		calls(call("c-look", "lookup", `{"who":"bob"}`), call("c-pay", "pay", `{"to":"bob","eur":10}`)),
		text("Paid bob."),
	)
	var buf bytes.Buffer
	a := &loop.Agent{Provider: p, Tools: registry(t, pay, lookup), Checks: loop.Checks{Policy: approvePolicy("pay")}, Tracer: trace.New(familyJSONL(&buf))}
	res, err := a.Run(context.Background(), "pay bob 10")
	var se *loop.StopError
	if !errors.As(err, &se) || !errors.Is(err, loop.ErrApprovalRequired) {
		t.Fatalf("err = %v", err)
	}
	if pay.count() != 0 || lookup.count() != 0 {
		t.Fatalf("the pause executed tools: pay %d lookup %d", pay.count(), lookup.count())
	}
	if res.StopReason != loop.StopApprovalRequired || len(res.Pending) != 1 || res.Pending[0].Call.ID != "c-pay" || res.Pending[0].Reason != "payments need a human" || res.Pending[0].Source != "policy" {
		t.Fatalf("pending = %+v", res.Pending)
	}
	if !strings.Contains(err.Error(), "approval_required: pay (c-pay): payments need a human") {
		t.Errorf("error = %v", err)
	}
	// Through JSON, as a CLI would store it.
	b, _ := json.Marshal(se.State)
	st, err := loop.DecodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	// Resuming without a decision pauses again, still executing nothing.
	_, err = a.Resume(context.Background(), st)
	if !errors.Is(err, loop.ErrApprovalRequired) || pay.count() != 0 || lookup.count() != 0 {
		t.Fatalf("undecided resume: %v, pay %d", err, pay.count())
	}
	// A decision for an unknown call is refused, loudly.
	if _, err := a.Resume(context.Background(), st, loop.Approve("c-typo")); err == nil || !strings.Contains(err.Error(), `no call "c-typo" in the pending turn (calls: c-look, c-pay)`) {
		t.Fatalf("typo decision: %v", err)
	}
	res, err = a.Resume(context.Background(), st, loop.Approve("c-pay"))
	if err != nil {
		t.Fatal(err)
	}
	if pay.count() != 1 || lookup.count() != 1 || res.Output != "Paid bob." || res.Steps != 2 {
		t.Fatalf("after approval: pay %d lookup %d result %+v", pay.count(), lookup.count(), res)
	}
	// Resuming the final state again runs nothing more.
	if _, err := a.Resume(context.Background(), res.State); err != nil || pay.count() != 1 {
		t.Fatalf("second resume ran the payment again: %d", pay.count())
	}
	sum, _ := trace.Summarize(&buf)
	if sum.Approvals != 2 {
		t.Errorf("approvals traced = %d", sum.Approvals)
	}
}

func TestRejectTellsTheModel(t *testing.T) {
	pay := &counter{name: "pay"}
	p := scripted.New(calls(call("c-pay", "pay", `{}`)), text("I was not allowed to pay."))
	a := &loop.Agent{Provider: p, Tools: registry(t, pay), Checks: loop.Checks{Policy: approvePolicy("pay")}}
	_, err := a.Run(context.Background(), "pay")
	var se *loop.StopError
	if !errors.As(err, &se) {
		t.Fatal(err)
	}
	res, err := a.Resume(context.Background(), se.State, loop.Reject("c-pay", "amount looks wrong"))
	if err != nil {
		t.Fatal(err)
	}
	r := toolResults(res.Messages)[0]
	if pay.count() != 0 || !r.IsError || r.Content != "ToolPolicyDenied: rejected by a human reviewer: amount looks wrong" {
		t.Fatalf("pay ran %d; result %+v", pay.count(), r)
	}
	if got := resultsSent(p.Requests()[1])[0].Content; got != r.Content {
		t.Errorf("model was sent %q", got)
	}
}

func TestApprovalNeverOverridesADenial(t *testing.T) {
	pay := &counter{name: "pay"}
	calls := 0
	pol := loop.PolicyFunc(func(context.Context, *loop.PolicyInput) (loop.Decision, error) {
		calls++
		if calls == 1 {
			return loop.Decision{Verdict: loop.VerdictApprove}, nil
		}
		return loop.Decision{Verdict: loop.VerdictDeny, Reason: "account frozen since"}, nil
	})
	p := scripted.New(scriptedCalls(call("c", "pay", `{}`)), text("ok"))
	a := &loop.Agent{Provider: p, Tools: registry(t, pay), Checks: loop.Checks{Policy: pol}}
	_, err := a.Run(context.Background(), "pay")
	var se *loop.StopError
	errors.As(err, &se)
	res, err := a.Resume(context.Background(), se.State, loop.Approve("c"))
	if err != nil {
		t.Fatal(err)
	}
	if pay.count() != 0 || toolResults(res.Messages)[0].Content != "ToolPolicyDenied: account frozen since" {
		t.Fatalf("an approval overrode a denial: pay %d", pay.count())
	}
}

func scriptedCalls(cs ...llm.ToolCall) scripted.Turn { return scripted.Turn{ToolCalls: cs} }

func TestApprovalRequestStreamEvent(t *testing.T) {
	pay := &counter{name: "pay"}
	p := scripted.New(calls(call("c", "pay", `{}`)), text("paid"))
	a := &loop.Agent{Provider: p, Tools: registry(t, pay), Checks: loop.Checks{Policy: approvePolicy("pay")}}
	var approval, done loop.Event
	var doneErr error
	for ev, err := range a.Stream(context.Background(), "pay") {
		switch ev.Type {
		case loop.EventApproval:
			approval = ev
		case loop.EventDone:
			done, doneErr = ev, err
		}
	}
	if len(approval.Pending) != 1 || approval.Pending[0].Call.ID != "c" {
		t.Fatalf("approval event = %+v", approval)
	}
	var se *loop.StopError
	if !errors.As(doneErr, &se) || done.Result.State == nil || done.Result.StopReason != loop.StopApprovalRequired {
		t.Fatalf("done = %+v, %v", done, doneErr)
	}
	var resumed *loop.Result
	for ev, err := range a.StreamResume(context.Background(), se.State, loop.Approve("c")) {
		if ev.Type == loop.EventDone && err == nil {
			resumed = ev.Result
		}
	}
	if pay.count() != 1 || resumed == nil {
		t.Fatalf("stream resume: pay %d, result %+v", pay.count(), resumed)
	}
}
