package scripted

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
)

func TestParseFormats(t *testing.T) {
	const jsonl = `# a demo script
{"tool_calls":[{"id":"c1","name":"weather","arguments":{ "city" : "Oslo" }}],"usage":{"input_tokens":5,"output_tokens":2}}

// final answer
{"text":"sunny"}
`
	const array = `[{"tool_calls":[{"id":"c1","name":"weather","arguments":{"city":"Oslo"}}],"usage":{"input_tokens":5,"output_tokens":2}},{"text":"sunny"}]`
	const wrapped = `{"turns": [
		{"tool_calls":[{"id":"c1","name":"weather","arguments":{"city":"Oslo"}}],"usage":{"input_tokens":5,"output_tokens":2}},
		{"text":"sunny"}
	]}`
	for name, src := range map[string]string{"jsonl": jsonl, "array": array, "wrapped": wrapped} {
		t.Run(name, func(t *testing.T) {
			turns, err := Parse(strings.NewReader(src))
			if err != nil {
				t.Fatal(err)
			}
			if len(turns) != 2 {
				t.Fatalf("%d turns", len(turns))
			}
			c := turns[0].ToolCalls[0]
			if c.ID != "c1" || c.Name != "weather" || string(c.Arguments) != `{"city":"Oslo"}` {
				t.Errorf("call = %+v (%s)", c, c.Arguments)
			}
			if turns[0].Usage.InputTokens != 5 || turns[1].Text != "sunny" {
				t.Errorf("turns = %+v", turns)
			}
		})
	}
}

func TestParseSingleObjectIsOneTurn(t *testing.T) {
	turns, err := Parse(strings.NewReader("{\n  \"text\": \"hello\"\n}\n"))
	if err != nil || len(turns) != 1 || turns[0].Text != "hello" {
		t.Fatalf("turns %+v err %v", turns, err)
	}
}

func TestParseErrorsNamePosition(t *testing.T) {
	cases := []struct{ src, want string }{
		{"", "empty"},
		{"{\"text\":\"a\"}\n{\"txt\":\"b\"}\n", `line 2 (turn 2): not a valid turn object: json: unknown field "txt"`},
		{`[{"text":"a"},{"tool_calls":[{"arguments":{}}]}]`, `turn 2: tool_calls[0]: missing "name"`},
		{`[{"tool_calls":[{"name":"x","arguments":"{\"a\":1}"}]}]`, `must be a JSON object`},
		{`[{"tool_calls":[{"name":"x","arguments":{},"arguments_raw":"{"}]}]`, `not both`},
		{`[{"mid_stream":true}]`, `needs an "error"`},
		{`[{"error":{}}]`, `at least one of`},
		{`{"turns":{"text":"a"}}`, `"turns" must be an array`},
		{`{"turns":[],"x":1}`, `no other key`},
		{"{\"text\":\"a\"}\n{broken\n", "line 2 (turn 2)"},
		{"# only a comment\n", "no turns"},
	}
	for _, c := range cases {
		_, err := Parse(strings.NewReader(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want error containing %q", c.src, err, c.want)
		}
	}
}

func TestParseErrorTurnAndRawArguments(t *testing.T) {
	src := `{"error":{"status":429,"code":"rate_limit_exceeded","message":"slow down","retryable":true,"retry_after_ms":1500}}
{"tool_calls":[{"name":"x","arguments_raw":"{not json"}]}
{"text":"partial","error":{"message":"reset"},"mid_stream":true}`
	turns, err := Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	var pe *llm.ProviderError
	if !errors.As(turns[0].Err, &pe) || pe.Status != 429 || !pe.Retryable || pe.RetryAfter != 1500*time.Millisecond || pe.Code != "rate_limit_exceeded" {
		t.Errorf("error turn = %+v", turns[0].Err)
	}
	if got := string(turns[1].ToolCalls[0].Arguments); got != "{not json" {
		t.Errorf("raw args = %q", got)
	}
	if turns[1].ToolCalls[0].ID != "" {
		t.Error("an absent id must stay empty for the loop to assign")
	}
	if !turns[2].MidStream || turns[2].Err == nil {
		t.Errorf("mid-stream turn = %+v", turns[2])
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "script.jsonl")
	if err := os.WriteFile(path, []byte(`{"text":"from file"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path, Options{Model: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Complete(context.Background(), &llm.Request{})
	if err != nil || r.Message.Text() != "from file" || r.Model != "demo" {
		t.Fatalf("r = %+v err %v", r, err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	_ = os.WriteFile(bad, []byte(`{"text":1}`), 0o644)
	if _, err := Load(bad, Options{}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("error does not name the file: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file err = %v", err)
	}
}
