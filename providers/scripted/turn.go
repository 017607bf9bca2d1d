package scripted

import (
	"context"

	"github.com/autoagent-go/autoagent/llm"
)

// Turn is one answer of the scripted model.
type Turn struct {
	// Text is the answer's text (the final answer, or text beside tool calls).
	Text string
	// Reasoning is the model's thinking, sent as a reasoning part.
	Reasoning string
	// ToolCalls are the calls the model makes, in order. An empty ID is
	// passed on empty (the agent loop assigns one).
	ToolCalls []llm.ToolCall
	// Usage is reported as is; nil means the provider reported nothing.
	Usage *llm.Usage
	// FinishReason defaults to "tool_calls" when there are tool calls and
	// "stop" otherwise.
	FinishReason llm.FinishReason
	// Model names the answering model; it defaults to [Options.Model].
	Model string
	// Err, when set, is returned instead of an answer.
	Err error
	// MidStream makes Stream yield the text first and then Err (a dropped
	// connection). Complete returns Err either way.
	MidStream bool
	// Check, when set, inspects the request this turn answers; an error
	// fails the call (wrapped with the turn number), so a test can assert
	// what the model was sent at each point.
	Check func(ctx context.Context, req *llm.Request) error
}

// response builds the assistant answer of t.
func (t *Turn) response(defaultModel string) *llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant}
	if t.Reasoning != "" {
		msg.Parts = append(msg.Parts, llm.Part{Type: llm.PartReasoning, Text: t.Reasoning})
	}
	if t.Text != "" {
		msg.Parts = append(msg.Parts, llm.TextPart(t.Text))
	}
	for _, c := range t.ToolCalls {
		c.Arguments = append([]byte(nil), c.Arguments...)
		msg.Parts = append(msg.Parts, llm.ToolCallPart(c))
	}
	fr := t.FinishReason
	if fr == "" {
		fr = llm.FinishStop
		if len(t.ToolCalls) > 0 {
			fr = llm.FinishToolCalls
		}
	}
	model := t.Model
	if model == "" {
		model = defaultModel
	}
	resp := &llm.Response{Message: msg, FinishReason: fr, Model: model}
	if t.Usage != nil {
		u := t.Usage.Normalize()
		resp.Usage = &u
	}
	return resp
}
