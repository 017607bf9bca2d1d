package anthropic

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/llm"
)

// No recording exercises prompt-cache reads, redacted thinking or the rarer
// stop reasons; these hand-written bodies follow the documented shapes.

func TestUsageNormalisation(t *testing.T) {
	tests := []struct {
		name  string
		usage string
		want  *llm.Usage
	}{
		{"cache reads and writes are folded into input",
			`{"input_tokens":100,"cache_creation_input_tokens":25,"cache_read_input_tokens":50,"output_tokens":10}`,
			&llm.Usage{InputTokens: 175, CachedTokens: 50, OutputTokens: 10, TotalTokens: 185}},
		{"no cache fields", `{"input_tokens":7,"output_tokens":3}`, &llm.Usage{InputTokens: 7, OutputTokens: 3, TotalTokens: 10}},
		{"a measured zero stays zero", `{"input_tokens":0,"output_tokens":0}`, &llm.Usage{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w wireResponse
			if err := json.Unmarshal([]byte(`{"type":"message","content":[],"usage":`+tc.usage+`}`), &w); err != nil {
				t.Fatal(err)
			}
			resp, err := toResponse(&w, "")
			if err != nil {
				t.Fatal(err)
			}
			if *resp.Usage != *tc.want {
				t.Errorf("usage = %+v, want %+v", *resp.Usage, *tc.want)
			}
			if got, want := resp.Usage.CacheHitRatio(), float64(tc.want.CachedTokens)/float64(max(tc.want.InputTokens, 1)); got != want {
				t.Errorf("cache hit ratio = %v, want %v", got, want)
			}
		})
	}
	var w wireResponse
	_ = json.Unmarshal([]byte(`{"type":"message","content":[{"type":"text","text":"x"}]}`), &w)
	if resp, _ := toResponse(&w, ""); resp.Usage != nil {
		t.Errorf("usage invented when the server sent none: %+v", resp.Usage)
	}
}

func TestStreamedCacheUsage(t *testing.T) {
	// message_start carries the input side, message_delta the final output
	// (and, on newer API versions, the input counters again).
	body := "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"m","model":"c","content":[],"usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":2000,"output_tokens":1}}}` + "\n\n" +
		"event: message_delta\n" +
		`data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":42}}` + "\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	srv := fixturetest.NewServer(t, sseAnswer(body))
	p := newTestProvider(t, srv.URL, Options{})
	s := fixturetest.Drain(t, p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}}))
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	resp := s.Response
	want := llm.Usage{InputTokens: 2005, CachedTokens: 2000, OutputTokens: 42, TotalTokens: 2047}
	if resp == nil || *resp.Usage != want || resp.FinishReason != llm.FinishLength {
		t.Fatalf("response %+v, want usage %+v and finish length", resp, want)
	}
}

func TestRedactedThinkingRoundTrip(t *testing.T) {
	var w wireResponse
	body := `{"id":"m","type":"message","model":"c","stop_reason":"end_turn","content":[
		{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},
		{"type":"thinking","thinking":"hmm","signature":"sig"},
		{"type":"text","text":"done"}]}`
	if err := json.Unmarshal([]byte(body), &w); err != nil {
		t.Fatal(err)
	}
	resp, err := toResponse(&w, "")
	if err != nil {
		t.Fatal(err)
	}
	parts := resp.Message.Parts
	if len(parts) != 3 || parts[0].Type != llm.PartReasoning || parts[0].Redacted != "EmwKAhgBEgy3va3pzix/LafPsn4a" ||
		parts[1].Signature != "sig" || parts[1].Text != "hmm" || parts[2].Text != "done" {
		t.Fatalf("parts = %+v", parts)
	}
	// Sent back, the blocks are exactly the ones received.
	got := encodeJSON(t, Options{}, &llm.Request{Messages: []llm.Message{llm.UserText("q"), resp.Message}})
	want := wantJSON(t, `{"model":"m","max_tokens":4096,"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},
		{"role":"assistant","content":[{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},
		{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"text","text":"done"}]}]}`)
	if got != want {
		t.Errorf("sent back:\n got %s\nwant %s", got, want)
	}
}

func TestFinishReasons(t *testing.T) {
	for in, want := range map[string]llm.FinishReason{
		"end_turn": llm.FinishStop, "stop_sequence": llm.FinishStop, "tool_use": llm.FinishToolCalls,
		"max_tokens": llm.FinishLength, "model_context_window_exceeded": llm.FinishLength,
		"refusal": llm.FinishContentFilter, "pause_turn": llm.FinishOther, "": "",
	} {
		if got := finishReason(in); got != want {
			t.Errorf("finishReason(%q) = %q, want %q", in, got, want)
		}
	}
}
