package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
)

// chatPath is where every request of these tests must go: the base URL is
// always the replay server's URL + "/v1".
const chatPath = "/v1/chat/completions"

// chunksAsSSE frames a vercel-ai *.chunks.txt recording the way
// OpenAI-compatible servers send it: "data: <line>\n\n" per payload, then
// "data: [DONE]\n\n".
func chunksAsSSE(t testing.TB, rel string) string {
	t.Helper()
	return fixturetest.SSE(append(fixturetest.Chunks(t, rel), "[DONE]"), "\n\n")
}

// newReplayServer serves answers in order and, when the test ends, fails
// it for any request that did not go to the Chat Completions endpoint.
func newReplayServer(t testing.TB, answers ...fixturetest.Answer) *fixturetest.Server {
	t.Helper()
	srv := fixturetest.NewServer(t, answers...)
	t.Cleanup(func() {
		for i, r := range srv.Requests() {
			if r.Method != "POST" || r.Path != chatPath {
				t.Errorf("request %d went to %s %s, want POST %s", i+1, r.Method, r.Path, chatPath)
			}
		}
	})
	return srv
}

// normalizeBody decodes a request body for comparison: tool-call
// arguments (a JSON string) are decoded so formatting does not matter, and
// the "strict": false some clients add to tools is dropped, since it is
// the API's default.
func normalizeBody(t testing.TB, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, body)
	}
	if tools, ok := m["tools"].([]any); ok {
		for _, tl := range tools {
			if fn, ok := tl.(map[string]any)["function"].(map[string]any); ok && fn["strict"] == false {
				delete(fn, "strict")
			}
		}
	}
	if msgs, ok := m["messages"].([]any); ok {
		for _, msg := range msgs {
			calls, _ := msg.(map[string]any)["tool_calls"].([]any)
			for _, c := range calls {
				fn := c.(map[string]any)["function"].(map[string]any)
				if s, ok := fn["arguments"].(string); ok {
					var v any
					if json.Unmarshal([]byte(s), &v) == nil {
						fn["arguments"] = v
					}
				}
			}
		}
	}
	return m
}
