package autoagent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/loop"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadAgentFile(t *testing.T) {
	t.Setenv("CRM_TOKEN", "t0k3n")
	p := writeFile(t, "agent.yaml", `# a support agent
provider: anthropic
model: claude-test
api_key_env: MY_ANTHROPIC_KEY
system: You answer questions about orders.
bounds: {max_steps: 6, token_budget: 5000, trifecta: approve, max_tool_calls: 4, tool_timeout: 1m30s}
plugins: {dir: tools, quarantine: true}
mcp:
  - command: [node, crm.js]
    env: [CRM_TOKEN, NOT_SET_ANYWHERE]
    prefix: crm_
  - url: http://127.0.0.1:9/mcp
    trusted: true
memory: {kind: fact, dir: memory, identity: ada}
policy: policy.json
trace: /var/log/trace.jsonl
sessions: sessions.db
code_mode: only
workspace: {dir: _out, write_ext: [md], read_ext: [md, log], max_file_bytes: 4096}
code_languages: javascript, python
`)
	dir := filepath.Dir(p)
	af, err := autoagent.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg := af.Config
	if cfg.Provider.Name != "anthropic" || cfg.Provider.Model != "claude-test" || cfg.Provider.APIKeyEnv != "MY_ANTHROPIC_KEY" {
		t.Errorf("provider %+v", cfg.Provider)
	}
	if cfg.Bounds.MaxToolCalls != 4 || cfg.Bounds.ToolTimeout != 90*time.Second {
		t.Errorf("tool bounds %+v", cfg.Bounds)
	}
	if cfg.Bounds.MaxSteps != 6 || cfg.Bounds.TokenBudget != 5000 || cfg.Bounds.Trifecta != loop.TrifectaApprove || cfg.System != "You answer questions about orders." {
		t.Errorf("bounds %+v, system %q", cfg.Bounds, cfg.System)
	}
	if ws := cfg.Workspace; ws.Dir != filepath.Join(dir, "_out") || len(ws.WriteExt) != 1 || ws.WriteExt[0] != "md" || len(ws.ReadExt) != 2 || ws.MaxFileBytes != 4096 {
		t.Errorf("workspace %+v", ws)
	}
	if cfg.Plugins == nil || cfg.Plugins.Dir != filepath.Join(dir, "tools") || !cfg.Plugins.Quarantine {
		t.Errorf("plugins %+v", cfg.Plugins)
	}
	if len(cfg.MCP) != 2 || strings.Join(cfg.MCP[0].Command, " ") != "node crm.js" || cfg.MCP[0].Prefix != "crm_" ||
		strings.Join(cfg.MCP[0].Env, ",") != "CRM_TOKEN=t0k3n" || cfg.MCP[1].URL != "http://127.0.0.1:9/mcp" || !cfg.MCP[1].Trusted {
		t.Errorf("mcp %+v", cfg.MCP)
	}
	if cfg.Memory.Kind != "fact" || cfg.Memory.Dir != filepath.Join(dir, "memory") || cfg.PolicyFile != filepath.Join(dir, "policy.json") ||
		cfg.TraceFile != "/var/log/trace.jsonl" || af.Sessions != filepath.Join(dir, "sessions.db") {
		t.Errorf("paths: memory %+v policy %q trace %q sessions %q", cfg.Memory, cfg.PolicyFile, cfg.TraceFile, af.Sessions)
	}
	if cfg.CodeMode.Mode != codemode.Only || strings.Join(cfg.CodeMode.Languages, ",") != "javascript,python" {
		t.Errorf("code mode %q, languages %v", cfg.CodeMode.Mode, cfg.CodeMode.Languages)
	}
	// JSON is read the same way.
	j := writeFile(t, "agent.json", `{"provider": "openai", "bounds": {"max_steps": 3}, "plugins": {}}`)
	af, err = autoagent.Load(j)
	if cfg = af.Config; err != nil || cfg.Provider.Name != "openai" || cfg.Bounds.MaxSteps != 3 || cfg.Plugins.Dir != filepath.Join(filepath.Dir(j), "plugins") {
		t.Errorf("JSON: %+v, %v", cfg, err)
	}
}

func TestLoadAgentFileErrors(t *testing.T) {
	for _, tt := range []struct{ name, text, want string }{
		{"agent.yaml", "provider: openai\nmodel: m\nfrobnicate: 1\n", `agent.yaml:3: unknown key "frobnicate"`},
		{"agent.yaml", "provider: openai\nbounds:\n  max_steps: 2\n  max_stpes: 3\n", `agent.yaml:4: unknown key "max_stpes"`},
		{"agent.yaml", "provider: openai\napi_key: sk-live-123\n", `agent.yaml:2: "api_key" would hold a secret`},
		{"agent.yaml", "provider: openai\nmcp:\n  - url: http://x\n    token: abc\n", `agent.yaml:4: "token" would hold a secret`},
		{"agent.yaml", "provider: openai\nmcp:\n  - command: [x]\n    env: [TOKEN=abc]\n", `not a variable name`},
		{"agent.yaml", "provider: openai\nmcp:\n  - prefix: x\n", `mcp[0]: give a command or a url`},
		{"agent.yaml", "provider: openai\nbounds: {max_steps: eight}\n", `agent.yaml:2:`},
		{"agent.yaml", "provider: openai\nbounds: {max_steps: -1}\n", `bounds:`},
		{"agent.yaml", "model: m\n", `provider is required`},
		{"agent.yaml", "provider: openai\ncode_mode: sometimes\n", `code mode "sometimes": want off, also or only`},
		{"agent.yaml", "provider: openai\ncode_languages: ruby\n", `code_languages: code-mode language "ruby": want javascript or python`},
		{"agent.yaml", "", `the file is empty`},
		{"agent.yaml", "provider: openai\nworkspace: {write_ext: [md]}\n", `workspace: dir is required`},
		{"agent.json", "{\"provider\": \"openai\",\n \"sytem\": \"x\"}", `agent.json:2: unknown key "sytem"`},
	} {
		p := writeFile(t, tt.name, tt.text)
		_, err := autoagent.Load(p)
		if !errors.Is(err, autoagent.ErrAgentFile) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%q): %v; want an error containing %q", tt.text, err, tt.want)
		}
	}
	if _, err := autoagent.Load(filepath.Join(t.TempDir(), "none.yaml")); !errors.Is(err, autoagent.ErrAgentFile) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
