package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// plan is the fate of one call of a turn, decided before any call runs,
// and what it produced.
type plan struct {
	call llm.ToolCall
	tool tool.Tool // nil when the model named an unknown tool
	// overLimit: refused because the run's tool calls reached
	// Bounds.MaxToolCalls (not counted).
	overLimit bool
	// findTools: the run's own find_tools (tool search), answered by the
	// loop.
	findTools bool
	flags     tool.Flags
	denial    refusal.Refusal // set when the call is refused
	early     *earlyCall      // the call's early start, when it had one
	// parent is the calling tool's call, for a call made through
	// CallNested; nil for the model's.
	parent *callCtx
	// program: the call is code mode's run_program.
	program bool
	out     outcome
}

// outcome is what one call produced.
type outcome struct {
	res       llm.ToolResult // what the model sees
	refused   bool
	untrusted bool
	// done: the result is known for good (the call ran to completion or
	// was answered from the journal); a run stopped mid-turn keeps it.
	done bool
	// err stops the run (journal failure, replay divergence).
	err error
}

// turn decides, runs and records the calls of one model turn. It returns
// stop=true with the run's outcome when the run ends here (approval pause,
// cancellation, failure).
func (r *runner) turn(step int, llmSpan string, calls []llm.ToolCall) (*Result, bool, error) {
	plans, pending := r.plan(step, llmSpan, calls)
	if r.early != nil {
		r.adoptEarly(step, llmSpan, plans, len(pending) > 0)
	}
	if len(pending) > 0 {
		r.st.Pending = pending
		res, err := r.pauseForApproval(step, llmSpan, pending)
		return res, true, err
	}
	r.st.Pending = nil
	// The calls are persisted before any runs: after a crash, resume runs
	// these calls (the journal tells which already ran) instead of asking
	// the model again for different ones.
	if err := r.checkpoint(); err != nil {
		res, err := r.fail(step, err)
		return res, true, err
	}
	r.runCalls(step, llmSpan, plans)
	if r.aborted {
		return nil, true, errAborted
	}
	if u, ok := r.sink.take(); ok {
		r.addUsage(u)
	}
	// The record of the turn's nested calls is kept in the state whenever
	// the turn stops before its end, so the tools that run again on
	// resume get the results of the calls they made.
	var err error
	nested := r.record.active.Load() // a tool called through CallNested
	if nested {
		err = r.record.takeErr()
	}
	for i := range plans {
		if err == nil {
			err = plans[i].out.err
		}
	}
	if err != nil {
		r.st.Completed = completedResults(plans)
		r.record.keep(r.st)
		res, err := r.fail(step, err)
		return res, true, err
	}
	if ctxErr := r.ctx.Err(); ctxErr != nil {
		r.st.Completed = completedResults(plans)
		r.record.keep(r.st)
		res, err := r.stop(StopCancelled, ctxErr)
		return res, true, err
	}
	var waiting []PendingCall
	if nested {
		waiting = r.record.takePending()
	}
	if len(waiting) > 0 {
		// A tool's own call awaits approval: the turn stops here, keeping
		// the other calls' results; the tools that asked run again on
		// resume.
		r.st.Completed = completedResults(plans)
		r.record.keep(r.st)
		r.st.Pending = waiting
		res, err := r.pauseForApproval(step, llmSpan, waiting)
		return res, true, err
	}
	tainted := false
	r.st.ToolCalls += r.counted + r.record.counted
	r.counted = 0
	if nested {
		r.record.reset(r.st)
	}
	if r.search != nil {
		r.st.Revealed = r.search.names()
	}
	for i := range plans {
		o := &plans[i].out
		r.st.Messages = append(r.st.Messages, llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Type: llm.PartToolResult, ToolResult: &o.res}}})
		tainted = tainted || o.untrusted
	}
	r.st.Decisions, r.st.Completed = nil, nil
	if tainted && !r.st.Tainted {
		r.st.Tainted = true
		r.taint.Store(true)
		for i := range plans {
			if o := &plans[i].out; o.untrusted {
				traceEvent(r, trace.Tainted, r.runSpan, trace.ToolCall{Step: step, Name: o.res.Name, CallID: o.res.CallID})
				break
			}
		}
	}
	return nil, false, nil
}

// pauseForApproval stops the run with pending as the calls awaiting a
// decision (set in the state already): traced, announced, resumable.
func (r *runner) pauseForApproval(step int, llmSpan string, pending []PendingCall) (*Result, error) {
	names := make([]string, len(pending))
	for i, p := range pending {
		names[i] = p.Call.Name
	}
	traceEvent(r, trace.ApprovalRequired, llmSpan, trace.Guard{Step: step, CallID: pending[0].Call.ID, Names: names, Reason: pending[0].Reason})
	if !r.send(Event{Type: EventApproval, Step: step, Pending: append([]PendingCall(nil), pending...)}) {
		return nil, errAborted
	}
	return r.stop(StopApprovalRequired, nil)
}

func approvalMismatchMessage(name string) refusal.Refusal {
	return refusal.New(refusal.ApprovalMismatch, "this call of `%s` is not the call a person decided on under this id (the tool or the arguments differ), so it was not run.", name)
}

func toolCallLimitMessage(name string, limit int) refusal.Refusal {
	return refusal.New(refusal.ToolCallLimit, "`%s` was not run: this run may make %d tool calls and has made them. Answer now with what you have.", name, limit)
}

// toolsDisabledNote is what the model is told once the run's tool calls
// reached Bounds.MaxToolCalls.
func toolsDisabledNote(limit int) string {
	return fmt.Sprintf("[The host: this run's %d tool calls are spent and tools are disabled. Answer now with what you have.]", limit)
}

func completedResults(plans []plan) []llm.ToolResult {
	var done []llm.ToolResult
	for i := range plans {
		if o := &plans[i].out; o.done && !o.refused {
			done = append(done, o.res)
		}
	}
	return done
}

// plan runs the built-in guards, the policy and the human decisions over
// every call of the turn, before any runs (see screen).
func (r *runner) plan(step int, llmSpan string, calls []llm.ToolCall) ([]plan, []PendingCall) {
	plans := make([]plan, len(calls))
	var pending []PendingCall
	tainted := r.st.Tainted // taint before this turn's tools run
	for i, c := range calls {
		p := &plans[i]
		*p = r.newPlan(c)
		if r.search != nil && c.Name == findToolsName {
			p.findTools = true // the run's own; not counted
			continue
		}
		if pend := r.admit(step, llmSpan, p, tainted, false); pend != nil {
			pending = append(pending, *pend)
		}
	}
	return plans, pending
}

// newPlan is the plan of call before the gate: its tool and flags.
func (r *runner) newPlan(c llm.ToolCall) plan {
	p := plan{call: c}
	if c.Name == codemode.ToolName && r.codeMode() {
		p.tool, p.program = programTool{r}, true
		return p
	}
	if r.a.Tools != nil {
		if t, ok := r.a.Tools.Get(c.Name); ok {
			p.tool, p.flags = t, tool.FlagsOf(t)
		}
	}
	return p
}

// admit passes p's call through the gate (see gate), for the model's calls
// and those tools make through CallNested alike. It sets p.denial, or
// returns the call when it awaits a person's approval.
func (r *runner) admit(step int, span string, p *plan, tainted, nested bool) *PendingCall {
	r.screenMu.Lock()
	defer r.screenMu.Unlock()
	g := gateCall{p: p, step: step, span: span, tainted: tainted, nested: nested}
	return r.gate(&g)
}

// screenEarly is the gate's silent check of a call announced while the
// model still streams (early holds the calls announced so far): it reports
// whether the call is clean, so that it may start early.
func (r *runner) screenEarly(step int, llmSpan string, p *plan, tainted bool, early *earlyTurn) bool {
	r.screenMu.Lock()
	defer r.screenMu.Unlock()
	g := gateCall{p: p, step: step, span: llmSpan, tainted: tainted, early: early}
	r.gate(&g)
	return g.clean
}

// gateCall is one call on its way through the gate, and what the checks
// found so far.
type gateCall struct {
	p       *plan
	step    int
	span    string
	tainted bool // the run's taint when the call was asked for
	nested  bool // made by a tool through CallNested
	// early is set for the silent check of a call announced early (nil in
	// the tool phase): nothing is traced or counted, and any doubt means
	// "not early", never "refused".
	early *earlyTurn
	// approve says why the call needs a person (source: who asks); pend is
	// the call awaiting that decision.
	approve, source string
	pend            *PendingCall
	// clean: nothing so far refused the call, shadowed it or asked a
	// person about it.
	clean bool
}

// note traces a check's event, except in the silent early check.
func (g *gateCall) note(r *runner, typ trace.Type, ev trace.Guard) {
	if g.early == nil {
		traceEvent(r, typ, g.span, ev)
	}
}

// ev is the trace event of a check of the call.
func (g *gateCall) ev() trace.Guard {
	return trace.Guard{Step: g.step, Name: g.p.call.Name, CallID: g.p.call.ID}
}

// gateCheck is one check of the gate: it returns the call's refusal, or
// the zero Refusal to let the next check see the call.
type gateCheck func(r *runner, g *gateCall) refusal.Refusal

// gateChecks are the gate's checks, in the order a call meets them.
var gateChecks = [...]gateCheck{
	checkToolCallBound,
	checkOffered,
	checkCodeModeOnly,
	checkPreToolHooks,
	checkLoopGuard,
	checkTrifecta,
	checkPolicy,
	checkPerson,
}

// gate is the one stage that refuses a call. Every call passes it, the
// model's and those tools make through CallNested, one at a time (the
// caller holds screenMu: tools running in parallel, or started early,
// screen theirs meanwhile, so no check is asked twice at once). Its checks
// run in the order of gateChecks, each on the call as the ones before left
// it (a hook may rewrite the arguments): the run's tool-call bound, which
// counts the call; tool search and code mode only (for the model's calls);
// the pre-tool hooks; the loop guard; the trifecta; the policy; a person's
// decision. The first refusal ends it: the guards come first, so the policy
// can only add refusals, and a person can reject any call and approve one
// awaiting approval, never override a refusal.
//
// One failure rule: a check that fails (a hook or the policy returning an
// error, or panicking) refuses the call. Shadow mode (Bounds.ShadowGuards)
// turns the guards' refusals into traced would-blocks, never the policy's
// or a person's.
func (r *runner) gate(g *gateCall) *PendingCall {
	g.clean = true
	for _, check := range gateChecks {
		rf := check(r, g)
		if g.early != nil && (rf.Kind != "" || !g.clean) {
			g.clean = false
			return nil
		}
		if rf.Kind != "" {
			g.p.denial, g.clean = rf, false
			return nil
		}
	}
	return g.pend
}

// checkToolCallBound refuses a call past Bounds.MaxToolCalls and counts
// the others. Early, a call that may be past it waits for the turn.
func checkToolCallBound(r *runner, g *gateCall) refusal.Refusal {
	m := r.b.MaxToolCalls
	if g.early != nil {
		if m > 0 && r.st.ToolCalls+len(g.early.announced) > m {
			g.clean = false
		}
		return refusal.Refusal{}
	}
	if m > 0 && r.st.ToolCalls+r.counted+r.record.counted >= m {
		g.p.overLimit = true
		ev := g.ev()
		ev.Limit = m
		g.note(r, trace.ToolsDisabled, ev)
		return toolCallLimitMessage(g.p.call.Name, m)
	}
	r.counted++
	return refusal.Refusal{}
}

// checkOffered refuses the model a tool that tool search has not offered
// it yet. A program's calls are checked against what is declared to it
// (nestedRefusal).
func checkOffered(r *runner, g *gateCall) refusal.Refusal {
	if !g.nested && !g.p.program && r.search != nil && !r.search.isRevealed(g.p.call.Name) {
		return notOfferedMessage(g.p.call.Name)
	}
	return refusal.Refusal{}
}

// checkCodeModeOnly refuses the model a direct call when code mode offers
// the tools to programs only.
func checkCodeModeOnly(r *runner, g *gateCall) refusal.Refusal {
	if g.nested || r.a.CodeMode.Mode != codemode.Only {
		return refusal.Refusal{}
	}
	return r.modelRefusal(g.p.call.Name)
}

// checkPreToolHooks runs the pre-tool hooks (see preHooks). Early, a call
// any hook would see waits for the turn: hooks see every call before
// anything runs it.
func checkPreToolHooks(r *runner, g *gateCall) refusal.Refusal {
	if len(r.a.Checks.PreToolHooks) == 0 {
		return refusal.Refusal{}
	}
	if g.early != nil {
		g.clean = false
		return refusal.Refusal{}
	}
	return r.preHooks(g.step, g.span, g.p)
}

// checkLoopGuard refuses a call repeated past Bounds.MaxRepeatedToolCalls.
// A tool's calls are counted as they are made, the model's as their turn
// is appended.
func checkLoopGuard(r *runner, g *gateCall) refusal.Refusal {
	if r.guard == nil {
		return refusal.Refusal{}
	}
	c := g.p.call
	if g.nested {
		r.guard.observe([]llm.ToolCall{c})
	}
	var extra int // asks of this turn the guard has not observed yet
	if g.early != nil {
		extra = g.early.repeats(c)
	}
	n, over := r.guard.check(c, extra)
	if !over {
		return refusal.Refusal{}
	}
	ev := g.ev()
	ev.Repeats = n
	return r.guardHit(g, trace.LoopGuardBlock, trace.LoopGuardWouldBlock, ev, repeatedCallMessage(c.Name, r.b.MaxRepeatedToolCalls))
}

// checkTrifecta refuses, or asks a person about, an egress call once the
// run is tainted (Bounds.Trifecta).
func checkTrifecta(r *runner, g *gateCall) refusal.Refusal {
	if !g.tainted || !g.p.flags.Egress {
		return refusal.Refusal{}
	}
	name := g.p.call.Name
	switch r.b.Trifecta {
	case TrifectaDeny:
		return r.guardHit(g, trace.TrifectaBlock, trace.TrifectaWouldBlock, g.ev(), egressBlockedMessage(name))
	case TrifectaApprove:
		g.approve, g.source, g.clean = egressApprovalReason(name), "trifecta", false
		g.note(r, trace.TrifectaApprovalRequired, g.ev())
	}
	return refusal.Refusal{}
}

// guardHit is a built-in guard's refusal, or in shadow mode its traced
// would-block.
func (r *runner) guardHit(g *gateCall, block, wouldBlock trace.Type, ev trace.Guard, rf refusal.Refusal) refusal.Refusal {
	g.clean = false
	if g.early != nil {
		return rf
	}
	if !r.b.ShadowGuards {
		g.note(r, block, ev)
		return rf
	}
	r.wouldBlock.Add(1)
	g.note(r, wouldBlock, ev)
	return refusal.Refusal{}
}

// checkPolicy asks the policy: it denies (a failing policy denies too, see
// decide), asks a person, or allows.
func checkPolicy(r *runner, g *gateCall) refusal.Refusal {
	if r.a.Checks.Policy == nil {
		return refusal.Refusal{}
	}
	p := g.p
	in := &PolicyInput{Call: p.call, Flags: p.flags, Known: p.tool != nil, Step: g.step, Tainted: g.tainted, RunID: r.st.RunID, Messages: r.st.Messages}
	if p.tool != nil {
		in.Spec = p.tool.Spec()
	}
	if g.early != nil {
		in.Early, in.Messages = true, g.early.transcript(r.st.Messages)
	}
	d := decide(r.ctx, r.a.Checks.Policy, in)
	switch d.Verdict {
	case VerdictDeny:
		ev := g.ev()
		ev.Reason = d.Reason
		g.note(r, trace.PolicyDeny, ev)
		return policyDeniedMessage(d.Reason)
	case VerdictApprove:
		if g.approve == "" {
			g.approve, g.source = d.Reason, "policy"
		}
		g.clean = false
	}
	return refusal.Refusal{}
}

// checkPerson applies a person's decision on the call: a rejection refuses
// it, an approval lets a call awaiting one run; a call awaiting approval
// without one is pending. A decision is for the call the person was shown:
// one bound to another call (a tool's re-run that diverged, an edited
// state) refuses this one.
func checkPerson(r *runner, g *gateCall) refusal.Refusal {
	c := g.p.call
	human, decided := r.st.Decisions[c.ID]
	if decided && human.Digest == "" && human.Verdict == VerdictApprove {
		// An approval bound to no call (a state written by an older
		// build) approves nothing: the call is asked for again.
		decided = false
	}
	if decided && g.early != nil {
		g.clean = false
		return refusal.Refusal{}
	}
	ev := g.ev()
	if decided && human.Digest != "" && human.Digest != callDigest(c) {
		ev.Reason = "the call is not the one that was decided on"
		g.note(r, trace.ApprovalMismatch, ev)
		return approvalMismatchMessage(c.Name)
	}
	if decided && human.Verdict == VerdictDeny {
		ev.Verdict, ev.Reason = "reject", human.Reason
		g.note(r, trace.ApprovalDecision, ev)
		return humanRejectedMessage(human.Reason)
	}
	if g.approve == "" {
		return refusal.Refusal{}
	}
	if decided && human.Verdict == VerdictApprove {
		ev.Verdict, ev.Reason = "approve", g.approve
		g.note(r, trace.ApprovalDecision, ev)
		return refusal.Refusal{}
	}
	g.pend = &PendingCall{Call: c, Reason: g.approve, Source: g.source}
	return refusal.Refusal{}
}

// runCalls runs the calls of a turn that were not refused, storing each
// outcome in its plan: one after the other, or several at once (bounded)
// when the agent allows it. Events are in the model's call order either
// way.
func (r *runner) runCalls(step int, llmSpan string, plans []plan) {
	completed := r.completedByID()
	runnable := 0
	for i := range plans {
		if !plans[i].isRefused() {
			runnable++
		}
	}
	if runnable > 1 && r.parallel > 1 {
		for i := range plans {
			if !r.sendToolStart(step, &plans[i]) {
				return
			}
		}
		sem := r.toolSlots()
		var wg sync.WaitGroup
		for i := range plans {
			p := &plans[i]
			if p.isRefused() {
				p.out = refused(p)
				continue
			}
			// A call started early holds a slot of its own.
			if p.early == nil {
				sem <- struct{}{}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if p.early == nil {
					defer func() { <-sem }()
				}
				p.out = r.runCall(step, llmSpan, p, completed)
			}()
		}
		wg.Wait()
		for i := range plans {
			if !r.sendToolEnd(step, &plans[i]) {
				return
			}
		}
		return
	}
	for i := range plans {
		p := &plans[i]
		if !r.sendToolStart(step, p) {
			return
		}
		switch {
		case p.isRefused():
			p.out = refused(p)
		case p.early == nil && r.early != nil:
			// Calls started early may still be running: together they
			// stay within MaxParallelTools.
			slots := r.early.slots
			slots <- struct{}{}
			p.out = r.runCall(step, llmSpan, p, completed)
			<-slots
		default:
			p.out = r.runCall(step, llmSpan, p, completed)
		}
		if !r.sendToolEnd(step, p) {
			return
		}
	}
}

// toolSlots bounds the calls of a turn running at once: the run's slots,
// shared with calls started early, when there are any.
func (r *runner) toolSlots() chan struct{} {
	if r.early != nil {
		return r.early.slots
	}
	return make(chan struct{}, r.parallel)
}

func (r *runner) sendToolStart(step int, p *plan) bool {
	if r.emit == nil {
		return true
	}
	return r.send(Event{Type: EventToolStart, Step: step, Call: &p.call, Refused: p.isRefused()})
}

func (r *runner) sendToolEnd(step int, p *plan) bool {
	if r.emit == nil {
		return true
	}
	return r.send(Event{Type: EventToolEnd, Step: step, Call: &p.call, ToolResult: &p.out.res, Refused: p.out.refused})
}

func (r *runner) completedByID() map[string]llm.ToolResult {
	if len(r.st.Completed) == 0 {
		return nil
	}
	m := make(map[string]llm.ToolResult, len(r.st.Completed))
	for _, c := range r.st.Completed {
		m[c.CallID] = c
	}
	return m
}

func refused(p *plan) outcome {
	return outcome{res: p.denial.Result(p.call.ID, p.call.Name), refused: true, done: true}
}

// refusedRaw is rf as what a call produced.
func refusedRaw(rf refusal.Refusal) rawResult {
	return rawResult{text: rf.Text, isError: true, refusal: rf.Kind}
}

// isRefused reports whether the gate refused p's call.
func (p *plan) isRefused() bool { return p.denial.Kind != "" }

// rawResult is what a tool produced, before the loop bounds and frames it.
type rawResult struct {
	text      string
	isError   bool
	infra     bool // the tool returned a Go error
	untrusted bool // flagged untrusted, or reported tainted
	// refusal is set when the loop, not the tool, wrote text (a journal
	// divergence, an unknown outcome, a timeout).
	refusal refusal.Kind
	// structured is the tool's structured content, for a nested call's
	// caller (the model reads text).
	structured json.RawMessage
	// paused: a call the tool made through CallNested awaits approval, so
	// this result is not kept: on resume the tool runs again.
	paused bool
}

// runCall runs one call, exactly once across crashes when a journal is
// configured, or takes the result of its early start. It may run
// concurrently with other calls of the turn: it reads the run's state but
// never writes it.
func (r *runner) runCall(step int, llmSpan string, p *plan, completed map[string]llm.ToolResult) outcome {
	c := p.call
	if p.findTools {
		text, isErr := r.search.find(c.Arguments)
		return outcome{res: llm.ToolResult{CallID: c.ID, Name: c.Name, Content: text, IsError: isErr}, done: true}
	}
	if prev, ok := completed[c.ID]; ok {
		return outcome{res: prev, done: true, untrusted: prev.Untrusted}
	}
	if p.early != nil {
		if x, ok := r.awaitEarly(p); ok {
			return r.settle(step, llmSpan, p, x)
		}
	}
	return r.settle(step, llmSpan, p, r.execCall(r.ctx, step, llmSpan, p))
}

// execution is what running a call (or finding it in the journal)
// produced, before the loop records, bounds and frames it.
type execution struct {
	raw rawResult
	ran bool // the tool ran (its result was not taken from the journal)
	// stop ends the call without a result (journal or replay failure
	// before any result).
	stop error
	// err stops the run after the result is known (the journal could not
	// record it).
	err error
}

// execCall is the part of a call that touches the outside world: the
// journal's "started", the tool, the journal's "finished". ctx is the
// run's context, or an early start's own. A call that failed once ctx was
// cancelled does not record "finished": its failure most likely is the
// cancellation, so on resume it counts as started and not finished (run
// again when idempotent, of unknown outcome otherwise), as the run state
// does not keep it either (settle).
func (r *runner) execCall(ctx context.Context, step int, llmSpan string, p *plan) execution {
	c := p.call
	j := r.a.Journal
	if j != nil {
		jctx := context.WithoutCancel(ctx)
		e, found, err := j.Lookup(jctx, r.st.RunID, c.ID)
		if err != nil {
			return execution{stop: fmt.Errorf("%w: looking up call %s: %v (the call was not run)", ErrJournal, c.ID, err)}
		}
		ev := trace.ToolCall{Step: step, Name: c.Name, CallID: c.ID}
		digest := callDigest(c)
		switch {
		case found && e.Digest != "" && e.Digest != digest:
			ev.Error = "the journal holds another call under this id"
			traceEvent(r, trace.NestedDiverged, llmSpan, ev)
			return execution{raw: refusedRaw(divergedMessage(c))}
		case found && e.Status == JournalFinished:
			traceEvent(r, trace.JournalReplay, llmSpan, ev)
			return execution{raw: rawResult{text: e.Content, isError: e.IsError, infra: e.Infrastructure, untrusted: e.Untrusted, refusal: refusal.Kind(e.Refusal)}}
		case found && !p.flags.Idempotent && !r.resumesNested(c.ID):
			traceEvent(r, trace.OutcomeUnknown, llmSpan, ev)
			return execution{raw: refusedRaw(refusal.Unknown(c.Name))}
		}
		if err := j.Record(jctx, JournalEntry{RunID: r.st.RunID, CallID: c.ID, Name: c.Name, Step: step, Status: JournalStarted, Digest: digest, Time: time.Now().UTC()}); err != nil {
			return execution{stop: fmt.Errorf("%w: recording the start of call %s: %v (the call was not run)", ErrJournal, c.ID, err)}
		}
	}
	raw, stop := r.invoke(ctx, step, llmSpan, p)
	if stop != nil {
		return execution{stop: stop}
	}
	x := execution{raw: raw, ran: true}
	if j != nil && !(raw.isError && ctx.Err() != nil) && !raw.paused {
		err := j.Record(context.WithoutCancel(ctx), JournalEntry{RunID: r.st.RunID, CallID: c.ID, Name: c.Name, Step: step, Status: JournalFinished, Digest: callDigest(c),
			Content: raw.text, IsError: raw.isError, Infrastructure: raw.infra, Untrusted: raw.untrusted, Refusal: string(raw.refusal), Time: time.Now().UTC()})
		if err != nil {
			x.err = fmt.Errorf("%w: recording the result of call %s: %v (the call ran; resume reports its outcome as unknown)", ErrJournal, c.ID, err)
		}
	}
	return x
}

// settle turns an execution into the call's outcome, in the tool phase:
// the recording, the replay check, the width bound and the untrusted
// frame.
func (r *runner) settle(step int, llmSpan string, p *plan, x execution) outcome {
	c := p.call
	o := outcome{res: llm.ToolResult{CallID: c.ID, Name: c.Name}}
	if x.stop != nil {
		o.err = x.stop
		return o
	}
	raw := x.raw
	o.err = x.err
	if x.ran && r.rec != nil {
		r.rec.tool(r, step, c, raw)
	}
	if x.ran && r.replay != nil {
		if err := r.replay.checkTool(step, c, raw); err != nil && o.err == nil {
			o.err = err
		}
	}
	// What the tool gave is recorded and journaled; the hooks and the
	// guardrails shape what the model sees.
	raw, err := r.shape(step, llmSpan, c, raw)
	if err != nil && o.err == nil {
		o.err = err
	}
	text := raw.text
	if r.b.MaxToolResultChars > 0 {
		if cut, ok := truncateMiddle(text, r.b.MaxToolResultChars); ok {
			if r.tr != nil {
				traceEvent(r, trace.ResultTruncated, llmSpan, trace.ToolCall{Step: step, Name: c.Name, CallID: c.ID, Chars: utf8.RuneCountInString(text), Limit: r.b.MaxToolResultChars})
			}
			text = cut
		}
	}
	if raw.untrusted {
		text = frameUntrusted(text)
	}
	o.res.Content, o.res.IsError, o.untrusted = text, raw.isError, raw.untrusted
	o.res.Refusal, o.res.Untrusted = string(raw.refusal), raw.untrusted
	// A call that failed while the run was being cancelled most likely
	// failed because of it: it is not kept, so resume runs it again.
	o.done = (!(raw.isError && r.ctx.Err() != nil) || !x.ran) && !raw.paused
	return o
}

// shape runs the post-tool hooks and the tool-result guardrails over a
// result, for the model's calls and nested ones alike. The error is a
// guardrail's block, which stops the run.
func (r *runner) shape(step int, span string, c llm.ToolCall, raw rawResult) (rawResult, error) {
	if len(r.a.Checks.PostToolHooks) > 0 {
		r.postHooks(step, span, c, &raw)
	}
	var gs []Guardrail
	if r.rails {
		gs = r.guardrails(GuardToolResult)
	}
	if len(gs) == 0 {
		return raw, nil
	}
	text, _, err := r.checkGuardrails(gs, GuardToolResult, step, span, c.Name, raw.text)
	raw.text = text
	return raw, err
}

func divergedMessage(c llm.ToolCall) refusal.Refusal {
	return refusal.New(refusal.Diverged, "call %s of `%s` is not the call recorded under this id before the run stopped (the tool or the arguments differ), so it was not run. A re-run must make the same calls in the same order.", c.ID, c.Name)
}

// invoke calls the tool. A Go error from the tool is an infrastructure
// failure: the model sees it as an error result and the trace marks it. A
// replay divergence (the offline replay tools report one as a Go error)
// stops the run instead.
func (r *runner) invoke(ctx context.Context, step int, llmSpan string, p *plan) (rawResult, error) {
	c := p.call
	var span string
	var t0 time.Time
	if r.tr != nil {
		span = traceEvent(r, trace.ToolCallStart, llmSpan, trace.ToolCall{Step: step, Name: c.Name, CallID: c.ID, Arguments: r.preview(string(c.Arguments))})
		t0 = time.Now()
	}
	tc := &toolCtx{Context: ctx, call: callCtx{info: CallInfo{RunID: r.st.RunID, Step: step, CallID: c.ID, Name: c.Name}, sink: &r.sink, run: r, parent: p.parent, program: p.program}}
	cc := &tc.call
	defer cc.over.Store(true)
	ctx = tc
	if span != "" {
		ctx = trace.WithSpanOf(ctx, r.tr, span)
	}
	if rp := r.replay; rp != nil && rp.offline {
		raw, err := rp.offlineResult(step, c)
		if err != nil {
			return rawResult{}, err
		}
		r.traceToolEnd(span, t0, step, c, raw, nil)
		return raw, nil
	}
	var res tool.Result
	var err error
	switch {
	case p.tool != nil && r.toolTimeout(p) > 0:
		res, err = callWithin(ctx, r.toolTimeout(p), p.tool, tool.FromLLM(c))
	case p.tool != nil:
		res, err = tool.SafeCall(ctx, p.tool, tool.FromLLM(c))
	case r.a.Tools != nil:
		res, err = r.a.Tools.Call(ctx, tool.FromLLM(c)) // the registry's "unknown tool" result
	default:
		res = tool.Errorf("unknown tool: %q (this agent has no tools)", c.Name)
	}
	raw := rawResult{text: resultText(&res), isError: res.IsError, untrusted: (p.flags.Untrusted && !res.HostText) || cc.tainted.Load(), paused: cc.paused.Load(), structured: res.StructuredContent}
	if err != nil {
		// Declared here, not above: errors.As makes it escape, and a heap
		// allocation per successful call is a cost of the hot path.
		var mismatch *ReplayMismatch
		if errors.As(err, &mismatch) {
			return rawResult{}, err
		}
		var rf refusal.Refusal
		if errors.As(err, &rf) && rf.Kind.MayHaveRun() {
			// The loop's own timeout, or a stand-in's (a durable
			// workflow's, a sub-agent's pause): a result, not a tool
			// failure. A tool may not claim a refusal before running
			// (a guard's, the policy's): that is the gate's alone.
			raw = refusedRaw(rf)
			raw.untrusted, raw.paused = p.flags.Untrusted || cc.tainted.Load(), cc.paused.Load()
			r.traceToolEnd(span, t0, step, c, raw, nil)
			return raw, nil
		}
		raw = rawResult{text: fmt.Sprintf("tool %s failed: %v", c.Name, err), isError: true, infra: true, untrusted: raw.untrusted, paused: raw.paused}
	}
	r.traceToolEnd(span, t0, step, c, raw, err)
	return raw, nil
}

// toolTimeout is the time p's call may take: the tool's own, else the
// run's; 0 for none.
func (r *runner) toolTimeout(p *plan) time.Duration {
	if p.flags.Timeout > 0 {
		return p.flags.Timeout
	}
	return r.b.ToolTimeout
}

// callWithin calls t with a context that ends after limit. Past the limit
// the call ends at once with an error result naming it, whether or not the
// tool heeds its context: one that does not is left to finish on its own,
// and what it returns is dropped. A cancellation of the run itself is
// waited for, as for any call.
func callWithin(ctx context.Context, limit time.Duration, t tool.Tool, c tool.Call) (tool.Result, error) {
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type outcome struct {
		res tool.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := tool.SafeCall(cctx, t, c)
		done <- outcome{res, err}
	}()
	// The limit ended the call, not the run's own cancellation.
	timedOut := func() bool { return ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) }
	select {
	case o := <-done:
		// A failure as the limit passed is the limit's doing.
		if timedOut() && (o.err != nil || o.res.IsError) {
			return tool.Result{}, refusal.Timeout(c.Name, limit)
		}
		return o.res, o.err
	case <-cctx.Done():
		if !timedOut() {
			o := <-done
			return o.res, o.err
		}
		return tool.Result{}, refusal.Timeout(c.Name, limit)
	}
}

func (r *runner) traceToolEnd(span string, t0 time.Time, step int, c llm.ToolCall, raw rawResult, err error) {
	if r.tr == nil {
		return
	}
	ev := trace.ToolCall{Step: step, Name: c.Name, CallID: c.ID, Status: "ok", DurationMS: msSince(t0), Content: r.preview(raw.text), Infrastructure: raw.infra}
	if raw.isError {
		ev.Status = "error"
	}
	if err != nil {
		ev.Error = err.Error()
	}
	traceEvent(r, trace.ToolCallEnd, span, ev)
}

// resultText is res.Text() without its allocations in the common case of
// one text item.
func resultText(res *tool.Result) string {
	if len(res.Content) == 1 && res.Content[0].Type == "text" {
		return res.Content[0].Text
	}
	return res.Text()
}

// usageSink gathers usage reported by the tools of a turn (sub-agents, tools
// that call models); the loop folds it into the run's spend after the turn.
type usageSink struct {
	mu   sync.Mutex
	u    llm.Usage
	have bool
}

func (s *usageSink) add(u llm.Usage) {
	s.mu.Lock()
	s.u = s.u.Add(u.Normalize())
	s.have = true
	s.mu.Unlock()
}

// take returns and clears the gathered usage.
func (s *usageSink) take() (llm.Usage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, have := s.u, s.have
	s.u, s.have = llm.Usage{}, false
	return u, have
}

// callIDs keeps the tool-call ids of a run unique. Approvals, checkpoints,
// journals and tool results all refer to a call by id, so a provider that
// sends none (Gemini) or repeats one must not make two calls
// indistinguishable.
type callIDs struct {
	used map[string]struct{}
}

// seed records the ids already in msgs (a resumed or caller-supplied
// transcript).
func (c *callIDs) seed(msgs []llm.Message) {
	for _, m := range msgs {
		if m.Role != llm.RoleAssistant {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == llm.PartToolCall && p.ToolCall != nil {
				c.add(p.ToolCall.ID)
			}
		}
	}
}

func (c *callIDs) add(id string) {
	if c.used == nil {
		c.used = make(map[string]struct{})
	}
	c.used[id] = struct{}{}
}

func (c *callIDs) has(id string) bool {
	_, ok := c.used[id]
	return ok
}

// fix gives every tool call of msg a run-unique id, in place in a copy of
// the parts: an empty or already-used id, or one holding a "/" (the
// separator of the ids of calls tools make, "<call id>/<n>", which a model
// must not be able to name), becomes "call_<step>_<index>" (with a suffix
// if even that is taken), deterministic so replays and tests see the same
// ids. It returns msg unchanged when no id changed.
func (c *callIDs) fix(msg llm.Message, step int) llm.Message {
	copied := false
	idx := 0
	for i, p := range msg.Parts {
		if p.Type != llm.PartToolCall || p.ToolCall == nil {
			continue
		}
		idx++
		id := p.ToolCall.ID
		if id != "" && !c.has(id) && !strings.Contains(id, "/") {
			c.add(id)
			continue
		}
		base := "call_" + strconv.Itoa(step) + "_" + strconv.Itoa(idx)
		id = base
		for n := 2; c.has(id); n++ {
			id = base + "_" + strconv.Itoa(n)
		}
		c.add(id)
		if !copied {
			msg.Parts = append([]llm.Part(nil), msg.Parts...)
			copied = true
		}
		tc := *p.ToolCall
		tc.ID = id
		msg.Parts[i].ToolCall = &tc
	}
	return msg
}
