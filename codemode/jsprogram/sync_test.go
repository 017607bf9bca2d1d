package jsprogram_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// The engine runs a program whose only awaits are on tool calls without
// them (see RATIONALE.md, "Why do some programs run without await?").
// Each program here runs twice through the run, as written and with a
// line after its return that names Promise, which keeps its awaits: the
// two must pause at the same call, run every call exactly once across the
// resume, refuse and catch the same calls, and give the same result or
// error, positions included. (Math.random is left out: the sandbox
// seeds it from the call, and the two sources differ.)
func TestProgramRunsTheSameWithoutAwaits(t *testing.T) {
	keepAwaits := "\nvoid Promise"
	policy := loop.PolicyFunc(func(_ context.Context, in *loop.PolicyInput) (loop.Decision, error) {
		switch {
		case in.Call.Name == "refund" && strings.Contains(string(in.Call.Arguments), `"id":2`):
			return loop.Decision{Verdict: loop.VerdictApprove, Reason: "refunds need a person"}, nil
		case in.Call.Name == "refund":
			return loop.Decision{Verdict: loop.VerdictDeny, Reason: "refunds are closed"}, nil
		}
		return loop.Decision{}, nil
	})
	for _, code := range []string{
		// Pauses at the refund; after the approval the re-run gets the
		// first two calls from the record.
		`const a = await tools.get_order({id: 1})
const b = await tools.get_order({id: 2})
let denied = ""
try { await tools.refund({id: 7}) } catch (e) { denied = e.name + ": " + e.message }
const r = await tools.refund({id: 2})
const c = await tools.get_order({id: 3})
console.log("total", a.refund + b.refund + c.refund)
return [a.refund + b.refund + c.refund, r, denied, Date.now()]`,
		// An uncaught refusal ends the program with its line and column.
		"const a = await tools.get_order({id: 1})\n  await tools.refund({id: 9})\nreturn a",
		// So does an error of the program's own.
		"const a = await tools.get_order({id: 1})\nlet s = 0\n s += a.missing.refund\nreturn s",
	} {
		var runs []string
		for _, src := range []string{code, code + keepAwaits} {
			s := &shop{}
			a := agent(t, s, programCall("c1", src))
			a.Checks.Policy = policy
			res, err := a.Run(context.Background(), "go")
			var pending string
			if errors.Is(err, loop.ErrApprovalRequired) {
				p := res.State.Pending[0]
				pending = p.Call.ID + " " + p.Call.Name + " " + string(p.Call.Arguments)
				saved, err := json.Marshal(res.State)
				if err != nil {
					t.Fatal(err)
				}
				var st loop.RunState
				if err := json.Unmarshal(saved, &st); err != nil {
					t.Fatal(err)
				}
				b := agent(t, s)
				b.Provider = scripted.New(scripted.Turn{Text: "done"})
				b.Checks.Policy = policy
				if res, err = b.Resume(context.Background(), &st, loop.Approve(p.Call.ID)); err != nil {
					t.Fatal(err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			for k, n := range s.calls {
				if n != 1 {
					t.Errorf("%s: %s ran %d times, want once", code, k, n)
				}
			}
			r := result(t, res, "c1")
			runs = append(runs, fmt.Sprintf("pending %q\ncalls %v\nerror %v\nresult %s", pending, s.calls, r.IsError, r.Content))
		}
		if runs[0] != runs[1] {
			t.Errorf("%s\nwithout awaits:\n%s\nwith them:\n%s", code, runs[0], runs[1])
		}
	}
}
