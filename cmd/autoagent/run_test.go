package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/providers/anthropic"
	"github.com/autoagent-go/autoagent/providers/gemini"
	"github.com/autoagent-go/autoagent/providers/openai"
	"github.com/autoagent-go/autoagent/trace"
)

// writeScript writes a scripted-model script into the test's directory.
func (e *cliEnv) writeScript(lines ...string) string {
	e.t.Helper()
	p := filepath.Join(e.root, "script.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// runJSON is the CLI contract of `run --json` (docs/ARCHITECTURE.md §8), decoded
// strictly so a renamed or extra top-level key fails the test.
type runJSON struct {
	Output string `json:"output"`
	Steps  int    `json:"steps"`
	Usage  struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		CachedTokens int64 `json:"cached_tokens"`
		TotalTokens  int64 `json:"total_tokens"`
	} `json:"usage"`
	Messages []struct {
		Role  string `json:"role"`
		Parts []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ToolCall *struct {
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"tool_call"`
			ToolResult *struct {
				CallID  string `json:"call_id"`
				Name    string `json:"name"`
				Content string `json:"content"`
				IsError bool   `json:"is_error"`
			} `json:"tool_result"`
		} `json:"parts"`
	} `json:"messages"`
	StopReason string `json:"stop_reason"`
}

func decodeRunJSON(t *testing.T, stdout string) runJSON {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &top); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	var keys []string
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"messages", "output", "steps", "stop_reason", "usage"}; !slices.Equal(keys, want) {
		t.Fatalf("top-level keys = %v, want %v", keys, want)
	}
	var r runJSON
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRunJSONWithSandboxedTool(t *testing.T) {
	e := newCLIEnv(t)
	e.add("echo.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes", "--by", "tester")
	script := e.writeScript(
		`{"tool_calls":[{"id":"call_1","name":"echo","arguments":{"msg":"héllo"}}],"usage":{"input_tokens":100,"output_tokens":20,"cached_tokens":40}}`,
		`{"text":"The tool said héllo.","usage":{"input_tokens":150,"output_tokens":10}}`,
	)
	tracePath := filepath.Join(e.root, "run.jsonl")
	r := e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--json", "--trace", tracePath, "Echo héllo")
	got := decodeRunJSON(t, r.stdout)
	if got.Output != "The tool said héllo." || got.Steps != 2 || got.StopReason != "done" {
		t.Errorf("output/steps/stop = %q/%d/%q", got.Output, got.Steps, got.StopReason)
	}
	if u := got.Usage; u.InputTokens != 250 || u.OutputTokens != 30 || u.CachedTokens != 40 || u.TotalTokens != 280 {
		t.Errorf("usage = %+v, want 250 in, 30 out, 40 cached, 280 total", u)
	}
	var roles []string
	for _, m := range got.Messages {
		roles = append(roles, m.Role)
	}
	if want := []string{"system", "user", "assistant", "tool", "assistant"}; !slices.Equal(roles, want) {
		t.Fatalf("roles = %v, want %v", roles, want)
	}
	call := got.Messages[2].Parts[0].ToolCall
	res := got.Messages[3].Parts[0].ToolResult
	if call == nil || res == nil {
		t.Fatalf("transcript lacks the tool call or its result: %s", r.stdout)
	}
	if call.ID != "call_1" || res.CallID != "call_1" || res.Name != "echo" || res.IsError {
		t.Errorf("call %+v, result %+v", call, res)
	}
	if !strings.Contains(res.Content, "héllo") {
		t.Errorf("the sandboxed echo tool's result %q does not carry its argument", res.Content)
	}

	f, err := os.Open(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := trace.Summarize(f)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Runs != 1 || sum.LLMCalls != 2 || sum.ToolCalls != 1 {
		t.Errorf("trace summary: runs %d, llm calls %d, tool calls %d; want 1, 2, 1", sum.Runs, sum.LLMCalls, sum.ToolCalls)
	}
	b, _ := os.ReadFile(tracePath)
	if !strings.Contains(string(b), `"type":"sandbox_call"`) {
		t.Errorf("the trace has no sandbox_call event for the WASM call")
	}
}

func TestRunStopsOnBoundsWithExitOne(t *testing.T) {
	e := newCLIEnv(t)
	loopTurn := `{"tool_calls":[{"name":"missing_tool","arguments":{}}],"usage":{"input_tokens":60,"output_tokens":60}}`
	script := e.writeScript(loopTurn, loopTurn, loopTurn, loopTurn)

	r := e.mustRun(1, "run", "--provider", "scripted", "--script", script, "--json", "--max-steps", "2", "go")
	got := decodeRunJSON(t, r.stdout)
	if got.StopReason != "max_steps" || got.Steps != 2 {
		t.Errorf("stop %q after %d steps, want max_steps after 2", got.StopReason, got.Steps)
	}
	if !strings.Contains(r.stderr, "max") {
		t.Errorf("stderr does not say why the run stopped: %q", r.stderr)
	}
	// The unknown tool is an error result the model saw, not a crash.
	if res := got.Messages[3].Parts[0].ToolResult; res == nil || !res.IsError || !strings.Contains(res.Content, "missing_tool") {
		t.Errorf("unknown tool result = %+v", res)
	}

	r = e.mustRun(1, "run", "--provider", "scripted", "--script", script, "--json", "--token-budget", "100", "go")
	got = decodeRunJSON(t, r.stdout)
	if got.StopReason != "token_budget" || got.Steps != 1 {
		t.Errorf("stop %q after %d steps, want token_budget after 1", got.StopReason, got.Steps)
	}
}

func TestRunTextAndStream(t *testing.T) {
	e := newCLIEnv(t)
	script := e.writeScript(`{"text":"Plain answer."}`)
	if r := e.mustRun(0, "run", "--provider", "scripted", "--script", script, "hi"); r.stdout != "Plain answer.\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
	if r := e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--stream", "hi"); r.stdout != "Plain answer.\n" {
		t.Errorf("streamed stdout = %q", r.stdout)
	}
}

func TestRunUsage(t *testing.T) {
	e := newCLIEnv(t)
	help := e.mustRun(0, "run", "--help").stdout
	for _, flag := range []string{"--provider", "--model", "--base-url", "--api-key-env", "--plugins", "--manifest", "--quarantine", "--stream", "--json", "--system", "--max-steps", "--token-budget", "--trace"} {
		if !strings.Contains(help, flag) {
			t.Errorf("run --help does not document %s", flag)
		}
	}
	// --api-key-env names every provider's default variable.
	for _, env := range []string{openai.DefaultAPIKeyEnv, anthropic.DefaultAPIKeyEnv, gemini.DefaultAPIKeyEnv, openai.DeepSeekAPIKeyEnv, openai.GroqAPIKeyEnv} {
		if !strings.Contains(help, env) {
			t.Errorf("run --help does not name %s as a default of --api-key-env", env)
		}
	}
	// A flag's argument is named in the help, not replaced by a phrase.
	for _, flag := range []string{"--checkpoint FILE ", "--record FILE.jsonl ", "--max-steps int "} {
		if !strings.Contains(help, flag) {
			t.Errorf("run --help lacks %q:\n%s", flag, help)
		}
	}
	for _, args := range [][]string{
		{"run", "--no-such-flag", "x"},
		{"run"},
		{"run", "--max-steps", "many", "x"},
		{"run", "--provider", "nope", "x"},
		{"run", "--provider", "openai-compatible", "x"}, // no --base-url
		{"run", "--provider", "scripted", "x"},          // no --script
		{"synth", "--examples", filepath.Join(e.testdata, "..", "..", "examples", "demo", "slugs.jsonl"), "--goal", "g", "--provider", "scripted"},
		{"no-such-verb"},
	} {
		r := e.run("", args...)
		if r.code != 2 {
			t.Errorf("autoagent %v: exit %d, want 2 (usage)", args, r.code)
		}
		if !strings.Contains(r.stderr, "Usage:") {
			t.Errorf("autoagent %v: stderr has no usage message: %q", args, r.stderr)
		}
	}
	// A provider without its key fails the run (exit 1) naming the variable.
	t.Setenv("OPENAI_API_KEY", "")
	r := e.run("", "run", "--provider", "openai", "--base-url", "http://127.0.0.1:1", "x")
	if r.code != 1 || !strings.Contains(r.stderr, "OPENAI_API_KEY") {
		t.Errorf("missing key: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestChatKeepsTheConversation(t *testing.T) {
	e := newCLIEnv(t)
	script := e.writeScript(`{"text":"First."}`, `{"text":"Second."}`)
	r := e.run("hello\nagain\n/exit\n", "chat", "--provider", "scripted", "--script", script)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// Piped input: no "> " prompts, only the answers.
	if r.stdout != "First.\nSecond.\n" {
		t.Errorf("chat output = %q", r.stdout)
	}
}

// An answer that ends with a newline is printed as run prints it: no
// blank line after it.
func TestChatAnswerEndingWithNewline(t *testing.T) {
	e := newCLIEnv(t)
	script := e.writeScript(`{"text":"First.\n"}`, `{"text":"Second."}`)
	r := e.run("hello\nagain\n", "chat", "--provider", "scripted", "--script", script)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.stdout != "First.\nSecond.\n" {
		t.Errorf("chat output = %q", r.stdout)
	}
}

// TestChatJSON: chat takes run's flags (docs/ARCHITECTURE.md §8), --json included:
// one run --json object per turn, per line, the conversation kept.
func TestChatJSON(t *testing.T) {
	e := newCLIEnv(t)
	script := e.writeScript(`{"text":"First.","usage":{"input_tokens":3,"output_tokens":1}}`, `{"text":"Second."}`)
	r := e.run("hello\nagain\n", "chat", "--provider", "scripted", "--script", script, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", r.stdout)
	}
	first, second := decodeRunJSON(t, lines[0]), decodeRunJSON(t, lines[1])
	if first.Output != "First." || first.StopReason != "done" || first.Usage.InputTokens != 3 {
		t.Errorf("first turn: %+v", first)
	}
	// The second turn's transcript holds the first: one conversation.
	if second.Output != "Second." || len(second.Messages) != 5 || second.Messages[1].Parts[0].Text != "hello" {
		t.Errorf("second turn: %s", lines[1])
	}
}

// --stream with --json: the answer streams on stderr, stdout stays one
// JSON object per run (or chat turn).
func TestStreamWithJSON(t *testing.T) {
	e := newCLIEnv(t)
	script := e.writeScript(`{"text":"Streamed answer."}`)
	r := e.run("", "run", "--provider", "scripted", "--script", script, "--stream", "--json", "hi")
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	if res := decodeRunJSON(t, strings.TrimSpace(r.stdout)); res.Output != "Streamed answer." || res.StopReason != "done" {
		t.Errorf("run stdout: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "Streamed answer.") {
		t.Errorf("run stderr does not show the streamed answer: %q", r.stderr)
	}

	script = e.writeScript(`{"text":"One."}`, `{"text":"Two."}`)
	r = e.run("a\nb\n", "chat", "--provider", "scripted", "--script", script, "--stream", "--json")
	if r.code != 0 {
		t.Fatalf("chat: exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 2 || decodeRunJSON(t, lines[0]).Output != "One." || decodeRunJSON(t, lines[1]).Output != "Two." {
		t.Errorf("chat stdout: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "One.") || !strings.Contains(r.stderr, "Two.") {
		t.Errorf("chat stderr does not show the streamed answers: %q", r.stderr)
	}
}

// TestRunJSONOnFailedRun: a run that fails once started (here an answer
// that never matches the output schema) still prints its --json object,
// with stop_reason "error", the cause, and the transcript it reached; the
// exit status is 1. So does chat's, per turn.
func TestRunJSONOnFailedRun(t *testing.T) {
	e := newCLIEnv(t)
	turn := `{"text":"not json","usage":{"input_tokens":10,"output_tokens":5}}`
	script := e.writeScript(turn, turn, turn, turn)
	schema := filepath.Join(e.root, "schema.json")
	if err := os.WriteFile(schema, []byte(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--provider", "scripted", "--script", script, "--output-schema", schema, "--json", "go"},
		{"run", "--provider", "scripted", "--script", script, "--output-schema", schema, "--json", "--stream", "go"},
	} {
		r := e.mustRun(1, args...)
		var got struct {
			StopReason string            `json:"stop_reason"`
			Error      string            `json:"error"`
			Steps      int               `json:"steps"`
			Messages   []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%v: stdout is not one JSON object: %v\n%s", args, err, r.stdout)
		}
		if got.StopReason != "error" || !strings.Contains(got.Error, "output schema") || got.Steps == 0 || len(got.Messages) < 3 {
			t.Errorf("%v: failed run's object = %+v, want stop_reason error, the cause and the transcript", args, got)
		}
	}
	// Chat fed by a script: the object per turn, and exit 1 once a turn failed.
	r := e.run("go\n", "chat", "--provider", "scripted", "--script", script, "--output-schema", schema, "--json")
	if !strings.Contains(r.stdout, `"stop_reason":"error"`) {
		t.Errorf("chat --json prints no object for a failed turn:\n%s", r.stdout)
	}
	if r.code != 1 || !strings.Contains(r.stderr, "1 of 1 turns failed") {
		t.Errorf("chat from a script with a failed turn: exit %d, stderr %q; want 1 saying so", r.code, r.stderr)
	}
}
