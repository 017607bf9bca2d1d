package loop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// plan is the fate of one call of a turn, decided before any call runs,
// and what it produced.
type plan struct {
	call    llm.ToolCall
	tool    tool.Tool // nil when the model named an unknown tool
	flags   tool.Flags
	refusal string // the error the model sees when the call is refused
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
func (r *runner) turn(step int, llmSpan string, calls []llm.ToolCall) (*Result, error, bool) {
	plans, pending := r.plan(step, llmSpan, calls)
	if len(pending) > 0 {
		r.st.Pending = pending
		names := make([]string, len(pending))
		for i, p := range pending {
			names[i] = p.Call.Name
		}
		r.traceEvent(trace.ApprovalRequired, llmSpan, trace.Payload{Step: step, CallID: pending[0].Call.ID, Names: names, Reason: pending[0].Reason})
		if !r.send(Event{Type: EventApproval, Step: step, Pending: append([]PendingCall(nil), pending...)}) {
			return nil, errAborted, true
		}
		res, err := r.stop(StopApprovalRequired, nil)
		return res, err, true
	}
	r.st.Pending = nil
	// The calls are persisted before any runs: after a crash, resume runs
	// these calls (the journal tells which already ran) instead of asking
	// the model again for different ones.
	if err := r.checkpoint(); err != nil {
		res, err := r.fail(step, err)
		return res, err, true
	}
	r.runCalls(step, llmSpan, plans)
	if r.aborted {
		return nil, errAborted, true
	}
	if u, ok := r.sink.take(); ok {
		r.addUsage(u)
	}
	for i := range plans {
		if err := plans[i].out.err; err != nil {
			r.st.Completed = completedResults(plans)
			res, err := r.fail(step, err)
			return res, err, true
		}
	}
	if ctxErr := r.ctx.Err(); ctxErr != nil {
		r.st.Completed = completedResults(plans)
		res, err := r.stop(StopCancelled, ctxErr)
		return res, err, true
	}
	tainted := false
	for i := range plans {
		o := &plans[i].out
		r.st.Messages = append(r.st.Messages, llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Type: llm.PartToolResult, ToolResult: &o.res}}})
		tainted = tainted || o.untrusted
	}
	r.st.Decisions, r.st.Completed = nil, nil
	if tainted && !r.st.Tainted {
		r.st.Tainted = true
		for i := range plans {
			if o := &plans[i].out; o.untrusted {
				r.traceEvent(trace.Tainted, r.runSpan, trace.Payload{Step: step, Name: o.res.Name, CallID: o.res.CallID})
				break
			}
		}
	}
	return nil, nil, false
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
// every call of the turn, before any runs. Guards first (loop guard, then
// trifecta); the policy can only add refusals; a human can reject any call
// and approve those awaiting approval, never override a refusal.
func (r *runner) plan(step int, llmSpan string, calls []llm.ToolCall) ([]plan, []PendingCall) {
	plans := make([]plan, len(calls))
	var pending []PendingCall
	tainted := r.st.Tainted // taint before this turn's tools run
	shadow := r.b.ShadowGuards
	for i, c := range calls {
		p := &plans[i]
		p.call = c
		if r.a.Tools != nil {
			if t, ok := r.a.Tools.Get(c.Name); ok {
				p.tool, p.flags = t, tool.FlagsOf(t)
			}
		}
		ev := trace.Payload{Step: step, Name: c.Name, CallID: c.ID}

		if n, over := r.guard.check(c); over {
			ev.Repeats = n
			if shadow {
				r.wouldBlock++
				r.traceEvent(trace.LoopGuardWouldBlock, llmSpan, ev)
			} else {
				r.traceEvent(trace.LoopGuardBlock, llmSpan, ev)
				p.refusal = repeatedCallMessage(c.Name, r.b.MaxRepeatedToolCalls)
				continue
			}
		}
		var approveReason, approveSource string
		if tainted && p.flags.Egress {
			switch r.b.Trifecta {
			case TrifectaDeny:
				if shadow {
					r.wouldBlock++
					r.traceEvent(trace.TrifectaWouldBlock, llmSpan, ev)
				} else {
					r.traceEvent(trace.TrifectaBlock, llmSpan, ev)
					p.refusal = egressBlockedMessage(c.Name)
					continue
				}
			case TrifectaApprove:
				approveReason, approveSource = egressApprovalReason(c.Name), "trifecta"
				r.traceEvent(trace.TrifectaApprovalRequired, llmSpan, ev)
			}
		}
		if r.a.Policy != nil {
			in := &PolicyInput{Call: c, Flags: p.flags, Known: p.tool != nil, Step: step, Tainted: tainted, RunID: r.st.RunID, Messages: r.st.Messages}
			if p.tool != nil {
				in.Spec = p.tool.Spec()
			}
			d := decide(r.ctx, r.a.Policy, in)
			switch d.Verdict {
			case VerdictDeny:
				ev.Reason = d.Reason
				r.traceEvent(trace.PolicyDeny, llmSpan, ev)
				p.refusal = policyDeniedMessage(d.Reason)
				continue
			case VerdictApprove:
				if approveReason == "" {
					approveReason, approveSource = d.Reason, "policy"
				}
			}
		}
		human, decided := r.st.Decisions[c.ID]
		if decided && human.Verdict == VerdictDeny {
			ev.Verdict, ev.Reason = "reject", human.Reason
			r.traceEvent(trace.ApprovalDecision, llmSpan, ev)
			p.refusal = humanRejectedMessage(human.Reason)
			continue
		}
		if approveReason != "" {
			if decided && human.Verdict == VerdictApprove {
				ev.Verdict, ev.Reason = "approve", approveReason
				r.traceEvent(trace.ApprovalDecision, llmSpan, ev)
				continue
			}
			pending = append(pending, PendingCall{Call: c, Reason: approveReason, Source: approveSource})
		}
	}
	return plans, pending
}

// runCalls runs the calls of a turn that were not refused, storing each
// outcome in its plan: one after the other, or several at once (bounded)
// when the agent allows it. Events are in the model's call order either
// way.
func (r *runner) runCalls(step int, llmSpan string, plans []plan) {
	completed := r.completedByID()
	runnable := 0
	for i := range plans {
		if plans[i].refusal == "" {
			runnable++
		}
	}
	if runnable > 1 && r.parallel > 1 {
		for i := range plans {
			if !r.sendToolStart(step, &plans[i]) {
				return
			}
		}
		sem := make(chan struct{}, r.parallel)
		var wg sync.WaitGroup
		for i := range plans {
			p := &plans[i]
			if p.refusal != "" {
				p.out = refused(p)
				continue
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
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
		if p.refusal != "" {
			p.out = refused(p)
		} else {
			p.out = r.runCall(step, llmSpan, p, completed)
		}
		if !r.sendToolEnd(step, p) {
			return
		}
	}
}

func (r *runner) sendToolStart(step int, p *plan) bool {
	if r.emit == nil {
		return true
	}
	return r.send(Event{Type: EventToolStart, Step: step, Call: &p.call, Refused: p.refusal != ""})
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
	return outcome{res: llm.ToolResult{CallID: p.call.ID, Name: p.call.Name, Content: p.refusal, IsError: true}, refused: true, done: true}
}

// rawResult is what a tool produced, before the loop bounds and frames it.
type rawResult struct {
	text      string
	isError   bool
	infra     bool // the tool returned a Go error
	untrusted bool // flagged untrusted, or reported tainted
}

// runCall runs one call, exactly once across crashes when a journal is
// configured. It may run concurrently with other calls of the turn: it
// reads the run's state but never writes it.
func (r *runner) runCall(step int, llmSpan string, p *plan, completed map[string]llm.ToolResult) outcome {
	c := p.call
	o := outcome{res: llm.ToolResult{CallID: c.ID, Name: c.Name}}
	if prev, ok := completed[c.ID]; ok {
		return outcome{res: prev, done: true, untrusted: strings.Contains(prev.Content, UntrustedOpen)}
	}
	var raw rawResult
	ran := false
	j := r.a.Journal
	if j != nil {
		jctx := context.WithoutCancel(r.ctx)
		e, found, err := j.Lookup(jctx, r.st.RunID, c.ID)
		if err != nil {
			o.err = fmt.Errorf("%w: looking up call %s: %v (the call was not run)", ErrJournal, c.ID, err)
			return o
		}
		ev := trace.Payload{Step: step, Name: c.Name, CallID: c.ID}
		switch {
		case found && e.Status == JournalFinished:
			raw = rawResult{text: e.Content, isError: e.IsError, infra: e.Infrastructure, untrusted: e.Untrusted}
			r.traceEvent(trace.JournalReplay, llmSpan, ev)
		case found && !p.flags.Idempotent:
			raw = rawResult{text: outcomeUnknownMessage(c.Name), isError: true}
			r.traceEvent(trace.OutcomeUnknown, llmSpan, ev)
		default:
			if err := j.Record(jctx, JournalEntry{RunID: r.st.RunID, CallID: c.ID, Name: c.Name, Step: step, Status: JournalStarted, Time: time.Now().UTC()}); err != nil {
				o.err = fmt.Errorf("%w: recording the start of call %s: %v (the call was not run)", ErrJournal, c.ID, err)
				return o
			}
			ran = true
		}
	} else {
		ran = true
	}
	if ran {
		var stop error
		raw, stop = r.invoke(step, llmSpan, p)
		if stop != nil {
			o.err = stop
			return o
		}
		if j != nil {
			err := j.Record(context.WithoutCancel(r.ctx), JournalEntry{RunID: r.st.RunID, CallID: c.ID, Name: c.Name, Step: step, Status: JournalFinished,
				Content: raw.text, IsError: raw.isError, Infrastructure: raw.infra, Untrusted: raw.untrusted, Time: time.Now().UTC()})
			if err != nil {
				o.err = fmt.Errorf("%w: recording the result of call %s: %v (the call ran; resume reports its outcome as unknown)", ErrJournal, c.ID, err)
			}
		}
		r.a.Recorder.tool(r, step, c, raw)
		if err := r.a.replay.checkTool(step, c, raw); err != nil && o.err == nil {
			o.err = err
		}
	}
	text := raw.text
	if cut, ok := truncateMiddle(text, r.b.MaxToolResultChars); ok {
		if r.tr != nil {
			r.traceEvent(trace.ResultTruncated, llmSpan, trace.Payload{Step: step, Name: c.Name, CallID: c.ID, Chars: utf8.RuneCountInString(text), Limit: r.b.MaxToolResultChars})
		}
		text = cut
	}
	if raw.untrusted {
		text = frameUntrusted(text)
	}
	o.res.Content, o.res.IsError, o.untrusted = text, raw.isError, raw.untrusted
	// A call that failed while the run was being cancelled most likely
	// failed because of it: it is not kept, so resume runs it again.
	o.done = !(raw.isError && r.ctx.Err() != nil) || !ran
	return o
}

func outcomeUnknownMessage(name string) string {
	return fmt.Sprintf("OutcomeUnknown: `%s` was started before an interruption and its outcome was not recorded. It was not run again, so that a side effect is not repeated. Check whether it took effect before calling it again.", name)
}

// invoke calls the tool. A Go error from the tool is an infrastructure
// failure: the model sees it as an error result and the trace marks it. A
// replay divergence (the offline replay tools report one as a Go error)
// stops the run instead.
func (r *runner) invoke(step int, llmSpan string, p *plan) (rawResult, error) {
	c := p.call
	var span string
	var t0 time.Time
	if r.tr != nil {
		span = r.traceEvent(trace.ToolCallStart, llmSpan, trace.Payload{Step: step, Name: c.Name, CallID: c.ID, Arguments: r.preview(string(c.Arguments))})
		t0 = time.Now()
	}
	tc := &toolCtx{Context: r.ctx, call: callCtx{info: CallInfo{RunID: r.st.RunID, Step: step, CallID: c.ID, Name: c.Name}, sink: &r.sink}}
	cc := &tc.call
	var ctx context.Context = tc
	if span != "" {
		ctx = trace.WithSpan(ctx, span)
	}
	if rp := r.a.replay; rp != nil && rp.offline {
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
	case p.tool != nil:
		res, err = tool.SafeCall(ctx, p.tool, tool.FromLLM(c))
	case r.a.Tools != nil:
		res, err = r.a.Tools.Call(ctx, tool.FromLLM(c)) // the registry's "unknown tool" result
	default:
		res = tool.Errorf("unknown tool: %q (this agent has no tools)", c.Name)
	}
	raw := rawResult{text: resultText(&res), isError: res.IsError, untrusted: p.flags.Untrusted || cc.tainted.Load()}
	if err != nil {
		// Declared here, not above: errors.As makes it escape, and a heap
		// allocation per successful call is a cost of the hot path.
		var mismatch *ReplayMismatch
		if errors.As(err, &mismatch) {
			return rawResult{}, err
		}
		raw = rawResult{text: fmt.Sprintf("tool %s failed: %v", c.Name, err), isError: true, infra: true, untrusted: raw.untrusted}
	}
	r.traceToolEnd(span, t0, step, c, raw, err)
	return raw, nil
}

func (r *runner) traceToolEnd(span string, t0 time.Time, step int, c llm.ToolCall, raw rawResult, err error) {
	if r.tr == nil {
		return
	}
	ev := trace.Payload{Step: step, Name: c.Name, CallID: c.ID, Status: "ok", DurationMS: msSince(t0), Content: r.preview(raw.text), Infrastructure: raw.infra}
	if raw.isError {
		ev.Status = "error"
	}
	if err != nil {
		ev.Error = err.Error()
	}
	r.traceEvent(trace.ToolCallEnd, span, ev)
}

// resultText is res.Text() without its allocations in the common case of
// one text item.
func resultText(res *tool.Result) string {
	if len(res.Content) == 1 && res.Content[0].Type == "text" {
		return res.Content[0].Text
	}
	return res.Text()
}
