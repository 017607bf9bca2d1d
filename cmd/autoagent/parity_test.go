package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// chat asks a person about a call a policy sends for approval: y runs it
// once, a reason refuses it with that reason.
func TestChatAsksForApproval(t *testing.T) {
	e := newCLIEnv(t)
	e.add("echo.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes")
	policy := filepath.Join(e.root, "policy.json")
	os.WriteFile(policy, []byte(`{"default":"allow","rules":[{"tool":"echo","action":"approve","reason":"echo needs a human"}]}`), 0o644)
	script := e.writeScript(
		`{"tool_calls":[{"id":"call_a","name":"echo","arguments":{"msg":"once"}}]}`,
		`{"text":"Echoed."}`,
		`{"tool_calls":[{"id":"call_b","name":"echo","arguments":{"msg":"twice"}}]}`,
		`{"text":"Refused, as asked."}`,
	)
	tracePath := filepath.Join(e.root, "trace.jsonl")
	r := e.run("echo once\ny\necho twice\nnot this time\n", "chat", "--provider", "scripted", "--script", script,
		"--policy", policy, "--trace", tracePath, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "approval required: echo (call call_a)") || !strings.Contains(r.stderr, `"msg": "once"`) || !strings.Contains(r.stderr, "why:       echo needs a human") {
		t.Errorf("the question on stderr: %q", r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	// Each turn prints its pause, then its end.
	var last []runJSON
	for _, l := range lines {
		last = append(last, decodeRunJSON(t, l))
	}
	if len(last) != 4 || last[0].StopReason != "approval_required" || last[1].Output != "Echoed." || last[3].Output != "Refused, as asked." {
		t.Fatalf("turns: %s", r.stdout)
	}
	if n := countSandboxCalls(t, tracePath, "echo"); n != 1 {
		t.Errorf("echo ran %d times: want once (approved), not for the refused call", n)
	}
	refused := false
	for _, m := range last[3].Messages {
		for _, p := range m.Parts {
			if p.ToolResult != nil && p.ToolResult.CallID == "call_b" && strings.Contains(p.ToolResult.Content, "not this time") {
				refused = true
			}
		}
	}
	if !refused {
		t.Errorf("the model was not told the reviewer's reason: %s", lines[3])
	}
}

// run --mcp mounts an MCP server's tools: the script's call of the
// reference server's echo reaches it.
func TestRunMountsAnMCPServer(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: run `make deps` to run the MCP CLI test")
	}
	server, _ := filepath.Abs(filepath.Join("..", "..", "mcp", "testdata", "node", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if _, err := os.Stat(server); err != nil {
		t.Skip("server-everything is not installed: run `make deps` to run the MCP CLI test")
	}
	e := newCLIEnv(t)
	script := e.writeScript(
		`{"tool_calls":[{"id":"c1","name":"echo","arguments":{"message":"through MCP"}}]}`,
		`{"text":"The server echoed."}`,
	)
	r := e.run("", "run", "--provider", "scripted", "--script", script, "--mcp", "'"+node+"' "+server+" stdio", "--json", "call echo")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := decodeRunJSON(t, strings.TrimSpace(r.stdout))
	found := false
	for _, m := range got.Messages {
		for _, p := range m.Parts {
			if p.ToolResult != nil && strings.Contains(p.ToolResult.Content, "Echo: through MCP") {
				found = true
			}
		}
	}
	if !found || got.Output != "The server echoed." {
		t.Errorf("run --mcp: %s", r.stdout)
	}
	if r := e.run("", "run", "--provider", "scripted", "--script", script, "--mcp", "'unterminated", "x"); r.code != 2 || !strings.Contains(r.stderr, "unterminated") {
		t.Errorf("a bad --mcp line: exit %d %q", r.code, r.stderr)
	}
	if r := e.run("", "run", "--provider", "scripted", "--script", script, "--memory", "nope", "x"); r.code != 2 {
		t.Errorf("--memory nope: exit %d", r.code)
	}
}

// --tool-grant is the create_tool ceiling; alone, or malformed, it is a
// usage error.
func TestToolGrantCeiling(t *testing.T) {
	var f agentFlags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse([]string{"--provider", "scripted", "--script", "s.jsonl", "--create-tool", "2", "--tool-grant", "net:api.example.com", "--prompt-cache"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.config(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.createTool.Ceiling) != 1 || cfg.createTool.Ceiling[0].String() != "net:api.example.com" || cfg.createTool.Budget != 2 || !cfg.provider.PromptCaching {
		t.Errorf("config: %+v", cfg.createTool)
	}
	e := newCLIEnv(t)
	script := e.writeScript(`{"text":"x"}`)
	if r := e.run("", "run", "--provider", "scripted", "--script", script, "--tool-grant", "net:x.example", "hi"); r.code != 2 || !strings.Contains(r.stderr, "--create-tool") {
		t.Errorf("--tool-grant alone: %d %q", r.code, r.stderr)
	}
	if r := e.run("", "run", "--provider", "scripted", "--script", script, "--create-tool", "1", "--tool-grant", "bogus", "hi"); r.code != 2 || !strings.Contains(r.stderr, "--tool-grant") {
		t.Errorf("a malformed --tool-grant: %d %q", r.code, r.stderr)
	}
}

// chat --checkpoint saves each turn's state: after the turn the file holds
// the finished run, its answer included.
func TestChatCheckpoint(t *testing.T) {
	e := newCLIEnv(t)
	script := e.writeScript(`{"text":"First."}`)
	state := filepath.Join(e.root, "chat.state.json")
	if r := e.run("hello\n", "chat", "--provider", "scripted", "--script", script, "--checkpoint", state); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(state)
	if err != nil {
		t.Fatalf("no checkpoint: %v", err)
	}
	if !strings.Contains(string(b), `"status":"done"`) || !strings.Contains(string(b), "First.") {
		t.Errorf("checkpoint: %s", b)
	}
}

// --max-tool-calls and --tool-timeout reach the run's bounds.
func TestToolBoundsFlags(t *testing.T) {
	e := newCLIEnv(t)
	e.add("echo.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes")
	script := e.writeScript(
		`{"tool_calls":[{"id":"a","name":"echo","arguments":{"msg":"1"}},{"id":"b","name":"echo","arguments":{"msg":"2"}}]}`,
		`{"text":"done"}`,
	)
	r := e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--max-tool-calls", "1", "--tool-timeout", "30s", "--json", "go")
	got := decodeRunJSON(t, strings.TrimSpace(r.stdout))
	var refused bool
	for _, m := range got.Messages {
		for _, p := range m.Parts {
			if p.ToolResult != nil && p.ToolResult.CallID == "b" && strings.HasPrefix(p.ToolResult.Content, "ToolCallLimit:") {
				refused = true
			}
		}
	}
	if !refused {
		t.Errorf("the second call was not refused: %s", r.stdout)
	}
	if r := e.run("", "run", "--provider", "scripted", "--script", script, "--tool-timeout", "-1s", "go"); r.code != 2 {
		t.Errorf("a negative --tool-timeout: exit %d", r.code)
	}
}

// run --output-schema: the answer is validated (a bad one sent back) and
// printed as JSON; --json adds "structured".
func TestRunOutputSchema(t *testing.T) {
	e := newCLIEnv(t)
	schema := filepath.Join(e.root, "person.json")
	os.WriteFile(schema, []byte(`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"]}`), 0o644)
	script := e.writeScript(`{"text":"Alice, 30"}`, `{"text":"{\"name\":\"Alice\",\"age\":30}"}`)
	r := e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--output-schema", schema, "Alice is 30")
	if strings.TrimSpace(r.stdout) != `{"name":"Alice","age":30}` {
		t.Errorf("stdout %q", r.stdout)
	}
	r = e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--output-schema", schema, "--json", "Alice is 30")
	var got struct {
		Structured json.RawMessage `json:"structured"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || string(got.Structured) != `{"name":"Alice","age":30}` {
		t.Errorf("--json: %v %s", err, r.stdout)
	}
}
