package loop

import (
	"context"
	"fmt"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/trace"
)

// PostTurnHook is the host's verification of a final answer: it sees each
// answer the model gives without tool calls and may return a correction
// message (a user message, typically "you did not save the file; do it
// now"), which is appended and costs a step; the run goes on until the
// model answers again. Returning nil accepts the answer.
//
// It is called at most [Checks].MaxCorrections times with a correction to
// give per run, from the run's goroutine. An error or a panic is traced and
// treated as nil (fail-open: the hook checks quality, not safety).
type PostTurnHook func(ctx context.Context, t *Turn) (*llm.Message, error)

// Turn is what a PostTurnHook sees.
type Turn struct {
	// Step is the step of the answer.
	Step int
	// Answer is the model's final answer.
	Answer string
	// Messages is the whole transcript, the answer included. Read-only.
	Messages []llm.Message
	// New is the part of Messages since the turn started (the prompt, or
	// the last correction).
	New []llm.Message
	// ToolCalls are the calls the model made in New.
	ToolCalls []llm.ToolCall
	// Corrections is the number of corrections already given.
	Corrections int
}

// correctionCap is how many corrections the run may give (post-turn hook
// and output guardrails together): Agent.Checks.MaxCorrections, 1 when 0, none
// when negative.
func (r *runner) correctionCap() int {
	switch n := r.a.Checks.MaxCorrections; {
	case n == 0:
		return 1
	case n < 0:
		return 0
	default:
		return n
	}
}

// postTurn asks the hook for a correction; nil means the answer stands.
func (r *runner) postTurn(step int, llmSpan string, answer string) *llm.Message {
	a := r.a
	if a.Checks.PostTurn == nil {
		return nil
	}
	if r.st.Corrections >= r.correctionCap() {
		return nil
	}
	span := traceEvent(r, trace.HookInvoked, llmSpan, trace.Hook{Step: step, Corrections: r.st.Corrections})
	msgs := r.st.Messages
	turn := &Turn{Step: step, Answer: answer, Messages: msgs, New: msgs[min(r.st.TurnStart, len(msgs)):], Corrections: r.st.Corrections}
	for _, m := range turn.New {
		if m.Role == llm.RoleAssistant {
			turn.ToolCalls = append(turn.ToolCalls, m.ToolCalls()...)
		}
	}
	var msg *llm.Message
	err := protect("post-turn hook", func() (err error) {
		msg, err = a.Checks.PostTurn(r.ctx, turn)
		return err
	})
	if err == nil && msg != nil {
		if msg.Role == "" {
			msg.Role = llm.RoleUser
		}
		if verr := msg.Validate(); verr != nil {
			err = fmt.Errorf("invalid correction: %w", verr)
		}
	}
	if err != nil {
		traceEvent(r, trace.HookError, span, trace.Hook{Step: step, Error: err.Error()})
		return nil
	}
	if msg != nil {
		traceEvent(r, trace.HookCorrection, span, trace.Hook{Step: step, Content: r.preview(msg.Text())})
	}
	return msg
}
