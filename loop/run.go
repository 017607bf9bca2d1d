package loop

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// errAborted ends a streamed run whose consumer stopped iterating.
var errAborted = errors.New("loop: stream consumer stopped")

// runner is one run in progress. Only the run's goroutine touches it,
// except the usage sink, which tools running in parallel report to.
type runner struct {
	a      *Agent
	ctx    context.Context
	cancel context.CancelFunc
	b      Bounds
	st     *RunState
	specs  []llm.ToolSpec

	emit    func(Event) bool // nil for Run
	aborted bool

	tr      *trace.Tracer
	runSpan string
	// rails: the agent, or its policy, has guardrails to run.
	rails bool
	// rec records the run, replay checks it against a recording; each
	// nil unless the agent has one.
	rec    *Recorder
	replay *replayer

	ids        callIDs
	guard      *loopGuard
	sink       usageSink
	wouldBlock atomic.Int64
	parallel   int
	// screenMu is the gate's lock (see admit); it guards counted, the
	// calls of the turn that count against Bounds.MaxToolCalls.
	screenMu sync.Mutex
	counted  int
	// record is the turn's record of the calls tools made through
	// CallNested (see CallNested).
	record nestedRecord
	// taint is st.Tainted, for tools that read it while the run goes on.
	taint  atomic.Bool
	early  *earlyRun   // nil until a streamed call could start early
	search *toolSearch // nil unless the run defers its tools
	// lastInput and lastModel are what the last model call reported;
	// overBudget is set once its input reached the context budget.
	lastInput  int64
	lastModel  string
	overBudget bool
	// retr is what was last retrieved (Agent.Knowledge.Retrieval); blockText the
	// block put before the model in the current call, for the recorder.
	retr           retrieved
	blockText      string
	blockUntrusted bool
	// outSchema is Agent.Structured.Schema compiled; structured the answer
	// that matched it.
	outSchema  *tool.Schema
	structured json.RawMessage
}

// execute runs the loop on st (fresh, or prepared for resume).
func (a *Agent) execute(ctx context.Context, st *RunState, resumed bool, emit func(Event) bool) (*Result, error) {
	if a.Provider == nil {
		return nil, ErrNoProvider
	}
	if err := a.Bounds.Validate(); err != nil {
		return nil, err
	}
	if err := a.Knowledge.Retrieval.Validate(); err != nil {
		return nil, fmt.Errorf("loop: retrieval: %w", err)
	}
	var outSchema *tool.Schema
	if len(a.Structured.Schema) > 0 {
		s, err := a.compiledOutputSchema()
		if err != nil {
			return nil, err
		}
		outSchema = s
	}
	if a.CodeMode.Mode != codemode.Off {
		if err := a.checkCodeMode(); err != nil {
			return nil, err
		}
	}
	if resumed {
		if err := a.checkResumedProgram(st); err != nil {
			return nil, err
		}
	}
	if resumed && st.Status == StopDone {
		return finishedResult(st), nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &runner{
		a:         a,
		ctx:       ctx,
		cancel:    cancel,
		b:         a.Bounds.resolved(),
		st:        st,
		emit:      emit,
		tr:        a.Tracer,
		parallel:  a.MaxParallelTools,
		outSchema: outSchema,
		rec:       a.Recorder,
		replay:    a.replay,
	}
	if r.parallel <= 0 {
		r.parallel = 8
	}
	if emit != nil && a.MaxEarlyTools >= 0 && a.Tools != nil {
		r.early = newEarlyRun(a.MaxEarlyTools, r.parallel)
		defer r.closeEarly()
	}
	if a.Tools != nil {
		r.specs = a.Tools.Specs()
		if t := a.ToolSearchThreshold; t >= 0 && len(r.specs) > cmp.Or(t, defaultToolSearchThreshold) {
			r.search = newToolSearch(r.specs, st.Revealed)
		}
	}
	resumedFrom := 0
	if resumed {
		resumedFrom = st.Step
		st.Status = ""
	} else {
		if a.NewRunID != nil {
			st.RunID = a.NewRunID()
		} else {
			st.RunID = llm.NewCallID("run_")
		}
		st.TurnStart = len(st.Messages)
	}
	if r.tr != nil {
		r.runSpan = trace.EmitPayload(r.tr, trace.Event{Type: trace.RunStart, ParentID: trace.SpanFromContext(ctx), RunID: st.RunID}, trace.Run{
			Model: a.Model, MaxSteps: r.b.MaxSteps, MessageCount: len(st.Messages), ToolCount: len(r.specs),
			Streaming: emit != nil, ResumedFromStep: resumedFrom,
		})
	}
	if !resumed {
		r.compact()
	}
	// The run appends to its own copy: never into spare capacity of the
	// caller's slice (or the memory's), which the caller may still use.
	room := min(2*r.b.MaxSteps+4, 64)
	msgs := make([]llm.Message, len(st.Messages), len(st.Messages)+room)
	copy(msgs, st.Messages)
	st.Messages = msgs
	// A run started by a tool (a sub-agent) inherits its caller's taint:
	// what the caller took in reaches the sub-agent through its request.
	st.Tainted = st.Tainted || IsTainted(st.Messages) || tool.Tainted(ctx)
	r.taint.Store(st.Tainted)
	if len(st.Nested) > 0 || len(st.Subruns) > 0 {
		r.record.load(st)
	}
	r.ids.seed(st.Messages)
	if r.b.MaxRepeatedToolCalls > 0 {
		r.guard = newLoopGuard(r.b.MaxRepeatedToolCalls, st.Messages)
		for _, c := range st.Nested {
			r.guard.observe([]llm.ToolCall{c.Call})
		}
	}
	if r.rec != nil {
		r.rec.start(r)
	}
	_, policyRails := a.Checks.Policy.(PolicyGuardrails)
	r.rails = policyRails || len(a.Checks.InputGuardrails)+len(a.Checks.OutputGuardrails)+len(a.Checks.ToolResultGuardrails) > 0
	if !resumed && r.rails && len(r.guardrails(GuardInput)) > 0 {
		if err := r.guardInput(); err != nil {
			return r.fail(0, err)
		}
	}
	return r.loop()
}

// compact runs the memory once at the start of a fresh run, fail-open.
func (r *runner) compact() {
	m := r.a.Knowledge.Memory
	if m == nil {
		return
	}
	before := len(r.st.Messages)
	var out []llm.Message
	var u *llm.Usage
	err := protect("memory", func() (err error) {
		out, u, err = m.Compact(r.memoryContext(), r.st.Messages)
		return err
	})
	if err == nil && out == nil {
		err = errors.New("memory returned no messages")
	}
	if u != nil {
		r.addUsage(*u)
	}
	if err != nil {
		traceEvent(r, trace.MemoryError, r.runSpan, trace.Memory{Error: err.Error()})
		return
	}
	r.st.Messages = out
	r.st.TurnStart = len(out)
	p := trace.Memory{MessageCount: before, Kept: len(out)}
	if u != nil {
		p.InputTokens, p.OutputTokens, p.CachedTokens = u.InputTokens, u.OutputTokens, u.CachedTokens
	}
	traceEvent(r, trace.MemoryCompacted, r.runSpan, p)
}

// compactMidRun runs the memory over the transcript between turns,
// fail-open, into a transcript of the run's own.
func (r *runner) compactMidRun() error {
	var out []llm.Message
	var u *llm.Usage
	err := protect("memory", func() (err error) {
		out, u, err = r.a.Knowledge.Memory.Compact(r.memoryContext(), r.st.Messages)
		return err
	})
	if u != nil {
		r.addUsage(*u)
	}
	if err == nil && out == nil {
		err = errors.New("memory returned no messages")
	}
	if err != nil {
		return err
	}
	msgs := make([]llm.Message, len(out), len(out)+16)
	copy(msgs, out)
	r.st.Messages = msgs
	r.st.TurnStart = min(r.st.TurnStart, len(msgs))
	return nil
}

// memoryContext is the context the memory compacts with: marked with
// memory.WithTaint when the run is tainted (by its state, or by its
// caller, for a sub-agent), so what the memory learns from it (facts, a
// summary) is stored untrusted even when no message shows the taint.
func (r *runner) memoryContext() context.Context {
	if r.st.Tainted || tool.Tainted(r.ctx) {
		return memory.WithTaint(r.ctx)
	}
	return r.ctx
}

func (r *runner) addUsage(u llm.Usage) {
	r.st.Usage = r.st.Usage.Add(u.Normalize())
	r.st.HaveUsage = true
}

func (r *runner) spent() int64 { return r.st.Usage.InputTokens + r.st.Usage.OutputTokens }

// loop is the agent loop proper.
func (r *runner) loop() (*Result, error) {
	if calls := r.st.PendingTurn(); len(calls) > 0 {
		if res, stop, err := r.turn(r.st.Step, r.runSpan, calls); stop {
			return res, err
		}
		if err := r.checkpoint(); err != nil {
			return r.fail(r.st.Step, err)
		}
	}
	for {
		if err := r.ctx.Err(); err != nil {
			return r.stop(StopCancelled, err)
		}
		if r.st.Step >= r.b.MaxSteps {
			return r.stop(StopMaxSteps, nil)
		}
		if r.b.TokenBudget > 0 && r.spent() >= r.b.TokenBudget {
			return r.stop(StopTokenBudget, nil)
		}
		step := r.st.Step + 1
		resp, llmSpan, err := r.callModel(step)
		if err != nil {
			if r.early != nil {
				r.dropEarly(step, llmSpan, discardFailed)
			}
			if r.aborted {
				return nil, errAborted
			}
			if ctxErr := r.ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
				return r.stop(StopCancelled, ctxErr)
			}
			return r.fail(step, err)
		}
		msg := resp.Message
		msg.Role = llm.RoleAssistant
		msg = r.ids.fix(msg, step)
		r.st.Messages = append(r.st.Messages, msg)
		r.st.Step = step
		if resp.Usage != nil {
			r.addUsage(*resp.Usage)
		}
		r.noteInput(resp)
		calls := msg.ToolCalls()
		if len(calls) == 0 {
			if r.early != nil {
				r.dropEarly(step, llmSpan, discardAbsent)
			}
			v, err := r.judge(step, llmSpan, msg.Text())
			if err == nil && v.fix != nil {
				if err = r.correct(step, v); err == nil {
					continue
				}
			}
			if err != nil {
				return r.fail(step, err)
			}
			return r.done(v.answer)
		}
		if r.guard != nil {
			r.guard.observe(calls)
		}
		if res, stop, err := r.turn(step, llmSpan, calls); stop {
			return res, err
		}
		if err := r.checkpoint(); err != nil {
			return r.fail(step, err)
		}
	}
}

// verdict is the judgement of a final answer: it stands (fix is nil), or
// fix goes back to the model as a correction, counted in *count.
type verdict struct {
	answer string
	fix    *llm.Message
	count  *int
}

// judge is the one stage that judges a final answer. Its checks run in
// order, each on what the one before let through: the output guardrails
// (which may rewrite the answer, block it or ask for a correction), the
// output schema (a mismatch goes back, up to Structured.Retries times),
// then the post-turn hook (a correction, up to Checks.MaxCorrections). The first
// correction is the verdict. An error (a block, corrections or retries
// spent) ends the run; a failing guardrail blocks, a failing post-turn hook
// lets the answer stand (it can only add a correction), both traced.
func (r *runner) judge(step int, llmSpan, answer string) (verdict, error) {
	if gs := r.outputGuardrails(); len(gs) > 0 {
		out, fix, err := r.checkGuardrails(gs, GuardOutput, step, llmSpan, "", answer)
		if err != nil {
			return verdict{}, err
		}
		if fix != "" {
			if r.st.Corrections >= r.correctionCap() {
				return verdict{}, &GuardrailError{Stage: GuardOutput, Guardrail: "corrections", Reason: "the answer was still not accepted after the corrections allowed (Agent.Checks.MaxCorrections)"}
			}
			m := llm.UserText(fix)
			return verdict{fix: &m, count: &r.st.Corrections}, nil
		}
		if out != answer {
			last := len(r.st.Messages) - 1
			r.st.Messages[last] = setText(r.st.Messages[last], out)
			answer = out
		}
	}
	if r.outSchema != nil {
		v, err := checkStructured(r.outSchema, answer)
		if err != nil {
			if r.st.OutputRetries >= r.outputRetries() {
				return verdict{}, &StructuredOutputError{Last: answer, Err: err, Attempts: r.st.OutputRetries + 1}
			}
			m := llm.UserText(outputRetryMessage(err))
			return verdict{fix: &m, count: &r.st.OutputRetries}, nil
		}
		r.structured = v
	}
	if r.a.Checks.PostTurn != nil {
		if corr := r.postTurn(step, llmSpan, answer); corr != nil {
			return verdict{fix: corr, count: &r.st.Corrections}, nil
		}
	}
	return verdict{answer: answer}, nil
}

// outputGuardrails are the guardrails of the answer; none without a check
// to run.
func (r *runner) outputGuardrails() []Guardrail {
	if !r.rails {
		return nil
	}
	return r.guardrails(GuardOutput)
}

// correct is the one correction path: v's fix goes to the model as the
// start of a new turn, counted, announced and checkpointed.
func (r *runner) correct(step int, v verdict) error {
	r.st.Messages = append(r.st.Messages, *v.fix)
	*v.count++
	r.st.TurnStart = len(r.st.Messages)
	if !r.send(Event{Type: EventCorrection, Step: step, Text: v.fix.Text()}) {
		return errAborted
	}
	return r.checkpoint()
}

// keptResults is how many recent tool results stay in full once the run
// is over its context budget.
const keptResults = 2

// noteInput records what a model call reported, for the budget check
// before the next one.
func (r *runner) noteInput(resp *llm.Response) {
	if resp.Usage != nil {
		r.lastInput = resp.Usage.Normalize().InputTokens
	}
	if resp.Model != "" {
		r.lastModel = resp.Model
	}
}

// contextBudget runs before a model call: once the last call's input
// reached the share of the window, it compacts the memory (once) and turns
// on the pruning of old tool results for the rest of the run.
func (r *runner) contextBudget(step int) {
	if r.overBudget || r.lastInput == 0 {
		return
	}
	window := r.b.ContextWindow
	if window == 0 {
		window = ContextWindowFor(cmp.Or(r.a.Model, r.lastModel))
	}
	if window == 0 || float64(r.lastInput) < r.b.ContextShare*float64(window) {
		return
	}
	r.overBudget = true
	status := "pruned"
	if r.a.Knowledge.Memory != nil {
		if err := r.compactMidRun(); err != nil {
			traceEvent(r, trace.MemoryError, r.runSpan, trace.Memory{Step: step, Error: err.Error()})
		} else {
			status = "compacted, pruned"
		}
	}
	traceEvent(r, trace.ContextBudget, r.runSpan, trace.Memory{Step: step, InputTokens: r.lastInput, Limit: int(window), Kept: keptResults, Status: status})
}

// callModel sends the transcript (pruned view) to the model.
func (r *runner) callModel(step int) (*llm.Response, string, error) {
	a := r.a
	r.contextBudget(step)
	view := r.st.Messages
	var pruned, saved int
	keep := r.b.PruneToolResultsAfter
	if r.overBudget && (keep == 0 || keep > keptResults) {
		keep = keptResults
	}
	if keep > 0 {
		view, pruned, saved = pruneView(view, keep, r.b.PruneBatch)
	}
	r.blockText, r.blockUntrusted = "", false
	view, retrieval := r.retrieval(step, view)
	specs := r.specs
	if r.search != nil || a.CodeMode.Mode != codemode.Off {
		specs = r.offeredSpecs()
	}
	req := &llm.Request{Model: a.Model, Messages: view, Tools: specs, Temperature: a.Temperature, MaxTokens: a.MaxTokens}
	if r.outSchema != nil {
		req.ResponseFormat = a.outputFormat()
	}
	// The tool-call cap reached: the tools stay defined (a history with
	// tool calls needs them) but may not be called, and the model is
	// told why, in what it is sent only.
	disabled := r.b.MaxToolCalls > 0 && r.st.ToolCalls >= r.b.MaxToolCalls && len(specs) > 0
	if disabled {
		req.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceNone}
		req.Messages = append(slices.Clip(view), llm.UserText(toolsDisabledNote(r.b.MaxToolCalls)))
	}
	var llmSpan string
	var t0 time.Time
	if r.tr != nil {
		llmSpan = traceEvent(r, trace.LLMRequest, r.runSpan, trace.ModelCall{Step: step, MessageCount: len(view), ToolCount: len(specs), Streaming: r.emit != nil})
		if disabled {
			traceEvent(r, trace.ToolsDisabled, llmSpan, trace.Guard{Step: step, Limit: r.b.MaxToolCalls})
		}
		if pruned > 0 {
			traceEvent(r, trace.ContextPruned, llmSpan, trace.Memory{Step: step, Pruned: pruned, CharsSaved: saved, Kept: keep, Batch: r.b.PruneBatch})
		}
		if retrieval != nil {
			traceEvent(r, trace.Retrieved, llmSpan, *retrieval)
		}
		t0 = time.Now()
	}
	var resp *llm.Response
	var err error
	if r.emit != nil {
		resp, err = r.streamModel(req, step, llmSpan)
	} else {
		err = protect("provider", func() (err error) {
			resp, err = a.Provider.Complete(r.ctx, req)
			return err
		})
	}
	if err == nil && resp == nil {
		err = errors.New("provider returned neither a response nor an error")
	}
	if r.tr != nil {
		p := trace.ModelCall{Step: step, DurationMS: msSince(t0)}
		if err != nil {
			p.Status, p.Error = "error", err.Error()
		} else {
			p.Content = r.preview(resp.Message.Text())
			p.ToolCallCount, p.HasReasoning = responseShape(resp.Message)
			p.FinishReason = string(resp.FinishReason)
			if resp.Usage != nil {
				p.InputTokens, p.OutputTokens, p.CachedTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.Usage.CachedTokens
			}
		}
		traceEvent(r, trace.LLMResponse, llmSpan, p)
	}
	if err == nil && r.rec != nil {
		r.rec.llm(r, step, req, resp)
	}
	return resp, llmSpan, err
}

// streamModel consumes the provider's native stream, forwarding deltas
// and starting calls of idempotent tools early.
func (r *runner) streamModel(req *llm.Request, step int, llmSpan string) (*llm.Response, error) {
	var final *llm.Response
	if r.early != nil {
		r.early.begin()
	}
	for ev, err := range r.a.Provider.Stream(r.ctx, req) {
		if err != nil {
			return nil, err
		}
		switch ev.Type {
		case llm.StreamText, llm.StreamReasoning:
			typ := EventText
			if ev.Type == llm.StreamReasoning {
				typ = EventReasoning
			}
			if ev.Text != "" && !r.send(Event{Type: typ, Step: step, Text: ev.Text}) {
				return nil, errAborted
			}
			if typ == EventText && r.early != nil {
				r.early.turn.text.WriteString(ev.Text)
			}
		case llm.StreamToolCall:
			if r.early != nil && ev.ToolCall != nil {
				r.announce(step, llmSpan, *ev.ToolCall)
			}
		case llm.StreamDone:
			final = ev.Response
		}
	}
	if final == nil {
		return nil, fmt.Errorf("%w (no done event)", llm.ErrIncompleteStream)
	}
	return final, nil
}

// send hands ev to the stream consumer; false means it stopped iterating,
// and the run is cancelled.
func (r *runner) send(ev Event) bool {
	if r.emit == nil {
		return true
	}
	if r.aborted || !r.emit(ev) {
		r.aborted = true
		r.cancel()
		return false
	}
	return true
}

// checkpoint hands the state to the checkpoint callback. It runs even when
// the run's context is cancelled: saving what happened is never wrong.
func (r *runner) checkpoint() error {
	cp := r.a.Checkpoint
	if cp == nil {
		return nil
	}
	st := r.st.snapshot()
	err := protect("checkpoint", func() error { return cp(context.WithoutCancel(r.ctx), st) })
	if r.tr != nil {
		p := trace.Run{Step: r.st.Step, Status: "ok"}
		if err != nil {
			p.Status, p.Error = "error", err.Error()
		}
		traceEvent(r, trace.Checkpoint, r.runSpan, p)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	return nil
}

// done ends the run with the model's answer.
func (r *runner) done(answer string) (*Result, error) {
	r.st.Status = StopDone
	res := r.result(StopDone)
	res.Output = answer
	res.Structured = r.structured
	if err := r.checkpoint(); err != nil {
		return r.fail(r.st.Step, err)
	}
	if err := r.checkReplay(res); err != nil {
		return r.fail(r.st.Step, err)
	}
	r.end()
	if r.tr != nil {
		r.endTrace("ok", answer, nil)
	}
	if r.rec != nil {
		r.rec.end(r, res, nil)
	}
	return res, nil
}

// stop ends the run on a bound, an approval pause or a cancellation: the
// Result and a *StopError, both carrying the resumable state.
func (r *runner) stop(reason StopReason, cause error) (*Result, error) {
	r.st.Status = reason
	res := r.result(reason)
	serr := &StopError{Reason: reason, Step: r.st.Step, State: res.State, Pending: res.Pending, Cause: cause}
	switch reason {
	case StopMaxSteps:
		serr.MaxSteps = r.b.MaxSteps
		traceEvent(r, trace.MaxStepsExceeded, r.runSpan, trace.Run{MaxSteps: r.b.MaxSteps, Step: r.st.Step})
	case StopTokenBudget:
		serr.TokenBudget, serr.Spent = r.b.TokenBudget, r.spent()
		traceEvent(r, trace.TokenBudgetExceeded, r.runSpan, trace.Run{TokenBudget: r.b.TokenBudget, Spent: r.spent(), Step: r.st.Step})
	case StopCancelled:
		traceEvent(r, trace.Cancelled, r.runSpan, trace.Run{Step: r.st.Step})
	}
	if err := r.checkpoint(); err != nil {
		return r.fail(r.st.Step, err)
	}
	if err := r.checkReplay(res); err != nil {
		return r.fail(r.st.Step, err)
	}
	r.end()
	if r.tr != nil {
		r.endTrace(string(reason), "", serr)
	}
	if r.rec != nil {
		r.rec.end(r, res, serr)
	}
	return res, serr
}

// fail ends the run on an error, keeping the state after the last
// completed step.
func (r *runner) fail(step int, err error) (*Result, error) {
	if r.aborted {
		return nil, errAborted
	}
	r.end()
	if r.tr != nil {
		r.endTrace("error", "", err)
	}
	if r.rec != nil {
		r.rec.end(r, nil, err)
	}
	return nil, &RunError{Step: step, State: r.st.snapshot(), Err: err}
}

// end ends what the run started in the background: its early starts,
// before run_end is traced (a tool span never closes after its run's).
func (r *runner) end() {
	if r.early != nil {
		r.closeEarly()
	}
}

// checkReplay compares the run's outcome with the recording it replays,
// if it replays one.
func (r *runner) checkReplay(res *Result) error {
	if r.replay == nil {
		return nil
	}
	return r.replay.finish(r, res)
}

func (r *runner) result(reason StopReason) *Result {
	st := r.st.snapshot()
	return &Result{
		Steps:         r.st.Step,
		Usage:         r.st.Usage,
		Messages:      st.Messages,
		StopReason:    reason,
		UsageReported: r.st.HaveUsage,
		Tainted:       r.st.Tainted,
		State:         st,
		Pending:       st.Pending,
	}
}

// finishedResult is the Result of resuming a run that is already done.
func finishedResult(st *RunState) *Result {
	s := st.snapshot()
	res := &Result{Steps: s.Step, Usage: s.Usage, Messages: s.Messages, StopReason: StopDone, UsageReported: s.HaveUsage, Tainted: s.Tainted, State: s}
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if s.Messages[i].Role == llm.RoleAssistant {
			res.Output = s.Messages[i].Text()
			break
		}
	}
	return res
}

// protect calls f and turns a panic into the error "<what> panicked: <value>".
// The loop calls the host's code (system prompt function, memory, provider,
// policy, post-turn hook, checkpoint) through it, so a bug there fails a
// step the way an error would instead of crashing the process that embeds
// the loop. Tools have their own guard (tool.SafeCall).
func protect(what string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s panicked: %v", what, p)
		}
	}()
	return f()
}
