// Package refusal is the one type of every tool result the agent loop
// writes in place of a tool's answer: a call it refused, or one it stopped.
//
// A Refusal is built here and nowhere else, and recognised by its kind,
// never by its text:
//
//	rf := refusal.New(refusal.PolicyDenied, "secrets stay on the host")
//	res := rf.Result(call.ID, call.Name) // res.Refusal == "ToolPolicyDenied"
//	if rf, ok := refusal.Of(res); ok && rf.Kind == refusal.PolicyDenied { … }
//
// The kind travels in [llm.ToolResult].Refusal, so it survives the JSON of
// checkpoints, sessions and a durable workflow's history. A tool result
// written before that field existed has none: it reads as the tool's own
// answer (see RATIONALE.md, "Why is a refusal a field, not a prefix?").
//
// The text the model reads starts with the kind and a colon
// ("ToolPolicyDenied: …"), as it always has: models, prompts and program
// engines rely on it. Code does not.
package refusal

import (
	"fmt"
	"time"

	"github.com/autoagent-go/autoagent/llm"
)

// Kind says why the loop wrote a result in place of the tool's answer.
type Kind string

// The kinds a transcript can hold. A call refused before it ran:
const (
	// ToolCallLimit: the run made Bounds.MaxToolCalls calls.
	ToolCallLimit Kind = "ToolCallLimit"
	// NotOffered: tool search has not offered the tool, or code mode
	// offers it to programs only.
	NotOffered Kind = "ToolNotOffered"
	// HookDenied: a pre-tool hook denied the call, failed, or rewrote its
	// arguments into ones the tool refuses.
	HookDenied Kind = "ToolHookDenied"
	// RepeatedCall: the loop guard (Bounds.MaxRepeatedToolCalls).
	RepeatedCall Kind = "RepeatedCall"
	// EgressBlocked: the trifecta guard, after untrusted content.
	EgressBlocked Kind = "EgressBlocked"
	// PolicyDenied: the policy, or a person, rejected the call.
	PolicyDenied Kind = "ToolPolicyDenied"
	// ApprovalMismatch: a person decided on another call under this id.
	ApprovalMismatch Kind = "ApprovalMismatch"
	// Diverged: a re-run made another call than the one recorded under
	// this id.
	Diverged Kind = "Diverged"
	// OutcomeUnknown: the call started before a crash and is not
	// idempotent, so it is not run again.
	OutcomeUnknown Kind = "OutcomeUnknown"
)

// A call stopped as it ran:
const (
	// ToolTimeout: the call outlived its time limit.
	ToolTimeout Kind = "ToolTimeout"
	// ProgramTimeout: a durable run's program outlived its limit on every
	// attempt.
	ProgramTimeout Kind = "ProgramTimeout"
	// ProgramCallLimit: a program made more calls than code mode allows.
	ProgramCallLimit Kind = "ProgramCallLimit"
	// ProgramTooLarge: a durable run's program took in more than a worker
	// can be handed.
	ProgramTooLarge Kind = "ProgramTooLarge"
	// ProgramTooLong: running a durable run's program again would
	// overflow the workflow's history.
	ProgramTooLong Kind = "ProgramTooLong"
	// ApprovalRequired: a call the tool made (a sub-agent's, a
	// program's) awaits a person's approval; the run pauses after it.
	ApprovalRequired Kind = "ApprovalRequired"
)

// The kinds only a tool calling tools (CallNested) is given, never the
// model:
const (
	// CallOver: the calling tool's call has ended.
	CallOver Kind = "CallOver"
	// Paused: an earlier call of the program awaits a person's decision.
	Paused Kind = "Paused"
	// Cancelled: the calling tool started early and was discarded.
	Cancelled Kind = "Cancelled"
	// NestingLimit: calls nest as deep as a run allows.
	NestingLimit Kind = "NestingLimit"
	// NotAllowed: a program or a tool tried to start a program.
	NotAllowed Kind = "NotAllowed"
	// Blocked: a tool-result guardrail withheld the call's result.
	Blocked Kind = "Blocked"
	// NotRun: the call could not run (a journal failure).
	NotRun Kind = "NotRun"
	// ProgramSuspended: a program run away from its run called past its
	// record; it stops, and runs again once the call is answered.
	ProgramSuspended Kind = "ProgramSuspended"
)

// MayHaveRun reports whether a call refused with k may have run, in part
// or before an interruption: true for a call stopped as it ran and for
// OutcomeUnknown; false for a call the loop refused before it started.
// An audit that asks "did this egress call go out?" must count the first.
func (k Kind) MayHaveRun() bool {
	switch k {
	case OutcomeUnknown, ToolTimeout, ProgramTimeout, ProgramCallLimit, ProgramTooLarge, ProgramTooLong, ApprovalRequired, Blocked:
		return true
	}
	return false
}

// Refusal is a result the loop wrote in place of a tool's answer. It is an
// error too, so a tool standing in for another (a durable workflow's) can
// return one: the loop writes it as the call's result, kind and all.
type Refusal struct {
	Kind Kind
	// Text is what the model reads: the kind, a colon, and why.
	Text string
}

// New returns a refusal of kind whose reason is format formatted with args.
func New(kind Kind, format string, args ...any) Refusal {
	return Refusal{Kind: kind, Text: string(kind) + ": " + fmt.Sprintf(format, args...)}
}

// Error returns the text, for a refusal returned as an error.
func (f Refusal) Error() string { return f.Text }

// Result is the refusal as the result of call id of tool name: an error
// result carrying the kind.
func (f Refusal) Result(id, name string) llm.ToolResult {
	return llm.ToolResult{CallID: id, Name: name, Content: f.Text, IsError: true, Refusal: string(f.Kind)}
}

// Of returns the refusal r holds, if the loop wrote r in place of a
// tool's answer.
func Of(r llm.ToolResult) (Refusal, bool) {
	if r.Refusal == "" {
		return Refusal{}, false
	}
	return Refusal{Kind: Kind(r.Refusal), Text: r.Content}, true
}

// Timeout is the refusal of tool name's call that outlived limit: it was
// stopped, and what it returns later is dropped.
func Timeout(name string, limit time.Duration) Refusal {
	return New(ToolTimeout, "`%s` did not finish within its time limit of %v; it was stopped and nothing it returns later is used.", name, limit)
}

// Unknown is the refusal of a call of tool name, not idempotent, that
// started before an interruption and whose outcome was not recorded: it is
// not run again.
func Unknown(name string) Refusal {
	return New(OutcomeUnknown, "`%s` was started before an interruption and its outcome was not recorded. It was not run again, so that a side effect is not repeated. Check whether it took effect before calling it again.", name)
}
