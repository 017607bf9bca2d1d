package openai_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/openai"
	"github.com/autoagent-go/autoagent/providers/providertest"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		NewProvider: func(t *testing.T, s providertest.Scenario) llm.Provider {
			srv := httptest.NewServer(chatCompletionsServer(s))
			t.Cleanup(srv.Close)
			p, err := openai.New(openai.Options{BaseURL: srv.URL + "/v1", APIKey: "k", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
	})
}

// chatCompletionsServer serves a conformance scenario in the Chat
// Completions wire format, streamed the way OpenAI streams (argument
// fragments by index, usage in a last chunk with no choices, [DONE]).
func chatCompletionsServer(s providertest.Scenario) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream bool `json:"stream"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		if e := s.Error; e != nil {
			if e.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(e.RetryAfter.Seconds())))
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(e.Status)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": e.Message, "type": e.Code, "code": e.Code}})
			return
		}
		a := s.Answer
		if !req.Stream {
			msg := map[string]any{"role": "assistant", "content": nilIfEmpty(a.Message.Text())}
			if r := a.Message.Reasoning(); r != "" {
				msg["reasoning_content"] = r
			}
			var calls []any
			for _, c := range a.Message.ToolCalls() {
				calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": string(c.Arguments)}})
			}
			if calls != nil {
				msg["tool_calls"] = calls
			}
			resp := map[string]any{"id": a.ID, "model": a.Model, "object": "chat.completion",
				"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": wireFinish(a.FinishReason)}}}
			if a.Usage != nil {
				resp["usage"] = wireUsage(a.Usage)
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(resp)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(delta map[string]any, finish any, usage any) {
			ch := map[string]any{"id": a.ID, "model": a.Model, "object": "chat.completion.chunk", "usage": usage,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
			if delta == nil {
				ch["choices"] = []any{}
			}
			b, _ := json.Marshal(ch)
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		send(map[string]any{"role": "assistant", "content": ""}, nil, nil)
		for _, piece := range pieces(a.Message.Reasoning(), 7) {
			send(map[string]any{"reasoning_content": piece}, nil, nil)
		}
		for i, piece := range pieces(a.Message.Text(), 5) {
			send(map[string]any{"content": piece}, nil, nil)
			if s.Stall && i == 0 {
				<-r.Context().Done()
				return
			}
		}
		for i, c := range a.Message.ToolCalls() {
			send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil, nil)
			for _, frag := range pieces(string(c.Arguments), 4) {
				send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": frag}}}}, nil, nil)
			}
		}
		send(map[string]any{}, wireFinish(a.FinishReason), nil)
		if a.Usage != nil {
			send(nil, nil, wireUsage(a.Usage))
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

// pieces splits s into chunks of n runes.
func pieces(s string, n int) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func wireFinish(f llm.FinishReason) string {
	if f == llm.FinishToolCalls {
		return "tool_calls"
	}
	return strings.ToLower(string(f))
}

func wireUsage(u *llm.Usage) map[string]any {
	return map[string]any{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.TotalTokens,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CachedTokens}}
}
