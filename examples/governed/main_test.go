package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/manifest"
)

// The example's governed run: the approved sandboxed echo runs, the MCP
// server's echo runs and taints the run, the policy refuses the server's
// get-env, and a second run continues the conversation.
func TestGovernedRun(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: run `make deps` to run this example's test")
	}
	server, _ := filepath.Abs(filepath.Join("..", "..", "mcp", "testdata", "node", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if _, err := os.Stat(server); err != nil {
		t.Skip("server-everything is not installed: run `make deps` to run this example's test")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	plugins := filepath.Join(dir, "plugins")
	os.Mkdir(plugins, 0o755)
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(plugins, "echo.wasm"), b, 0o644)
	st := &manifest.Store{Path: filepath.Join(plugins, "manifest.json")}
	if _, err := st.Approve(context.Background(), manifest.Approval{SHA256: manifest.Sum(b), File: "echo.wasm", By: "test"}); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "policy.json")
	os.WriteFile(policy, []byte(`{"rules":[{"tool":"mcp_get-env","action":"deny","reason":"the environment stays here"}]}`), 0o644)
	script := filepath.Join(dir, "script.jsonl")
	os.WriteFile(script, []byte(`{"tool_calls":[{"id":"c1","name":"echo","arguments":{"msg":"hi"}},{"id":"c2","name":"mcp_echo","arguments":{"message":"hi"}},{"id":"c3","name":"mcp_get-env","arguments":{}}]}
{"text":"Both echoed; the environment was refused."}
{"text":"I remember: both echoed."}
`), 0o644)
	o := options{script: script, plugins: plugins, mcp: node + " " + server + " stdio", policy: policy, sessions: filepath.Join(dir, "sessions.db"), session: "s"}
	var out bytes.Buffer
	if err := run(context.Background(), &out, o, "echo everything"); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"tool echo: ok", "tool mcp_echo: ok", "tool mcp_get-env: refused or failed", "tainted: true", "Both echoed; the environment was refused."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), &out, o, "what happened?"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "I remember: both echoed.") {
		t.Errorf("the second run did not continue the session:\n%s", out.String())
	}
}
