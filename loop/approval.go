package loop

import (
	"fmt"
	"slices"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop/refusal"
)

// PendingCall is a call awaiting a human decision.
type PendingCall struct {
	// Call is the model's call, with its stable id.
	Call llm.ToolCall `json:"call"`
	// Reason says why approval is needed.
	Reason string `json:"reason"`
	// Source is what asked for approval: "policy" or "trifecta".
	Source string `json:"source"`
	// Parent is, for a call a tool made through CallNested (a sandboxed
	// guest's tools: call) or a sub-agent's call (AsTool, Delegate), the
	// id of the model's call of that tool; "" for a call of the model.
	Parent string `json:"parent,omitempty"`
}

// Digest is the digest of the call (hex sha256 of its tool and canonical
// arguments). A decision given for the call's id is bound to it: if the
// call made under this id on resume is another, the decision does not
// apply and the call is refused. Show it to the reviewer beside the
// call, with the whole arguments.
func (p PendingCall) Digest() string { return callDigest(p.Call) }

// HumanDecision is a reviewer's answer for one call, given to Resume.
type HumanDecision struct {
	Approved bool   `json:"approved"`
	Reason   string `json:"reason,omitempty"`
}

// ResumeOption gives Resume the decisions for pending calls.
type ResumeOption func(*resumeOptions)

type resumeOptions struct {
	decisions map[string]HumanDecision
}

// Approve approves the calls with these ids: each runs exactly once on
// resume (unless a guard or the policy now denies it: approval never
// overrides a refusal).
func Approve(callIDs ...string) ResumeOption {
	return func(o *resumeOptions) {
		for _, id := range callIDs {
			o.set(id, HumanDecision{Approved: true})
		}
	}
}

// Reject rejects the call with this id: it does not run, and the model is
// told "ToolPolicyDenied: rejected by a human reviewer: <reason>". Any call
// of the pending turn may be rejected, not only those awaiting approval.
func Reject(callID, reason string) ResumeOption {
	return func(o *resumeOptions) { o.set(callID, HumanDecision{Reason: reason}) }
}

func (o *resumeOptions) set(id string, d HumanDecision) {
	if o.decisions == nil {
		o.decisions = map[string]HumanDecision{}
	}
	o.decisions[id] = d
}

// DecidableCalls returns the calls of st a decision may be given for: the
// calls of the pending turn, then the calls tools and sub-agents made
// that await a decision (PendingCall.Parent set), each once, in order.
func (s *RunState) DecidableCalls() []llm.ToolCall {
	turn := s.PendingTurn()
	calls := slices.Clone(turn)
	for _, p := range s.Pending {
		if p.Parent != "" {
			calls = append(calls, p.Call)
		}
	}
	return calls
}

// applyDecisions merges decisions into st, refusing ids that are not
// decidable calls (a typo must not be silently ignored), and binds each to
// the call it was given for: the call as it awaits approval (after the
// pre-tool hooks), else as the model made it.
func applyDecisions(st *RunState, decisions map[string]HumanDecision) error {
	if len(decisions) == 0 {
		return nil
	}
	calls := map[string]llm.ToolCall{}
	var ids []string
	for _, c := range st.DecidableCalls() {
		calls[c.ID] = c
		ids = append(ids, c.ID)
	}
	for _, p := range st.Pending {
		calls[p.Call.ID] = p.Call
	}
	for id := range decisions {
		if _, ok := calls[id]; !ok {
			if len(ids) == 0 {
				return fmt.Errorf("loop: resume: a decision was given for call %q but the run has no pending turn", id)
			}
			return fmt.Errorf("loop: resume: no call %q in the pending turn (calls: %s)", id, strings.Join(ids, ", "))
		}
	}
	if st.Decisions == nil {
		st.Decisions = map[string]Decision{}
	}
	for id, d := range decisions {
		v := VerdictDeny
		if d.Approved {
			v = VerdictApprove
		}
		st.Decisions[id] = Decision{Verdict: v, Reason: d.Reason, Digest: callDigest(calls[id])}
	}
	return nil
}

func humanRejectedMessage(reason string) refusal.Refusal {
	if reason == "" {
		return policyDeniedMessage("rejected by a human reviewer")
	}
	return policyDeniedMessage("rejected by a human reviewer: " + reason)
}
