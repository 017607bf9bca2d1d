// Package loopwire is how an engine of this module that runs part of a run
// away from its loop (package durable: a tool call on a worker, a program
// replayed from its record, a sub-agent as a child workflow) reaches what
// the loop keeps to itself.
//
// Package loop installs its side of the wire when it is initialised
// ([Install]); the functions here call it. Users never see this package:
// what it carries is not part of loop's public API, so loop can change it
// together with durable in one commit.
package loopwire

import (
	"context"
	"encoding/json"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
)

// Call is the tool call a context is made for: loop.CallInfo's fields, in
// its order, so that each converts to the other.
type Call struct {
	RunID  string
	Step   int
	CallID string
	Name   string
}

// CallReport is what a tool reported through its context while it ran
// away from its loop (see [RemoteCallContext]).
type CallReport struct {
	// Usage is what the tool reported with loop.ReportUsage; HaveUsage is
	// false when it reported nothing.
	Usage     llm.Usage `json:"usage"`
	HaveUsage bool      `json:"have_usage,omitempty"`
	// Tainted is set when the tool called tool.ReportTaint.
	Tainted bool `json:"tainted,omitempty"`
}

// RecordedCall is one call a program made and the result it got: what a
// durable engine keeps of a program's calls between its runs (see
// [ReplayProgramContext]).
type RecordedCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    tool.Result     `json:"result"`
	// Untrusted: the result tainted the program, as loop.CallNested's
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
	// result is final). Its ID is "<call id>/<n>", the id loop.CallNested
	// gives the call in the run.
	Next *tool.Call
	// Report is what the program reported through its context (usage,
	// taint), as [RemoteCallContext]'s.
	Report CallReport
}

// DelegatedRequest is one request of a delegation: request Index of the
// call, for Specialist.
type DelegatedRequest struct {
	Index      int
	Specialist string
	Request    string
}

// Outcome is how one delegated request's run ended, as the engine that
// ran it saw it.
type Outcome struct {
	// Output and Steps are the answer and its steps; unset when Err is.
	Output string
	Steps  int
	// Err is the run's failure: the response carries its text.
	Err error
	// Usage is what the run spent (HaveUsage: it reported some); Tainted,
	// whether it took in untrusted content.
	Usage     llm.Usage
	HaveUsage bool
	Tainted   bool
}

// Delegation is one call of a loop.Delegate tool, for an engine that runs
// the specialists itself: [ParseDelegation], run each group of Groups
// (groups at once, a group's requests one after the other), Done for
// each, then Result. Done is safe for concurrent use.
type Delegation interface {
	// Groups returns the requests to run, one group per specialist in the
	// order first named.
	Groups() [][]DelegatedRequest
	// Done records the outcome of request i.
	Done(i int, o Outcome)
	// Result reports the delegation's spend and taint to the calling run
	// (ctx is the tool call's) and returns the tool's result: the
	// responses in request order.
	Result(ctx context.Context) tool.Result
}

// Loop is loop's side of the wire: what needs its unexported state.
type Loop interface {
	RemoteCallContext(ctx context.Context, c Call, tainted bool) (context.Context, func() CallReport)
	ReplayProgramContext(ctx context.Context, c Call, tainted bool, record []RecordedCall) (context.Context, func() ProgramReplay)
	NestedPaused(ctx context.Context) bool
	ParseDelegation(args json.RawMessage, specialists []string) (Delegation, *tool.Result)
}

var installed Loop

// Install is called once, by package loop's init. A second call panics:
// one loop serves the wire.
func Install(l Loop) {
	if installed != nil {
		panic("loopwire: installed twice")
	}
	installed = l
}

func theLoop() Loop {
	if installed == nil {
		panic("loopwire: package loop is not linked in: import github.com/autoagent-go/autoagent/loop")
	}
	return installed
}

// RemoteCallContext returns a context for running one of a run's tool
// calls away from its loop (a durable engine's worker): loop.CallInfoFrom,
// loop.ReportUsage and the tool.TaintScope work in it as they do in the
// loop (tainted says whether the run was tainted when the call began), and
// the function returned says what the tool reported, for the engine to
// carry back to the loop (where the tool's stand-in reports it again).
// Nested calls (loop.CallNested) are not available in it.
func RemoteCallContext(ctx context.Context, c Call, tainted bool) (context.Context, func() CallReport) {
	return theLoop().RemoteCallContext(ctx, c, tainted)
}

// ReplayProgramContext returns a context for running the program of the
// run_program call c away from its run, on the record of the calls it
// made so far (tainted: the call had taken in untrusted content before
// the program's first call). In it loop.CallNested answers the program's
// n-th call from record[n-1] when it is the call recorded there (same
// tool, JSON-equal arguments), tainting the program if that result did,
// and refuses it (Diverged) when it is another. The first call past the
// record does not run: it is noted, and refused with a ProgramSuspended
// refusal that stops the program engine; so is every call after it. Once
// the program is done, end returns the call noted, if any, and what the
// program reported; calls made after end are refused.

func ReplayProgramContext(ctx context.Context, c Call, tainted bool, record []RecordedCall) (_ context.Context, end func() ProgramReplay) {
	return theLoop().ReplayProgramContext(ctx, c, tainted, record)
}

// NestedPaused reports whether a call made through loop.CallNested with
// ctx awaits a person's decision: the run pauses after the calling tool,
// and every later call the tool makes is refused until then, so it may as
// well stop.
func NestedPaused(ctx context.Context) bool { return theLoop().NestedPaused(ctx) }

// ParseDelegation reads the arguments of a loop.Delegate call among the
// specialists named. A call the model got wrong is returned as the error
// result the model reads, as the tool would.
func ParseDelegation(args json.RawMessage, specialists []string) (Delegation, *tool.Result) {
	return theLoop().ParseDelegation(args, specialists)
}

type subAgentOut struct {
	Output string `json:"output"`
	Steps  int    `json:"steps"`
	Tokens *int64 `json:"tokens,omitempty"`
}

// SubAgentResult is the result loop's Agent.AsTool tool returns for a
// sub-run that answered output in steps, having spent u (when have): the
// JSON {"output", "steps", "tokens"}.
func SubAgentResult(output string, steps int, u llm.Usage, have bool) tool.Result {
	out := subAgentOut{Output: output, Steps: steps}
	if have {
		out.Tokens = &u.TotalTokens
	}
	res, err := tool.JSON(out)
	if err != nil {
		return tool.Errorf("sub-agent result: %v", err)
	}
	return res
}
