package loop

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// defaultMaxEarlyTools is how many early-started calls may run at once when
// [Agent].MaxEarlyTools is 0.
const defaultMaxEarlyTools = 4

// Why a call started early was discarded (tool_call_early_discarded).
const (
	discardAbsent   = "not in the model's final answer"
	discardRefused  = "refused by the tool phase's checks"
	discardApproval = "the turn paused for approval"
	discardFailed   = "the model call failed"
)

// earlyRun holds what a streamed run started early: while the model is
// still streaming, a complete call of an idempotent tool that passes every
// check of the tool phase starts in the background, and the tool phase
// then awaits its result instead of running it. Only the run's goroutine
// touches it, except the counters and the calls' own fields.
type earlyRun struct {
	// sem bounds the early calls running at once; the run's tool slots
	// bound them together with the tool phase's calls.
	sem   chan struct{}
	slots chan struct{}
	wg    sync.WaitGroup

	turn    earlyTurn
	started int          // calls started early in the run
	used    atomic.Int64 // early results the tool phase used
}

// earlyTurn is the model turn being streamed: what it announced so far and
// what started early.
type earlyTurn struct {
	announced []llm.ToolCall
	text      strings.Builder
	calls     []*earlyCall // started early, in announcement order
}

// earlyCall is one call started early.
type earlyCall struct {
	p      plan
	cancel context.CancelFunc
	done   chan struct{} // closed once x is set
	// adopted is closed when the tool phase admitted the call and awaits
	// it: only then may the calls it makes through CallNested pass the
	// gate (after it, counted, as in a turn without early starts).
	adopted chan struct{}
	x       execution
	// skipped: the call was cancelled before it got a slot and never ran.
	skipped bool
}

// repeats counts the announced calls with c's signature, c included: the
// asks of this turn the loop guard has not observed yet, so the early
// check and the tool phase's agree.
func (t *earlyTurn) repeats(c llm.ToolCall) int {
	sig, n := callSignature(c), 0
	for _, a := range t.announced {
		if a.Name == c.Name && callSignature(a) == sig {
			n++
		}
	}
	return n
}

// transcript is msgs followed by the assistant message as streamed so far,
// for a policy's early check.
func (t *earlyTurn) transcript(msgs []llm.Message) []llm.Message {
	m := llm.Message{Role: llm.RoleAssistant}
	if s := t.text.String(); s != "" {
		m.Parts = append(m.Parts, llm.TextPart(s))
	}
	for _, c := range t.announced {
		m.Parts = append(m.Parts, llm.ToolCallPart(c))
	}
	return append(msgs[:len(msgs):len(msgs)], m)
}

// newEarlyRun returns the early starts of a run that may start calls
// early (it streams, the agent did not switch early starts off with a
// negative max, and it has tools): at most max at once (0:
// defaultMaxEarlyTools), within the run's parallel slots.
func newEarlyRun(max, parallel int) *earlyRun {
	n := max
	if n == 0 {
		n = defaultMaxEarlyTools
	}
	return &earlyRun{sem: make(chan struct{}, min(n, parallel)), slots: make(chan struct{}, parallel)}
}

// begin forgets the previous turn's announcements before a model call.
func (e *earlyRun) begin() {
	e.turn.announced = e.turn.announced[:0]
	e.turn.text.Reset()
}

// announce handles a complete call announced while the model streams: it
// starts the call when its tool is idempotent and the call passes, alone,
// every check the tool phase will run. Any doubt means "not early", never
// "refused": the tool phase decides the call's fate as always.
func (r *runner) announce(step int, llmSpan string, c llm.ToolCall) {
	e := r.early
	e.turn.announced = append(e.turn.announced, c)
	t, ok := r.a.Tools.Get(c.Name)
	if !ok {
		return
	}
	flags := tool.FlagsOf(t)
	// The loop gives an empty or reused id a new one after the stream, so
	// such a call could not be matched with its final self.
	if !flags.Idempotent || c.ID == "" || r.ids.has(c.ID) {
		return
	}
	for _, a := range e.turn.announced[:len(e.turn.announced)-1] {
		if a.ID == c.ID {
			return
		}
	}
	// The gate's checks, silently: a call the tool phase would refuse, or
	// ask a person about, or that a hook would see first, waits for it.
	p := plan{call: c, tool: t, flags: flags}
	if !r.screenEarly(step, llmSpan, &p, r.st.Tainted, &e.turn) {
		return
	}
	ctx, cancel := context.WithCancel(r.ctx)
	ec := &earlyCall{p: p, cancel: cancel, done: make(chan struct{}), adopted: make(chan struct{})}
	ctx = context.WithValue(ctx, earlyKey{}, ec)
	e.turn.calls = append(e.turn.calls, ec)
	e.started++
	traceEvent(r, trace.ToolCallEarlyStart, llmSpan, trace.ToolCall{Step: step, Name: c.Name, CallID: c.ID})
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer close(ec.done)
		defer cancel()
		if !acquire(ctx, e.sem) {
			ec.skipped = true
			return
		}
		defer release(e.sem)
		if !acquire(ctx, e.slots) {
			ec.skipped = true
			return
		}
		defer release(e.slots)
		ec.x = r.execCall(ctx, step, llmSpan, &ec.p)
	}()
}

// earlyKey is the context key of the earlyCall a call started early runs
// for.
type earlyKey struct{}

// awaitAdoption holds a call a tool makes through CallNested while the
// tool runs as an early start, until the tool phase admits the tool's
// call. It reports false when the early start was discarded instead.
func awaitAdoption(ctx context.Context) bool {
	ec, ok := ctx.Value(earlyKey{}).(*earlyCall)
	if !ok {
		return true
	}
	select {
	case <-ec.adopted:
		return true
	case <-ctx.Done():
		return false
	}
}

func acquire(ctx context.Context, sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func release(sem chan struct{}) { <-sem }

// adoptEarly gives each plan that will run the call started early for it,
// if any, and discards the turn's other early starts: the final answer
// lacks them, the tool phase refused them, or the turn pauses for approval
// (nothing of it runs then).
func (r *runner) adoptEarly(step int, llmSpan string, plans []plan, paused bool) {
	e := r.early
	if len(e.turn.calls) == 0 {
		return
	}
	if paused {
		r.dropEarly(step, llmSpan, discardApproval)
		return
	}
	for _, ec := range e.turn.calls {
		reason := discardAbsent
		for i := range plans {
			if p := &plans[i]; p.early == nil && sameCall(ec.p.call, p.call) {
				if !p.isRefused() {
					p.early, reason = ec, ""
					close(ec.adopted)
				} else {
					reason = discardRefused
				}
				break
			}
		}
		if reason != "" {
			r.discard(step, llmSpan, ec, reason)
		}
	}
	e.turn.calls = e.turn.calls[:0]
}

// dropEarly discards every early start of the turn.
func (r *runner) dropEarly(step int, llmSpan, reason string) {
	e := r.early
	for _, ec := range e.turn.calls {
		r.discard(step, llmSpan, ec, reason)
	}
	e.turn.calls = e.turn.calls[:0]
}

// discard cancels an early start; the model never sees its result. The
// goroutine ends when the tool honours the cancellation, and the run waits
// for it before it returns (closeEarly).
func (r *runner) discard(step int, llmSpan string, ec *earlyCall, reason string) {
	ec.cancel()
	c := ec.p.call
	traceEvent(r, trace.ToolCallEarlyDiscarded, llmSpan, trace.ToolCall{Step: step, Name: c.Name, CallID: c.ID, Reason: reason})
}

// awaitEarly returns the execution of p's early start, waiting for it to
// finish. ok is false when it was cancelled before it ran (the tool phase
// then runs it as usual).
func (r *runner) awaitEarly(p *plan) (execution, bool) {
	ec := p.early
	<-ec.done
	if ec.skipped {
		return execution{}, false
	}
	r.early.used.Add(1)
	return ec.x, true
}

// closeEarly cancels what is left of the run's early starts (including
// calls adopted by a turn that failed before awaiting them) and waits for
// their goroutines: none outlives the run. The run calls it before
// run_end (endTrace), and again on return for the paths that end without
// one.
func (r *runner) closeEarly() {
	e := r.early
	r.cancel() // the run is over: every early call's context derives from it
	e.wg.Wait()
}

// sameCall reports whether the call started early is the final answer's
// call: same id, tool and arguments (up to JSON formatting).
func sameCall(a, b llm.ToolCall) bool {
	return a.ID == b.ID && a.Name == b.Name && (bytes.Equal(a.Arguments, b.Arguments) || canonicalJSON(a.Arguments) == canonicalJSON(b.Arguments))
}
