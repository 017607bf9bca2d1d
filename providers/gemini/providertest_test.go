package gemini_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/gemini"
	"github.com/autoagent-go/autoagent/providers/providertest"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		NewProvider: func(t *testing.T, s providertest.Scenario) llm.Provider {
			srv := httptest.NewServer(generateContentServer(s))
			t.Cleanup(srv.Close)
			p, err := gemini.New(gemini.Options{BaseURL: srv.URL, APIKey: "k", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
	})
}

// generateContentServer serves a conformance scenario in the Gemini wire
// format: a whole response for generateContent, and for
// streamGenerateContent one response chunk per SSE event, separated by
// "\r\n\r\n", text in pieces, every function call whole in the last chunk
// with the finishReason and the usage. Calls carry the scenario's ids,
// which Gemini sends on some deployments.
func generateContentServer(s providertest.Scenario) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if e := s.Error; e != nil {
			if e.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(e.RetryAfter.Seconds())))
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(e.Status)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": e.Status, "message": e.Message, "status": e.Code}})
			return
		}
		a := s.Answer
		chunk := func(parts []any, last bool) map[string]any {
			cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
			c := map[string]any{"candidates": []any{cand}, "modelVersion": a.Model, "responseId": a.ID}
			if last {
				cand["finishReason"] = "STOP"
				if u := a.Usage; u != nil {
					c["usageMetadata"] = map[string]any{"promptTokenCount": u.InputTokens, "cachedContentTokenCount": u.CachedTokens,
						"candidatesTokenCount": u.OutputTokens, "totalTokenCount": u.TotalTokens}
				}
			}
			return c
		}
		var calls []any
		for _, c := range a.Message.ToolCalls() {
			calls = append(calls, map[string]any{"functionCall": map[string]any{"id": c.ID, "name": c.Name, "args": c.Arguments}})
		}
		if !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
			var parts []any
			for _, p := range a.Message.Parts {
				switch p.Type {
				case llm.PartReasoning:
					parts = append(parts, map[string]any{"text": p.Text, "thought": true})
				case llm.PartText:
					parts = append(parts, map[string]any{"text": p.Text})
				}
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(chunk(append(parts, calls...), true))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(c map[string]any) {
			b, _ := json.Marshal(c)
			fmt.Fprintf(w, "data: %s\r\n\r\n", b)
			w.(http.Flusher).Flush()
		}
		for _, piece := range pieces(a.Message.Reasoning(), 7) {
			send(chunk([]any{map[string]any{"text": piece, "thought": true}}, false))
		}
		for i, piece := range pieces(a.Message.Text(), 5) {
			send(chunk([]any{map[string]any{"text": piece}}, false))
			if s.Stall && i == 0 {
				<-r.Context().Done()
				return
			}
		}
		if calls == nil {
			calls = []any{map[string]any{"text": ""}}
		}
		send(chunk(calls, true))
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
