package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/autoagent-go/autoagent/internal/loopwire"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/tool"
)

// A program run away from its run (a durable engine's worker) cannot reach
// the gate: the gate is the run's, in the workflow. So the program runs
// against a record of the calls it made so far, and stops at the first
// call past it; the engine passes that call through the gate in the run
// (CallNested), adds it and its result to the record, and runs the
// program again. A deterministic program makes the same calls each time,
// so each of its calls passes the gate, and runs, once.

// replayProgramContext is loopwire.ReplayProgramContext (see there).
func replayProgramContext(ctx context.Context, c loopwire.Call, tainted bool, record []loopwire.RecordedCall) (context.Context, func() loopwire.ProgramReplay) {
	p := &programReplay{record: record}
	tc := &toolCtx{Context: ctx, call: callCtx{info: CallInfo(c), sink: &usageSink{}, inherited: tainted, replay: p}}
	return tc, func() loopwire.ProgramReplay {
		p.mu.Lock()
		p.ended = true
		next := p.next
		p.mu.Unlock()
		return loopwire.ProgramReplay{Next: next, Report: tc.call.report()}
	}
}

// programReplay answers a program's calls from its record.
type programReplay struct {
	mu     sync.Mutex
	record []loopwire.RecordedCall
	n      int        // calls made so far
	next   *tool.Call // the first call past the record
	ended  bool
}

// call answers the program's next call c (cc is the program's call).
func (p *programReplay) call(cc *callCtx, c tool.Call) tool.Result {
	args := c.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.ended:
		return refusalResult(refusal.New(refusal.CallOver, "the program that made this call has ended; `%s` was not run.", c.Name))
	case p.next != nil:
		return suspendedResult(c.Name)
	}
	p.n++
	id := fmt.Sprintf("%s/%d", cc.info.CallID, p.n)
	if p.n > len(p.record) {
		p.next = &tool.Call{ID: id, Name: c.Name, Arguments: args}
		return suspendedResult(c.Name)
	}
	rec := p.record[p.n-1]
	recArgs := rec.Arguments
	if len(recArgs) == 0 {
		recArgs = json.RawMessage(`{}`)
	}
	call := llm.ToolCall{ID: id, Name: c.Name, Arguments: args}
	if callSignature(call) != callSignature(llm.ToolCall{Name: rec.Name, Arguments: recArgs}) {
		return refusalResult(divergedMessage(call))
	}
	if rec.Untrusted {
		cc.tainted.Store(true)
	}
	res := rec.Result
	res.Content = append([]tool.Content(nil), res.Content...)
	return res
}

func suspendedResult(name string) tool.Result {
	return refusalResult(refusal.New(refusal.ProgramSuspended, "`%s` runs outside this program's sandbox: the program stops here and runs again from its start with the call's result.", name))
}

// nestedPaused is loopwire.NestedPaused (see there).
func nestedPaused(ctx context.Context) bool {
	cc, ok := ctx.Value(callKey{}).(*callCtx)
	return ok && cc.paused.Load()
}
