package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/autoagent-go/autoagent/llm"
)

// toResponse turns a Messages API response into an llm.Response.
func toResponse(w *wireResponse, requestID string) (*llm.Response, error) {
	if w.Type == "error" || w.Error != nil {
		return nil, bodyError(w.Error, requestID)
	}
	resp := &llm.Response{
		ID:           w.ID,
		Model:        w.Model,
		FinishReason: finishReason(w.StopReason),
		Message:      llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{}},
	}
	for _, b := range w.Content {
		if p, ok := blockPart(b); ok {
			resp.Message.Parts = append(resp.Message.Parts, p)
		}
	}
	if w.Usage != nil {
		var acc usageAcc
		acc.merge(w.Usage)
		resp.Usage = acc.usage()
	}
	return resp, nil
}

// blockPart maps a complete content block to a message part; blocks this
// adapter does not model (server tool results, citations-only blocks) are
// dropped.
func blockPart(b wireBlock) (llm.Part, bool) {
	switch b.Type {
	case "text":
		return llm.Part{Type: llm.PartText, Text: deref(b.Text)}, true
	case "thinking":
		return llm.Part{Type: llm.PartReasoning, Text: deref(b.Thinking), Signature: deref(b.Signature)}, true
	case "redacted_thinking":
		return llm.Part{Type: llm.PartReasoning, Redacted: b.Data}, true
	case "tool_use":
		args := bytes.TrimSpace(b.Input)
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		}
		return llm.ToolCallPart(llm.ToolCall{ID: toolID(b.ID), Name: b.Name, Arguments: json.RawMessage(args)}), true
	}
	return llm.Part{}, false
}

// toolID keeps the server's id; a missing one (never seen from Anthropic,
// but a proxy may drop it) gets a fresh id so results still pair up.
func toolID(id string) string {
	if id != "" {
		return id
	}
	return llm.NewCallID("toolu_")
}

// finishReason normalises stop_reason.
func finishReason(s string) llm.FinishReason {
	switch s {
	case "end_turn", "stop_sequence":
		return llm.FinishStop
	case "tool_use":
		return llm.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return llm.FinishLength
	case "refusal":
		return llm.FinishContentFilter
	case "":
		return ""
	default: // pause_turn and any future reason
		return llm.FinishOther
	}
}

// usageAcc accumulates the usage counters of one answer, which a stream
// spreads over message_start and message_delta.
type usageAcc struct {
	seen                          bool
	input, output, create, cached int64
}

func (a *usageAcc) merge(u *wireUsage) {
	if u == nil {
		return
	}
	set := func(dst *int64, v *int64) {
		if v != nil {
			*dst = *v
			a.seen = true
		}
	}
	set(&a.input, u.InputTokens)
	set(&a.output, u.OutputTokens)
	set(&a.create, u.CacheCreationInputTokens)
	set(&a.cached, u.CacheReadInputTokens)
}

// usage normalises Anthropic's counters: it reports cache reads and cache
// writes beside input_tokens, so both are folded into InputTokens, and
// CachedTokens (the reads) stays a subset of it.
func (a *usageAcc) usage() *llm.Usage {
	if !a.seen {
		return nil
	}
	u := llm.Usage{
		InputTokens:  a.input + a.cached + a.create,
		OutputTokens: a.output,
		CachedTokens: a.cached,
	}.Normalize()
	return &u
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
