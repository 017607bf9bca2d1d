package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/enginetest"
	"github.com/autoagent-go/autoagent/synth"
)

// run --create-tool: the model asks for a tool it lacks, a scripted writer
// writes it in JavaScript, it passes its self-test in the sandbox, the model
// calls it, and the writer's spend is counted in the run's usage.
func TestRunCreateTool(t *testing.T) {
	t.Setenv(synth.EngineEnv, enginetest.Path(t, synth.EngineFile))
	e := newCLIEnv(t)
	agentScript := e.writeScript(
		`{"tool_calls":[{"id":"c1","name":"create_tool","arguments":{"capability":"reverse the letters of a word","name":"reverse_word"}}],"usage":{"input_tokens":10,"output_tokens":10}}`,
		`{"tool_calls":[{"id":"c2","name":"reverse_word","arguments":{"word":"stressed"}}],"usage":{"input_tokens":10,"output_tokens":10}}`,
		`{"text":"Reversed: desserts.","usage":{"input_tokens":10,"output_tokens":10}}`,
	)
	draft, _ := json.Marshal(map[string]any{
		"name": "reverse_word", "description": "Reverses the letters of a word.",
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string"}}, "required": []string{"word"}},
		"source":       `function run(a) { return a.word.split("").reverse().join("") }`,
		"self_tests":   []any{map[string]any{"args": map[string]any{"word": "abc"}, "expected": "cba"}},
	})
	turn, _ := json.Marshal(map[string]any{"text": string(draft), "usage": map[string]any{"input_tokens": 500, "output_tokens": 100}})
	writer := filepath.Join(e.root, "writer.jsonl")
	if err := os.WriteFile(writer, append(turn, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}

	r := e.mustRun(0, "run", "--provider", "scripted", "--script", agentScript, "--create-tool", "1",
		"--writer-provider", "scripted", "--writer-script", writer, "--json", "Reverse 'stressed'.")
	got := decodeRunJSON(t, r.stdout)
	if got.Output != "Reversed: desserts." || got.StopReason != "done" {
		t.Fatalf("output %q stop %q\nstderr: %s", got.Output, got.StopReason, r.stderr)
	}
	var results []string
	for _, m := range got.Messages {
		for _, p := range m.Parts {
			if p.ToolResult != nil {
				results = append(results, p.ToolResult.Name+"="+p.ToolResult.Content)
				if p.ToolResult.IsError {
					t.Errorf("tool %s failed: %s", p.ToolResult.Name, p.ToolResult.Content)
				}
			}
		}
	}
	if len(results) != 2 || !strings.Contains(results[1], "reverse_word=") || !strings.Contains(results[1], "desserts") {
		t.Errorf("tool results %q: want create_tool then reverse_word returning desserts", results)
	}
	if got.Usage.InputTokens != 530 || got.Usage.OutputTokens != 130 {
		t.Errorf("usage %+v: want the writer's 500/100 counted beside the run's 30/30", got.Usage)
	}
	if _, err := os.Stat(filepath.Join(e.root, "plugins", "staging", "reverse_word.wasm")); err != nil {
		t.Errorf("the accepted tool was not staged for review: %v", err)
	}

	// Staged beside the plugins directory --plugins names, not ./plugins.
	other := filepath.Join(e.root, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	e.mustRun(0, "run", "--provider", "scripted", "--script", agentScript, "--create-tool", "1", "--plugins", other,
		"--writer-provider", "scripted", "--writer-script", writer, "--json", "Reverse 'stressed'.")
	if _, err := os.Stat(filepath.Join(other, "staging", "reverse_word.wasm")); err != nil {
		t.Errorf("with --plugins %s the accepted tool was not staged in its staging/: %v", other, err)
	}
}
