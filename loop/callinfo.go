package loop

import (
	"context"
	"sync/atomic"

	"github.com/autoagent-go/autoagent/internal/loopwire"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
)

// CallInfo describes the tool call a tool is running for. The loop puts it
// in the context it passes to [tool.Tool.Call].
type CallInfo struct {
	// RunID identifies the run; it survives pauses and resumes.
	RunID string
	// Step is the step of the call.
	Step int
	// CallID is the model's call id, stable across pause and resume.
	CallID string
	// Name is the tool's name.
	Name string
}

// IdempotencyKey returns "RunID/CallID": the same for every execution of
// this call, across crashes and resumes, and different for every other
// call. A tool with side effects passes it to a service that deduplicates
// (an Idempotency-Key header, a unique constraint), which makes it
// exactly-once even when the journal cannot tell whether it ran.
func (c CallInfo) IdempotencyKey() string { return c.RunID + "/" + c.CallID }

// callCtx is the context value behind CallInfo, ReportUsage and the
// call's tool.TaintScope.
type callCtx struct {
	info    CallInfo
	tainted atomic.Bool // the call took in untrusted content
	sink    *usageSink
	run     *runner  // the run, for CallNested
	parent  *callCtx // the calling tool's call, for a call made through CallNested
	// inherited: the caller was tainted when the call began (a call run
	// away from its loop, see remoteCallContext).
	inherited bool
	// program: the call is code mode's run_program, whose nested calls
	// are a program's (see nestedRefusal).
	program bool
	nested  atomic.Int32 // CallNested calls so far
	paused  atomic.Bool  // a nested call awaits approval
	// over is set once the call returned to the loop: a tool left running
	// past its time limit can no longer call through CallNested.
	over atomic.Bool
	// replay: the call is a program run away from its run, whose calls
	// are answered from a record (see replayProgramContext).
	replay *programReplay
}

// Tainted reports whether untrusted content reached the call: its run is
// tainted, or it (or a call it was made by) took some in so far.
func (c *callCtx) Tainted() bool {
	for x := c; x != nil; x = x.parent {
		if x.tainted.Load() || x.inherited || (x.run != nil && x.run.taint.Load()) {
			return true
		}
	}
	return false
}

// Taint marks the call's result as untrusted.
func (c *callCtx) Taint() { c.tainted.Store(true) }

var _ tool.TaintScope = (*callCtx)(nil)

type callKey struct{}

// toolCtx is the context a tool runs with: the run's context plus the
// call's callCtx, in one allocation.
type toolCtx struct {
	context.Context
	call callCtx
}

func (c *toolCtx) Value(key any) any {
	switch key {
	case callKey{}, tool.TaintKey{}:
		return &c.call
	}
	return c.Context.Value(key)
}

// CallInfoFrom returns the call a tool is running for, when ctx comes from
// the loop.
func CallInfoFrom(ctx context.Context) (CallInfo, bool) {
	c, ok := ctx.Value(callKey{}).(*callCtx)
	if !ok {
		return CallInfo{}, false
	}
	return c.info, true
}

// ReportUsage adds u to the spend of the run whose tool is running with ctx:
// a tool that calls a model (a sub-agent, a tool writer) reports what it
// spent so the run's token budget counts it. It reports false when ctx does
// not come from the loop.
func ReportUsage(ctx context.Context, u llm.Usage) bool {
	c, ok := ctx.Value(callKey{}).(*callCtx)
	if !ok || c.sink == nil {
		return false
	}
	c.sink.add(u)
	return true
}

// report is what the call reported through its context, for an engine
// that ran it away from its loop (see remoteCallContext).
func (c *callCtx) report() loopwire.CallReport {
	u, have := c.sink.take()
	return loopwire.CallReport{Usage: u, HaveUsage: have, Tainted: c.tainted.Load()}
}

// remoteCallContext is loopwire.RemoteCallContext (see there).
func remoteCallContext(ctx context.Context, c loopwire.Call, tainted bool) (context.Context, func() loopwire.CallReport) {
	tc := &toolCtx{Context: ctx, call: callCtx{info: CallInfo(c), sink: &usageSink{}, inherited: tainted}}
	return tc, tc.call.report
}
