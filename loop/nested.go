package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// ErrNotInRun is returned by CallNested for a context that does not come
// from a tool call of the loop: there is no run whose gates the call could
// pass, so it is refused.
var ErrNotInRun = errors.New("loop: CallNested: not called from a tool of a running agent, so no policy can be applied: refused")

// CallNested runs a call of one of the run's tools on behalf of the tool
// running with ctx: code mode, where a sandboxed module calls a host tool
// (wire it as host.Options.CallTool). The call passes what a call of the
// model passes, in the same order: the loop guard, the trifecta (against
// the run's taint and what the calling tool took in so far), the policy
// and the human decisions. Then:
//
//   - refused, it does not run and the caller gets the refusal the model
//     would have seen, as an error result;
//   - when it needs approval it does not run either: the caller gets an
//     error result saying so, and the run pauses after the turn with the
//     call pending (PendingCall.Parent is the calling tool's call). Resumed
//     with it approved, the calling tool runs again, from its start (its
//     result was not kept), and this time the call goes through;
//   - otherwise it runs; a result of an untrusted tool, or one reporting
//     taint, taints the calling tool's result and so the run.
//
// Its id is "<calling call id>/<n>", n counting from 1 the nested calls of
// this execution of the calling tool, so a guest that makes the same calls
// again asks for the same ids. It is traced as a tool call under the
// calling tool's span. A ctx not from the loop gets ErrNotInRun.
func CallNested(ctx context.Context, c tool.Call) (tool.Result, error) {
	cc, ok := ctx.Value(callKey{}).(*callCtx)
	if !ok || cc.run == nil {
		return tool.Result{}, ErrNotInRun
	}
	r := cc.run
	args := c.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	n := cc.nested.Add(1)
	p := &plan{call: llm.ToolCall{ID: fmt.Sprintf("%s/%d", cc.info.CallID, n), Name: c.Name, Arguments: args}}
	if r.a.Tools != nil {
		if t, ok := r.a.Tools.Get(c.Name); ok {
			p.tool, p.flags = t, tool.FlagsOf(t)
		}
	}
	if p.tool == nil {
		return tool.Errorf("unknown tool: %q (the agent has no such tool)", c.Name), nil
	}
	span := trace.SpanFromContext(ctx)
	step := cc.info.Step
	tainted := r.st.Tainted || cc.tainted.Load()
	pend, _ := r.screenLocked(step, span, p, tainted, nil)
	if p.refusal != "" {
		return tool.Errorf("%s", p.refusal), nil
	}
	if pend != nil {
		pend.Parent = cc.info.CallID
		r.nestMu.Lock()
		r.nestedPending = append(r.nestedPending, *pend)
		r.nestMu.Unlock()
		cc.paused.Store(true)
		return tool.Errorf("ApprovalRequired: `%s` needs a person's approval (%s). It was not run. The run pauses after this call; once it is approved, this tool runs again and the call goes through.", c.Name, pend.Reason), nil
	}
	var t0 time.Time
	call := llm.ToolCall{ID: p.call.ID, Name: c.Name, Arguments: args}
	var callSpan string
	if r.tr != nil {
		callSpan = traceEvent(r, trace.ToolCallStart, span, trace.ToolCall{Step: step, Name: c.Name, CallID: call.ID, Arguments: r.preview(string(args))})
		t0 = time.Now()
	}
	tc := &toolCtx{Context: ctx, call: callCtx{info: CallInfo{RunID: r.st.RunID, Step: step, CallID: call.ID, Name: c.Name}, sink: &r.sink, run: r}}
	var nctx context.Context = tc
	if callSpan != "" {
		nctx = trace.WithSpan(nctx, callSpan)
	}
	res, err := tool.SafeCall(nctx, p.tool, tool.Call{ID: call.ID, Name: c.Name, Arguments: args})
	raw := rawResult{text: resultText(&res), isError: res.IsError, untrusted: p.flags.Untrusted || tc.call.tainted.Load()}
	if err != nil {
		raw = rawResult{text: fmt.Sprintf("tool %s failed: %v", c.Name, err), isError: true, infra: true, untrusted: raw.untrusted}
		res = tool.Errorf("%s", raw.text)
	}
	r.traceToolEnd(callSpan, t0, step, call, raw, err)
	if raw.untrusted {
		cc.tainted.Store(true)
	}
	if tc.call.paused.Load() {
		cc.paused.Store(true) // a call nested deeper awaits approval
	}
	return res, nil
}

// takeNestedPending returns and clears the nested calls awaiting approval.
func (r *runner) takeNestedPending() []PendingCall {
	r.nestMu.Lock()
	defer r.nestMu.Unlock()
	p := r.nestedPending
	r.nestedPending = nil
	return p
}

// resumesNested reports whether the run was resumed with a decision for a
// call that call id's tool made through CallNested: the tool paused for it,
// so it did not finish, and runs again.
func (r *runner) resumesNested(id string) bool {
	for d := range r.st.Decisions {
		if strings.HasPrefix(d, id+"/") {
			return true
		}
	}
	return false
}
