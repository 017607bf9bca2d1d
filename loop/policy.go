package loop

import (
	"context"
	"fmt"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/tool"
)

// Verdict is what a policy decides for one tool call.
type Verdict string

// The verdicts. The zero value means VerdictAllow.
const (
	VerdictAllow   Verdict = "allow"
	VerdictDeny    Verdict = "deny"
	VerdictApprove Verdict = "approve" // pause the run until a human decides
)

// Decision is a policy's answer for one call.
type Decision struct {
	Verdict Verdict `json:"verdict"`
	// Reason is what the model sees after "ToolPolicyDenied: " (VerdictDeny), or
	// what the human is told (VerdictApprove).
	Reason string `json:"reason,omitempty"`
	// Digest, in a person's decision kept in a RunState, binds it to the
	// call the person was shown (its tool and arguments): it applies to
	// no other call under the same id. A policy leaves it empty.
	Digest string `json:"digest,omitempty"`
}

// PolicyInput is what a policy sees of a call.
type PolicyInput struct {
	// Call is the model's call; its ID is stable across pause and resume.
	Call llm.ToolCall
	// Spec is the tool's spec (zero when the tool does not exist).
	Spec llm.ToolSpec
	// Flags are the tool's flags.
	Flags tool.Flags
	// Known is false when the model called a tool that is not registered
	// (the call will fail with "unknown tool" unless the policy refuses it).
	Known bool
	// Step is the current step.
	Step int
	// Tainted reports whether the run had ingested untrusted content
	// before this turn's tools ran.
	Tainted bool
	// RunID identifies the run.
	RunID string
	// Messages is the transcript, this turn's assistant message included.
	// Read-only.
	Messages []llm.Message
	// Early reports a check made while the model is still streaming, to
	// decide whether a call of an idempotent tool may start before the
	// answer is complete (see [Agent].MaxEarlyTools). Messages then ends
	// with the assistant message as streamed so far. Any verdict but allow
	// only means "not early": the call is decided again, with Early false,
	// in the tool phase. A policy that judges a call by the turn's other
	// calls, or counts its decisions, should deny early checks.
	Early bool
}

// Policy decides, for every tool call, before any call of the turn runs,
// whether it may run. It is the host's boundary between the model and side
// effects.
//
// Decide is called once per call of a turn, in call order, from the run's
// goroutine (and, in a streamed run, possibly once more before, for an
// early start of an idempotent tool: see PolicyInput.Early), and once per
// call a tool makes through CallNested (code mode); never twice at once
// within a run. A Policy
// shared by concurrent runs must be safe for concurrent use. It runs after the built-in guards and can only add refusals: a call
// a guard refused is refused whatever the policy says. Fail-closed: an
// error, a panic, or an unknown verdict denies the call.
type Policy interface {
	Decide(ctx context.Context, in *PolicyInput) (Decision, error)
}

// PolicyFunc adapts a function to a [Policy].
type PolicyFunc func(ctx context.Context, in *PolicyInput) (Decision, error)

// Decide calls f.
func (f PolicyFunc) Decide(ctx context.Context, in *PolicyInput) (Decision, error) {
	return f(ctx, in)
}

// decide runs p fail-closed: an error, a panic or an unknown verdict
// becomes a denial whose reason says so.
func decide(ctx context.Context, p Policy, in *PolicyInput) Decision {
	var d Decision
	err := protect("policy", func() (err error) {
		d, err = p.Decide(ctx, in)
		return err
	})
	if err != nil {
		return Decision{Verdict: VerdictDeny, Reason: "policy error: " + err.Error()}
	}
	switch d.Verdict {
	case "", VerdictAllow:
		d.Verdict = VerdictAllow
	case VerdictDeny:
		if d.Reason == "" {
			d.Reason = fmt.Sprintf("`%s` refused by policy", in.Call.Name)
		}
	case VerdictApprove:
		if d.Reason == "" {
			d.Reason = fmt.Sprintf("`%s` requires human approval", in.Call.Name)
		}
	default:
		return Decision{Verdict: VerdictDeny, Reason: fmt.Sprintf("policy error: unknown verdict %q", d.Verdict)}
	}
	return d
}

func policyDeniedMessage(reason string) refusal.Refusal {
	return refusal.New(refusal.PolicyDenied, "%s", reason)
}
