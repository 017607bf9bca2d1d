package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

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

// RecordedCall is one call a program made and the result it got: what a
// durable engine keeps of a program's calls between its runs (see
// [ReplayProgramContext]).
type RecordedCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    tool.Result     `json:"result"`
	// Untrusted: the result tainted the program, as CallNested's
	// untrusted results do; replayed, it taints the program again.
	Untrusted bool `json:"untrusted,omitempty"`
}

// recordedCallJSON is RecordedCall's JSON: Result.Refusal, which has no
// JSON form of its own, is kept beside the result, so a refusal that stops
// a program (a call past its limit) still stops it when replayed.
type recordedCallJSON struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    tool.Result     `json:"result"`
	Refusal   string          `json:"refusal,omitempty"`
	Untrusted bool            `json:"untrusted,omitempty"`
}

// MarshalJSON writes c with its result's refusal kind.
func (c RecordedCall) MarshalJSON() ([]byte, error) {
	return json.Marshal(recordedCallJSON{Name: c.Name, Arguments: c.Arguments, Result: c.Result, Refusal: c.Result.Refusal, Untrusted: c.Untrusted})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *RecordedCall) UnmarshalJSON(b []byte) error {
	var j recordedCallJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = RecordedCall{Name: j.Name, Arguments: j.Arguments, Result: j.Result, Untrusted: j.Untrusted}
	c.Result.Refusal = j.Refusal
	return nil
}

// ProgramReplay is how a program run with [ReplayProgramContext] ended.
type ProgramReplay struct {
	// Next is the first call the program made past its record, which it
	// needs answered before it can go on; nil when it made none (its
	// result is final). Its ID is "<call id>/<n>", the id CallNested gives
	// the call in the run.
	Next *tool.Call
	// Report is what the program reported through its context (usage,
	// taint), as [RemoteCallContext]'s.
	Report CallReport
}

// ReplayProgramContext returns a context for running the program of the
// run_program call info away from its run, on the record of the calls it
// made so far (tainted: the call had taken in untrusted content before
// the program's first call). In it CallNested answers the program's n-th
// call from record[n-1] when it is the call recorded there (same tool,
// JSON-equal arguments), tainting the program if that result did, and
// refuses it (Diverged) when it is another. The first call past the record does
// not run: it is noted, and refused with a ProgramSuspended error that
// stops the program engine; so is every call after it. Once the program
// is done, end returns the call noted, if any, and what the program
// reported; calls made after end are refused.
func ReplayProgramContext(ctx context.Context, info CallInfo, tainted bool, record []RecordedCall) (_ context.Context, end func() ProgramReplay) {
	p := &programReplay{record: record}
	tc := &toolCtx{Context: ctx, call: callCtx{info: info, sink: &usageSink{}, inherited: tainted, replay: p}}
	return tc, func() ProgramReplay {
		p.mu.Lock()
		p.ended = true
		next := p.next
		p.mu.Unlock()
		u, have := tc.call.sink.take()
		return ProgramReplay{Next: next, Report: CallReport{Usage: u, HaveUsage: have, Tainted: tc.call.tainted.Load()}}
	}
}

// programReplay answers a program's calls from its record.
type programReplay struct {
	mu     sync.Mutex
	record []RecordedCall
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

// NestedPaused reports whether a call made through CallNested with ctx
// awaits a person's decision: the run pauses after the calling tool, and
// every later call the tool makes is refused until then, so it may as
// well stop.
func NestedPaused(ctx context.Context) bool {
	cc, ok := ctx.Value(callKey{}).(*callCtx)
	return ok && cc.paused.Load()
}
