package loop

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/autoagent-go/autoagent/llm"
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

// callCtx is the context value behind CallInfo, ReportUsage and
// ReportTaint.
type callCtx struct {
	info    CallInfo
	tainted atomic.Bool
	sink    *usageSink
	run     *runner      // the run, for CallNested
	nested  atomic.Int32 // CallNested calls so far
	paused  atomic.Bool  // a nested call awaits approval
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

type callKey struct{}

// toolCtx is the context a tool runs with: the run's context plus the
// call's callCtx, in one allocation.
type toolCtx struct {
	context.Context
	call callCtx
}

func (c *toolCtx) Value(key any) any {
	if key == (callKey{}) {
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

// ReportTaint marks the result of the running call as untrusted: it is
// framed as data and taints the run, exactly as if the tool were flagged
// untrusted. A sub-agent whose run was tainted reports it, so delegation
// never launders taint. It reports false when ctx does not come from the
// loop.
func ReportTaint(ctx context.Context) bool {
	c, ok := ctx.Value(callKey{}).(*callCtx)
	if !ok {
		return false
	}
	c.tainted.Store(true)
	return true
}
