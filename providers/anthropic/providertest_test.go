package anthropic_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/anthropic"
	"github.com/autoagent-go/autoagent/providers/providertest"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		NewProvider: func(t *testing.T, s providertest.Scenario) llm.Provider {
			srv := httptest.NewServer(messagesServer(s))
			t.Cleanup(srv.Close)
			p, err := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKey: "k", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
	})
}

// messagesServer serves a conformance scenario in the Messages API wire
// format, streamed the way Anthropic streams (content blocks with deltas,
// an empty first input_json_delta, usage split between message_start and
// message_delta, pings).
func messagesServer(s providertest.Scenario) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream bool `json:"stream"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		if e := s.Error; e != nil {
			if e.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(e.RetryAfter.Seconds())))
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(e.Status)
			_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": e.Code, "message": e.Message}})
			return
		}
		a := s.Answer
		stop := "end_turn"
		if a.FinishReason == llm.FinishToolCalls {
			stop = "tool_use"
		}
		if !req.Stream {
			var content []any
			for _, p := range a.Message.Parts {
				switch p.Type {
				case llm.PartReasoning:
					content = append(content, map[string]any{"type": "thinking", "thinking": p.Text, "signature": "sig"})
				case llm.PartText:
					content = append(content, map[string]any{"type": "text", "text": p.Text})
				case llm.PartToolCall:
					content = append(content, map[string]any{"type": "tool_use", "id": p.ToolCall.ID, "name": p.ToolCall.Name, "input": p.ToolCall.Arguments})
				}
			}
			resp := map[string]any{"id": a.ID, "type": "message", "role": "assistant", "model": a.Model, "content": content, "stop_reason": stop}
			if a.Usage != nil {
				resp["usage"] = wireUsage(a.Usage)
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(resp)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(v map[string]any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
			w.(http.Flusher).Flush()
		}
		start := map[string]any{"id": a.ID, "type": "message", "role": "assistant", "model": a.Model, "content": []any{}}
		if a.Usage != nil {
			u := wireUsage(a.Usage)
			u["output_tokens"] = 1
			start["usage"] = u
		}
		send(map[string]any{"type": "message_start", "message": start})
		send(map[string]any{"type": "ping"})
		for i, p := range a.Message.Parts {
			switch p.Type {
			case llm.PartReasoning:
				send(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
				for _, piece := range pieces(p.Text, 6) {
					send(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": piece}})
				}
				send(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "signature_delta", "signature": "sig"}})
			case llm.PartText:
				send(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
				for j, piece := range pieces(p.Text, 5) {
					send(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": piece}})
					if s.Stall && j == 0 {
						<-r.Context().Done()
						return
					}
				}
			case llm.PartToolCall:
				send(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": p.ToolCall.ID, "name": p.ToolCall.Name, "input": map[string]any{}}})
				for _, frag := range append([]string{""}, pieces(string(p.ToolCall.Arguments), 4)...) {
					send(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": frag}})
				}
			}
			send(map[string]any{"type": "content_block_stop", "index": i})
		}
		delta := map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}}
		if a.Usage != nil {
			delta["usage"] = map[string]any{"output_tokens": a.Usage.OutputTokens}
		}
		send(delta)
		send(map[string]any{"type": "message_stop"})
	}
}

// wireUsage reports u the Anthropic way: cache reads beside the input.
func wireUsage(u *llm.Usage) map[string]any {
	return map[string]any{"input_tokens": u.InputTokens - u.CachedTokens, "cache_read_input_tokens": u.CachedTokens,
		"cache_creation_input_tokens": 0, "output_tokens": u.OutputTokens}
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
