package loop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// ErrNotInRun is returned by CallNested for a context that does not come
// from a tool call of the loop: there is no run whose gates the call could
// pass, so it is refused.
var ErrNotInRun = errors.New("loop: CallNested: not called from a tool of a running agent, so no policy can be applied: refused")

// CallNested runs a call of one of the run's tools on behalf of the tool
// running with ctx: code mode, where a sandboxed module calls a host tool
// (wire it as host.Options.CallTool). The call passes the gate a call of
// the model passes, in the same order, and is counted as one: the run's
// tool-call bound (Bounds.MaxToolCalls), the pre-tool hooks, the loop
// guard, the trifecta (against the run's taint and what the calling tool
// took in so far), the policy and the human decisions; its result goes
// through the post-tool hooks and the tool-result guardrails. Then:
//
//   - refused, it does not run and the caller gets the refusal the model
//     would have seen, as an error result;
//   - when it needs approval it does not run either: the caller gets an
//     error result saying so, and the run pauses after the turn with the
//     call pending (PendingCall.Parent is the calling tool's call). Resumed
//     with it approved, the calling tool runs again from its start;
//   - otherwise it runs; a result of an untrusted tool, or one reporting
//     taint, taints the calling tool's result and so the run.
//
// The run keeps a record of the calls each tool made (RunState.Nested):
// when a paused tool runs again, the calls it makes that are in the record
// get their recorded result and do not run again, so every call runs at
// most once. A call that differs from the record at its place (another
// tool, other arguments) is refused, never run: a re-run that diverges
// cannot turn an approval of one call into the approval of another.
//
// Its id is "<calling call id>/<n>", n counting from 1 the nested calls of
// this execution of the calling tool, so a guest that makes the same calls
// again asks for the same ids. It is traced as a tool call under the
// calling tool's span. A ctx not from the loop gets ErrNotInRun; in the
// context of a program run away from its run (internal/loopwire's
// ReplayProgramContext) the
// calls are answered from the program's record.
func CallNested(ctx context.Context, c tool.Call) (tool.Result, error) {
	cc, ok := ctx.Value(callKey{}).(*callCtx)
	if ok && cc.replay != nil {
		return cc.replay.call(cc, c), nil
	}
	if !ok || cc.run == nil {
		return tool.Result{}, ErrNotInRun
	}
	if cc.over.Load() {
		return refusalResult(refusal.New(refusal.CallOver, "the call of `%s` that made this call has ended (it outlived its time limit); `%s` was not run.", cc.info.Name, c.Name)), nil
	}
	if cc.paused.Load() {
		// The program's later calls wait for the decision: on its re-run
		// they are made in order, after the one decided on.
		return refusalResult(refusal.New(refusal.Paused, "an earlier call of this program awaits a person's decision, so `%s` was not run. The run pauses after this call.", c.Name)), nil
	}
	if !awaitAdoption(ctx) {
		return refusalResult(refusal.New(refusal.Cancelled, "the call of `%s` that made this call was started early and then discarded; `%s` was not run.", cc.info.Name, c.Name)), nil
	}
	if depth := nestedDepth(cc); depth >= maxNestedDepth {
		return refusalResult(refusal.New(refusal.NestingLimit, "calls nest %d deep here, the most a run allows (a tool calling tools calling tools…); `%s` was not run.", depth, c.Name)), nil
	}
	r := cc.run
	args := c.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	n := cc.nested.Add(1)
	if rf := r.nestedRefusal(cc, c.Name, n); rf.Kind != "" {
		return refusalResult(rf), nil
	}
	call := llm.ToolCall{ID: fmt.Sprintf("%s/%d", cc.info.CallID, n), Name: c.Name, Arguments: args}
	step := cc.info.Step
	span := trace.SpanFromContext(ctx)
	if rec, ok := r.record.lookup(call.ID); ok {
		return r.replayNested(cc, step, span, call, rec), nil
	}
	p := r.newPlan(call)
	p.parent = cc
	if p.tool == nil {
		msg := fmt.Sprintf("unknown tool: %q (the agent has no such tool)", c.Name)
		r.record.put(NestedCall{Call: call, Content: msg, IsError: true, Refused: true})
		return tool.Errorf("%s", msg), nil
	}
	pend := r.admit(step, span, &p, cc.Tainted(), true)
	if p.isRefused() {
		r.record.put(NestedCall{Call: p.call, Content: p.denial.Text, IsError: true, Refused: true})
		return refusalResult(p.denial), nil
	}
	if pend != nil {
		pend.Parent = cc.info.CallID
		r.record.pend(*pend)
		cc.paused.Store(true)
		return refusalResult(refusal.New(refusal.ApprovalRequired, "`%s` needs a person's approval (%s). It was not run. The run pauses after this call; once it is decided, this tool runs again: the calls it made before get their recorded results, and this one runs if approved.", c.Name, pend.Reason)), nil
	}
	x := r.execCall(ctx, step, span, &p)
	if x.stop != nil {
		r.nestedFailure(x.stop)
		return refusalResult(refusal.New(refusal.NotRun, "`%s` was not run: %v", c.Name, x.stop)), nil
	}
	if x.err != nil {
		r.nestedFailure(x.err)
	}
	raw := x.raw
	if raw.paused {
		cc.paused.Store(true) // a call nested deeper awaits approval
		return refusalResult(refusal.New(refusal.ApprovalRequired, "a call `%s` made awaits a person's approval; the run pauses after this call.", c.Name)), nil
	}
	shaped, err := r.shape(step, span, p.call, raw)
	if err != nil {
		r.nestedFailure(err)
		return refusalResult(refusal.New(refusal.Blocked, "the result of `%s` was withheld: %v", c.Name, err)), nil
	}
	if shaped.text != raw.text || shaped.isError != raw.isError {
		// What the tool gave was changed (a redaction): its structured
		// form would say what the text no longer does.
		shaped.structured = nil
	}
	if shaped.untrusted {
		cc.tainted.Store(true)
	}
	rec := NestedCall{Call: p.call, Content: shaped.text, IsError: shaped.isError, Structured: shaped.structured, Untrusted: shaped.untrusted}
	// A call that failed as the run was cancelled is not kept: its failure
	// is most likely the cancellation, and a resume runs it again.
	if !(raw.isError && ctx.Err() != nil) {
		r.record.put(rec)
	}
	return rec.result(), nil
}

// maxNestedDepth is how deeply calls made through CallNested may nest: a
// tool whose call calls a tool that calls a tool, and so on. It bounds a
// tool that calls itself, which no other bound may stop (the loop guard
// counts identical calls only, and MaxToolCalls may be off).
const maxNestedDepth = 16

// nestedDepth is how many calls made through CallNested cc's call is
// nested in: 0 for a call of the model.
func nestedDepth(cc *callCtx) int {
	n := 0
	for x := cc.parent; x != nil; x = x.parent {
		n++
	}
	return n
}

// replayNested answers a nested call from the record: the recorded result
// when the call is the one recorded at its place, a refusal otherwise.
func (r *runner) replayNested(cc *callCtx, step int, span string, call llm.ToolCall, rec NestedCall) tool.Result {
	if callSignature(call) != callSignature(rec.Call) {
		traceEvent(r, trace.NestedDiverged, span, trace.ToolCall{Step: step, Name: call.Name, CallID: call.ID, Error: "recorded: " + rec.Call.Name})
		return refusalResult(divergedMessage(call))
	}
	traceEvent(r, trace.NestedReplay, span, trace.ToolCall{Step: step, Name: call.Name, CallID: call.ID})
	r.record.count()
	if rec.Untrusted {
		cc.tainted.Store(true)
	}
	return rec.result()
}

// nestedFailure keeps err to stop the run once the turn's tools are done
// (a guardrail's block, a journal failure): the first one wins.
func (r *runner) nestedFailure(err error) {
	r.record.active.Store(true)
	r.record.mu.Lock()
	if r.record.err == nil {
		r.record.err = err
	}
	r.record.mu.Unlock()
}

// NestedCall is one call a tool made through CallNested, as the run's
// record keeps it (RunState.Nested): what was called, with what
// arguments, and what it gave the calling tool.
type NestedCall struct {
	// Call is the call, its id "<calling call id>/<n>".
	Call llm.ToolCall `json:"call"`
	// Content, IsError and Structured are the result the calling tool got
	// (after the post-tool hooks and guardrails).
	Content    string          `json:"content"`
	IsError    bool            `json:"is_error,omitempty"`
	Structured json.RawMessage `json:"structured,omitempty"`
	// Untrusted: the result was untrusted; replaying it taints the calling
	// tool again.
	Untrusted bool `json:"untrusted,omitempty"`
	// Refused: the gate refused the call; Content is the refusal.
	Refused bool `json:"refused,omitempty"`
}

func (n NestedCall) result() tool.Result {
	res := tool.Text(n.Content)
	res.IsError = n.IsError
	res.StructuredContent = n.Structured
	return res
}

// nestedRecord is the run's record of the nested calls of the turn in
// progress, and the calls among them awaiting a decision. It is kept in
// the state when the turn pauses (RunState.Nested), and cleared when the
// turn is done.
type nestedRecord struct {
	// active is set once the record holds anything (a tool called
	// through CallNested, a sub-agent ran, a resumed turn's record was
	// loaded); until then the turn has nothing of it to read or clear.
	active  atomic.Bool
	mu      sync.Mutex
	calls   map[string]NestedCall
	pending []PendingCall
	// subruns are the states of sub-agents' runs paused inside a call,
	// by "<call id>/<key>" (see runSub).
	subruns map[string]*RunState
	// counted is the number of nested calls of the turn that count
	// against Bounds.MaxToolCalls, replayed ones included.
	counted int
	err     error
}

// load starts the record from a state's (a resumed turn's).
func (n *nestedRecord) load(st *RunState) {
	n.active.Store(true)
	for _, c := range st.Nested {
		if n.calls == nil {
			n.calls = map[string]NestedCall{}
		}
		n.calls[c.Call.ID] = c
	}
	if len(st.Subruns) > 0 {
		n.subruns = make(map[string]*RunState, len(st.Subruns))
		for k, s := range st.Subruns {
			n.subruns[k] = s
		}
	}
}

func (n *nestedRecord) lookup(id string) (NestedCall, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	c, ok := n.calls[id]
	return c, ok
}

func (n *nestedRecord) put(c NestedCall) {
	n.active.Store(true)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.calls == nil {
		n.calls = map[string]NestedCall{}
	}
	n.calls[c.Call.ID] = c
}

func (n *nestedRecord) pend(p PendingCall) {
	n.active.Store(true)
	n.mu.Lock()
	n.pending = append(n.pending, p)
	n.mu.Unlock()
}

// count counts a replayed call against the run's tool-call bound: it was
// counted when it ran, in a turn that then paused and so counted nothing.
func (n *nestedRecord) count() {
	n.active.Store(true)
	n.mu.Lock()
	n.counted++
	n.mu.Unlock()
}

// subrun returns the kept state of the sub-run named key, if any.
func (n *nestedRecord) subrun(key string) (*RunState, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	st, ok := n.subruns[key]
	return st, ok && st != nil
}

// keepSubrun keeps st as the state of the sub-run named key (nil forgets
// it).
func (n *nestedRecord) keepSubrun(key string, st *RunState) {
	n.active.Store(true)
	n.mu.Lock()
	defer n.mu.Unlock()
	if st == nil {
		delete(n.subruns, key)
		return
	}
	if n.subruns == nil {
		n.subruns = map[string]*RunState{}
	}
	n.subruns[key] = st
}

// takePending returns and clears the nested calls awaiting a decision.
func (n *nestedRecord) takePending() []PendingCall {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.pending
	n.pending = nil
	return p
}

func (n *nestedRecord) takeErr() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	err := n.err
	n.err = nil
	return err
}

// keep writes the record into st, for a turn that pauses.
func (n *nestedRecord) keep(st *RunState) {
	n.mu.Lock()
	defer n.mu.Unlock()
	st.Nested = st.Nested[:0:0]
	for _, c := range n.calls {
		st.Nested = append(st.Nested, c)
	}
	slices.SortFunc(st.Nested, func(a, b NestedCall) int { return compareCallIDs(a.Call.ID, b.Call.ID) })
	st.Subruns = nil
	if len(n.subruns) > 0 {
		st.Subruns = make(map[string]*RunState, len(n.subruns))
		for k, s := range n.subruns {
			st.Subruns[k] = s
		}
	}
}

// reset clears the record once the turn is done.
func (n *nestedRecord) reset(st *RunState) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.active.Store(false)
	n.calls, n.pending, n.subruns, n.counted, n.err = nil, nil, nil, 0, nil
	st.Nested, st.Subruns = nil, nil
}

// compareCallIDs orders nested ids by their parts, numbers as numbers
// ("c1/2" before "c1/10").
func compareCallIDs(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] == bs[i] {
			continue
		}
		if len(as[i]) != len(bs[i]) && isDigits(as[i]) && isDigits(bs[i]) {
			return len(as[i]) - len(bs[i])
		}
		return strings.Compare(as[i], bs[i])
	}
	return len(as) - len(bs)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// callDigest is the digest of a call a person decides on: its tool and
// its arguments (canonical JSON), hex sha256. A decision applies only to
// a call with the same digest.
func callDigest(c llm.ToolCall) string {
	h := sha256.Sum256([]byte(callSignature(c)))
	return hex.EncodeToString(h[:])
}

// resumesNested reports whether the calling tool of call id paused for a
// nested call and so runs again: its journal entry says started, not
// finished, and that is not an unknown outcome.
func (r *runner) resumesNested(id string) bool {
	for d := range r.st.Decisions {
		if strings.HasPrefix(d, id+"/") {
			return true
		}
	}
	return false
}
