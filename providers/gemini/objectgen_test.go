package gemini

import (
	"encoding/json"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/google/go-cmp/cmp"
)

// Structured output over the Gemini ObjectGeneration recordings: the
// request carries the schema as the recorded one does (responseJsonSchema
// with responseMimeType application/json), and the answer is the recorded
// JSON. The expected texts were read from the recordings.
func TestReplayObjectGeneration(t *testing.T) {
	for _, tc := range []struct {
		file   string
		stream bool
		text   string
	}{
		{"simple_object.yaml", false, `{"age": 30, "city": "Paris", "name": "Alice"}`},
		{"simple_object_streaming.yaml", true, `{"age": 30, "city": "Paris", "name": "Alice"}`},
		{"complex_object.yaml", false, `{"author": {"name": "J.R.R. Tolkien", "nationality": "British"}, "genres": ["fantasy", "adventure", "epic fantasy"], "published_year": 1954, "title": "The Lord of the Rings"}`},
		{"complex_object_streaming.yaml", true, `{"author": {"name": "J.R.R. Tolkien", "nationality": "English"}, "genres": ["fantasy", "adventure"], "published_year": 1954, "title": "The Lord of the Rings"}`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ex := fixturetest.Cassette(t, "fantasy/TestGoogleObjectGeneration/gemini-2.5-flash/"+tc.file)
			srv := fixturetest.NewServer(t, fixturetest.Answers(ex)...)
			p, err := New(Options{APIKey: "test-key", BaseURL: srv.URL + "/v1beta", Model: flash, MaxTokens: 4000})
			if err != nil {
				t.Fatal(err)
			}
			var rec struct {
				Contents []struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"contents"`
				GenerationConfig map[string]json.RawMessage `json:"generationConfig"`
			}
			if err := json.Unmarshal([]byte(ex[0].Request.Body), &rec); err != nil {
				t.Fatal(err)
			}
			req := &llm.Request{
				Messages:       []llm.Message{llm.UserText(rec.Contents[0].Parts[0].Text)},
				ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Schema: rec.GenerationConfig["responseJsonSchema"]},
			}
			resp, _ := fixturetest.Send(t, p, req, tc.stream)
			if got := resp.Message.Text(); got != tc.text {
				t.Errorf("answer %q, want the recorded %q", got, tc.text)
			}
			var sent struct {
				GenerationConfig map[string]json.RawMessage `json:"generationConfig"`
			}
			if err := json.Unmarshal([]byte(srv.Request(t, 0).Body), &sent); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"responseMimeType", "responseJsonSchema", "maxOutputTokens"} {
				var a, b any
				json.Unmarshal(rec.GenerationConfig[k], &a)
				json.Unmarshal(sent.GenerationConfig[k], &b)
				if !cmp.Equal(a, b) {
					t.Errorf("generationConfig.%s = %s, recorded %s", k, sent.GenerationConfig[k], rec.GenerationConfig[k])
				}
			}
			if len(sent.GenerationConfig) != len(rec.GenerationConfig) {
				t.Errorf("generationConfig keys %d, recorded %d", len(sent.GenerationConfig), len(rec.GenerationConfig))
			}
		})
	}
}
