package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/google/go-cmp/cmp"
)

// Structured output over the Anthropic ObjectGeneration recordings: the
// schema goes as a forced tool, as the recorded requests send it, and the
// tool's input comes back as the answer's text, finishing as a stop. The
// expected answers were read from the recordings.
func TestReplayObjectGeneration(t *testing.T) {
	for _, tc := range []struct {
		file   string
		stream bool
		answer string
	}{
		{"simple_object.yaml", false, `{"name":"Alice","age":30,"city":"Paris"}`},
		{"simple_object_streaming.yaml", true, `{"name": "Alice", "age": 30, "city": "Paris"}`},
		{"complex_object.yaml", false, `{"title":"The Lord of the Rings","author":{"name":"J.R.R. Tolkien","nationality":"British"},"genres":["fantasy","adventure"],"published_year":1954}`},
		{"complex_object_streaming.yaml", true, `{"title": "The Lord of the Rings", "author": {"name":"J.R.R. Tolkien","nationality":"British"}, "genres": ["Fantasy","Adventure","Epic Fantasy","High Fantasy"], "published_year": 1954}`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ex := fixturetest.Cassette(t, "fantasy/TestAnthropicObjectGeneration/claude-sonnet-4/"+tc.file)
			srv := fixturetest.NewServer(t, fixturetest.Answers(ex)...)
			p, err := New(Options{APIKey: "test-key", BaseURL: srv.URL, Model: sonnet, MaxTokens: 4000})
			if err != nil {
				t.Fatal(err)
			}
			var rec struct {
				Messages []struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"messages"`
				Tools []struct {
					Name        string          `json:"name"`
					Description string          `json:"description"`
					InputSchema json.RawMessage `json:"input_schema"`
				} `json:"tools"`
				ToolChoice map[string]any `json:"tool_choice"`
				System     any            `json:"system"`
			}
			if err := json.Unmarshal([]byte(ex[0].Request.Body), &rec); err != nil {
				t.Fatal(err)
			}
			tool := rec.Tools[0]
			req := &llm.Request{
				Messages:       []llm.Message{llm.UserText(rec.Messages[0].Content[0].Text)},
				ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Name: tool.Name, Description: tool.Description, Schema: tool.InputSchema},
			}
			resp, s := fixturetest.Send(t, p, req, tc.stream)
			if !sameJSONText(resp.Message.Text(), tc.answer) || len(resp.Message.ToolCalls()) != 0 || resp.FinishReason != llm.FinishStop {
				t.Errorf("answer %q (calls %v, finish %s), want the recorded %s", resp.Message.Text(), resp.Message.ToolCalls(), resp.FinishReason, tc.answer)
			}
			if tc.stream && (!sameJSONText(s.Text, tc.answer) || len(s.Calls) != 0 || s.TextDeltas < 2) {
				t.Errorf("streamed %q in %d deltas and calls %v, want the answer as partial text", s.Text, s.TextDeltas, s.Calls)
			}
			var sent struct {
				Tools      []map[string]any `json:"tools"`
				ToolChoice map[string]any   `json:"tool_choice"`
				System     any              `json:"system"`
			}
			json.Unmarshal([]byte(srv.Request(t, 0).Body), &sent)
			var recTools []map[string]any
			json.Unmarshal(mustJSON(rec.Tools), &recTools)
			if diff := cmp.Diff(recTools, sent.Tools); diff != "" {
				t.Errorf("tools differ from the recording (-recorded +ours):\n%s", diff)
			}
			if sent.ToolChoice["type"] != "tool" || sent.ToolChoice["name"] != tool.Name || rec.ToolChoice["type"] != "tool" {
				t.Errorf("tool_choice %v, recorded %v", sent.ToolChoice, rec.ToolChoice)
			}
			if sent.System != nil || rec.System != nil {
				t.Errorf("system %v, recorded %v", sent.System, rec.System)
			}
		})
	}
}

func sameJSONText(a, b string) bool {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return false
	}
	return cmp.Equal(va, vb)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
