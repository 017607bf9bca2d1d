package loop

import (
	"encoding/json"

	"github.com/autoagent-go/autoagent/llm"
)

// StopReason says why a run ended.
type StopReason string

// The stop reasons (the "stop_reason" of `autoagent run --json`).
const (
	StopDone             StopReason = "done"
	StopMaxSteps         StopReason = "max_steps"
	StopTokenBudget      StopReason = "token_budget"
	StopApprovalRequired StopReason = "approval_required"
	StopCancelled        StopReason = "cancelled"
)

// Result is the outcome of a run. Its JSON form is the CLI contract:
//
//	{"output": "...", "steps": 3, "usage": {"input_tokens": …, "output_tokens": …,
//	 "cached_tokens": …, "total_tokens": …}, "messages": [...], "stop_reason": "done"}
type Result struct {
	// Output is the model's final answer; "" unless StopReason is done.
	Output string `json:"output"`
	// Steps is the number of model calls the run made, resumed runs
	// included (numbering continues across resume).
	Steps int `json:"steps"`
	// Usage sums what the provider reported for the run, its memory and its
	// sub-agents. It is all zeros when nothing was reported (see
	// UsageReported); usage is never estimated.
	Usage llm.Usage `json:"usage"`
	// Messages is the whole transcript, system message included.
	Messages []llm.Message `json:"messages"`
	// StopReason says why the run ended.
	StopReason StopReason `json:"stop_reason"`
	// Structured is the answer as JSON, validated against
	// Agent.Structured.Schema; nil without one.
	Structured json.RawMessage `json:"structured,omitempty"`

	// UsageReported is false when no call reported usage.
	UsageReported bool `json:"-"`
	// Tainted reports that the run ingested untrusted content.
	Tainted bool `json:"-"`
	// State is the run's state when it ended: resumable when the run
	// stopped on a bound, an approval pause or cancellation.
	State *RunState `json:"-"`
	// Pending lists the calls awaiting a decision when StopReason is
	// approval_required.
	Pending []PendingCall `json:"-"`
}
