package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// A sub-agent started by a tainted run is tainted from its start: the
// egress call the trifecta refuses in the parent is refused in the child.
func TestSubAgentInheritsTheCallersTaint(t *testing.T) {
	for _, via := range []string{"AsTool", "Delegate"} {
		t.Run(via, func(t *testing.T) {
			send := &recorder{name: "send", flags: tool.Flags{Egress: true}}
			page := &recorder{name: "fetch", flags: tool.Flags{Untrusted: true}}
			child := &loop.Agent{
				Provider: scripted.New(
					scripted.Turn{ToolCalls: []llm.ToolCall{call("s1", "send", `{"path":"secrets"}`)}},
					scripted.Turn{Text: "sent"},
				),
				Tools: nestedRegistry(t, send.tool(t)),
			}
			var sub tool.Tool
			var err error
			args := `{"request":"send it"}`
			if via == "AsTool" {
				sub, err = child.AsTool("helper", "Helps.")
			} else {
				sub, err = loop.Delegate(map[string]*loop.Agent{"helper": child}, loop.DelegateOptions{Name: "helper"})
				args = `{"requests":[{"specialist":"helper","request":"send it"}]}`
			}
			if err != nil {
				t.Fatal(err)
			}
			parent := &loop.Agent{
				Provider: scripted.New(
					scripted.Turn{ToolCalls: []llm.ToolCall{call("p1", "fetch", `{}`)}},
					scripted.Turn{ToolCalls: []llm.ToolCall{call("p2", "helper", args)}},
					scripted.Turn{Text: "done"},
				),
				Tools: nestedRegistry(t, page.tool(t), sub),
			}
			if _, err := parent.Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			if got := send.ran(); len(got) != 0 {
				t.Errorf("the tainted run's sub-agent sent %q", got)
			}
		})
	}
}

// An approval pause inside a sub-agent pauses the parent, resumable with
// the sub-agent's call id as the parent's state names it; the decision
// applies in the sub-agent, whose approved call runs exactly once, and
// the parent's call then completes.
func TestSubAgentApprovalReachesTheParent(t *testing.T) {
	pay := &recorder{name: "pay"}
	childP := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("s1", "pay", `{"path":"10 EUR"}`)}},
		scripted.Turn{Text: "paid"},
	)
	child := &loop.Agent{Provider: childP, Tools: nestedRegistry(t, pay.tool(t)), Checks: loop.Checks{Policy: policyFor(map[string]loop.Verdict{"pay": loop.VerdictApprove})}}
	sub, err := child.AsTool("cashier", "Pays.")
	if err != nil {
		t.Fatal(err)
	}
	parent := &loop.Agent{
		Provider: scripted.New(
			scripted.Turn{ToolCalls: []llm.ToolCall{call("p1", "cashier", `{"request":"pay 10 EUR"}`)}},
			scripted.Turn{Text: "done"},
		),
		Tools: nestedRegistry(t, sub),
	}
	res, err := parent.Run(context.Background(), "go")
	if !errors.Is(err, loop.ErrApprovalRequired) {
		t.Fatalf("the parent did not pause: %v (%s)", err, res.Output)
	}
	if len(res.State.Pending) != 1 {
		t.Fatalf("pending %+v", res.State.Pending)
	}
	p := res.State.Pending[0]
	if p.Call.ID != "p1/agent/s1" || p.Parent != "p1" || p.Call.Name != "pay" || !strings.Contains(string(p.Call.Arguments), "10 EUR") {
		t.Errorf("pending %+v", p)
	}
	if len(pay.ran()) != 0 {
		t.Fatal("paid before approval")
	}
	b, _ := json.Marshal(res.State)
	st, err := loop.DecodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	res, err = parent.Resume(context.Background(), st, loop.Approve(p.Call.ID))
	if err != nil {
		t.Fatal(err)
	}
	if got := pay.ran(); len(got) != 1 {
		t.Errorf("pay ran %d times, want once", len(got))
	}
	if res.StopReason != loop.StopDone || !strings.Contains(toolResultText(res.Messages, "p1"), `"output":"paid"`) {
		t.Errorf("stop %s; p1 = %q", res.StopReason, toolResultText(res.Messages, "p1"))
	}
	// The sub-agent's model was asked twice in all: the call, then the
	// answer after it ran; the pause did not restart it.
	if n := len(childP.Requests()); n != 2 {
		t.Errorf("the sub-agent's model was called %d times, want 2", n)
	}

	// Rejected, the sub-agent's model reads the refusal.
	pay.calls = nil
	childP2 := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("s1", "pay", `{"path":"10 EUR"}`)}},
		scripted.Turn{Text: "not paid"},
	)
	child.Provider = childP2
	parent.Provider = scripted.New(scripted.Turn{ToolCalls: []llm.ToolCall{call("p1", "cashier", `{"request":"pay"}`)}}, scripted.Turn{Text: "done"})
	res, _ = parent.Run(context.Background(), "go")
	res, err = parent.Resume(context.Background(), res.State, loop.Reject("p1/agent/s1", "no"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pay.ran()) != 0 || !strings.Contains(toolResultText(res.Messages, "p1"), "not paid") {
		t.Errorf("after a rejection: pay ran %d; p1 = %q", len(pay.ran()), toolResultText(res.Messages, "p1"))
	}
}

// A Delegate call with two specialists, one of which pauses: on resume
// the one that finished is answered from its state, not run again.
func TestDelegateResumesOnlyThePausedSpecialist(t *testing.T) {
	pay := &recorder{name: "pay"}
	note := &recorder{name: "note"}
	writerP := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("w1", "note", `{"path":"n"}`)}},
		scripted.Turn{Text: "noted"},
	)
	cashierP := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("k1", "pay", `{"path":"5"}`)}},
		scripted.Turn{Text: "paid"},
	)
	writer := &loop.Agent{Provider: writerP, Tools: nestedRegistry(t, note.tool(t))}
	cashier := &loop.Agent{Provider: cashierP, Tools: nestedRegistry(t, pay.tool(t)), Checks: loop.Checks{Policy: policyFor(map[string]loop.Verdict{"pay": loop.VerdictApprove})}}
	d, err := loop.Delegate(map[string]*loop.Agent{"writer": writer, "cashier": cashier}, loop.DelegateOptions{MaxParallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	parent := &loop.Agent{
		Provider: scripted.New(
			scripted.Turn{ToolCalls: []llm.ToolCall{call("p1", "delegate", `{"requests":[{"specialist":"writer","request":"note"},{"specialist":"cashier","request":"pay"}]}`)}},
			scripted.Turn{Text: "done"},
		),
		Tools: nestedRegistry(t, d),
	}
	res, err := parent.Run(context.Background(), "go")
	if !errors.Is(err, loop.ErrApprovalRequired) {
		t.Fatalf("%v", err)
	}
	id := res.State.Pending[0].Call.ID
	res, err = parent.Resume(context.Background(), res.State, loop.Approve(id))
	if err != nil {
		t.Fatal(err)
	}
	if len(note.ran()) != 1 || len(pay.ran()) != 1 {
		t.Errorf("note ran %d, pay %d times; want once each", len(note.ran()), len(pay.ran()))
	}
	got := toolResultText(res.Messages, "p1")
	if !strings.Contains(got, `"output":"noted"`) || !strings.Contains(got, `"output":"paid"`) {
		t.Errorf("p1 = %q", got)
	}
}
