package openai

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/autoagent-go/autoagent/internal/httpx"
	"github.com/autoagent-go/autoagent/llm"
)

// toResponse converts a non-streamed answer.
func (p *Provider) toResponse(w *chatResponse) (*llm.Response, error) {
	if len(w.Choices) == 0 {
		if w.Error != nil {
			return nil, p.bodyError(w.Error)
		}
		return nil, &llm.ProviderError{Provider: p.cfg.Name, Message: "response has no choices"}
	}
	ch := w.Choices[0]
	msg := llm.Message{Role: llm.RoleAssistant}
	if r := firstNonEmpty(ch.Message.ReasoningContent, ch.Message.Reasoning); r != "" {
		msg.Parts = append(msg.Parts, llm.Part{Type: llm.PartReasoning, Text: r})
	}
	// A refusal (structured outputs) is what the model said; keep it as
	// the text so the caller sees it.
	if t := firstNonEmpty(ch.Message.Content, ch.Message.Refusal); t != "" {
		msg.Parts = append(msg.Parts, llm.TextPart(t))
	}
	for _, tc := range ch.Message.ToolCalls {
		msg.Parts = append(msg.Parts, llm.ToolCallPart(llm.ToolCall{ID: callID(tc.ID), Name: tc.Function.Name, Arguments: arguments(tc.Function.Arguments)}))
	}
	if fc := ch.Message.FunctionCall; fc != nil && fc.Name != "" {
		msg.Parts = append(msg.Parts, llm.ToolCallPart(llm.ToolCall{ID: callID(""), Name: fc.Name, Arguments: arguments(fc.Arguments)}))
	}
	return &llm.Response{
		Message:      msg,
		Usage:        toUsage(w.Usage, w.XGroq),
		FinishReason: finishReason(ch.FinishReason, len(msg.ToolCalls()) > 0),
		Model:        w.Model,
		ID:           w.ID,
	}, nil
}

// callID keeps the server's id and makes one for servers that send none,
// because tool results are matched to calls by id.
func callID(id string) string {
	if id != "" {
		return id
	}
	return llm.NewCallID("call_")
}

// arguments turns the wire's arguments into the call's JSON: the content
// of a JSON string (OpenAI), an object as is (some compatible servers), and
// "{}" for nothing, which is what a model means by a call without
// arguments. Invalid JSON produced by the model is kept as it is, for the
// tool layer to reject with a message the model can act on.
func arguments(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage("{}")
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return stringArguments(s)
		}
	}
	return append(json.RawMessage(nil), raw...)
}

func stringArguments(s string) json.RawMessage {
	if len(bytes.TrimSpace([]byte(s))) == 0 {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}

// toUsage normalises the reported usage; nil when the server sent none.
// Groq reports it in x_groq.usage (on streams, also in usage). Cached
// tokens come from prompt_tokens_details.cached_tokens (OpenAI) or
// prompt_cache_hit_tokens (DeepSeek); both are subsets of prompt_tokens.
func toUsage(u *wireUsage, xg *xGroq) *llm.Usage {
	if u == nil && xg != nil {
		u = xg.Usage
	}
	if u == nil {
		return nil
	}
	out := llm.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	switch {
	case u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens != nil:
		out.CachedTokens = *u.PromptTokensDetails.CachedTokens
	case u.PromptCacheHitTokens != nil:
		out.CachedTokens = *u.PromptCacheHitTokens
	}
	out = out.Normalize()
	return &out
}

// finishReason normalises finish_reason. A server that sends none (or the
// stream ended with [DONE] only) stopped normally, or to call tools.
func finishReason(r string, hasCalls bool) llm.FinishReason {
	switch r {
	case "stop", "end_turn":
		if hasCalls {
			// Some compatible servers say "stop" after tool calls; the
			// caller must still run them.
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	case "tool_calls", "function_call":
		return llm.FinishToolCalls
	case "length":
		return llm.FinishLength
	case "content_filter":
		return llm.FinishContentFilter
	case "":
		if hasCalls {
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	default:
		return llm.FinishOther
	}
}

// parseError reads an error response. OpenAI answers 429 both for a rate
// limit (retry later) and for an exhausted quota (insufficient_quota:
// retrying cannot help until someone pays), so the latter is not retried.
func parseError(status int, header http.Header, body []byte) httpx.ErrorDetail {
	d := httpx.ParseJSONError(status, header, body)
	d.NotRetryable = d.NotRetryable || d.Code == "insufficient_quota"
	return d
}

// bodyError converts an error object found inside a 200 response or a
// stream (OpenAI sends one mid-stream when the server fails while
// generating).
func (p *Provider) bodyError(e *wireError) *llm.ProviderError {
	code := firstNonEmpty(jsonString(e.Code), e.Type)
	retryable := false
	switch code {
	case "server_error", "overloaded", "overloaded_error", "rate_limit_exceeded", "service_unavailable", "timeout":
		retryable = true
	}
	msg := e.Message
	if msg == "" {
		msg = "the server reported an error"
	}
	return &llm.ProviderError{Provider: p.cfg.Name, Code: code, Message: msg, Retryable: retryable}
}

func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		return string(raw) // a numeric code
	}
	return ""
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
