package autoagent_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/mcp/mount"
	"github.com/autoagent-go/autoagent/sandbox"
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
	af, err := autoagent.Load(p, sandbox.Keys(), mount.Keys())
	if err != nil {
		t.Fatal(err)
	}
	cfg := af.Config
	box, servers := features(t, cfg)
	if p := af.Provider; p.Name != "anthropic" || p.Model != "claude-test" || p.APIKeyEnv != "MY_ANTHROPIC_KEY" || cfg.Model != "claude-test" || cfg.LLM != nil {
		t.Errorf("provider %+v, model %q, LLM %v: want the file's provider as data, for the program to build", p, cfg.Model, cfg.LLM)
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
	if box.Plugins == nil || box.Plugins.Dir != filepath.Join(dir, "tools") || !box.Plugins.Quarantine {
		t.Errorf("plugins %+v", box.Plugins)
	}
	if len(servers) != 2 || strings.Join(servers[0].Command, " ") != "node crm.js" || servers[0].Prefix != "crm_" ||
		strings.Join(servers[0].Env, ",") != "CRM_TOKEN=t0k3n" || servers[1].URL != "http://127.0.0.1:9/mcp" || !servers[1].Trusted {
		t.Errorf("mcp %+v", servers)
	}
	if cfg.Memory.Kind != "fact" || cfg.Memory.Dir != filepath.Join(dir, "memory") || cfg.PolicyFile != filepath.Join(dir, "policy.json") ||
		cfg.TraceFile != "/var/log/trace.jsonl" || af.Sessions != filepath.Join(dir, "sessions.db") {
		t.Errorf("paths: memory %+v policy %q trace %q sessions %q", cfg.Memory, cfg.PolicyFile, cfg.TraceFile, af.Sessions)
	}
	if box.CodeMode.Mode != codemode.Only || strings.Join(box.CodeMode.Languages, ",") != "javascript,python" {
		t.Errorf("code mode %q, languages %v", box.CodeMode.Mode, box.CodeMode.Languages)
	}
	// JSON is read the same way.
	j := writeFile(t, "agent.json", `{"provider": "openai", "bounds": {"max_steps": 3}, "plugins": {}}`)
	af, err = autoagent.Load(j, sandbox.Keys(), mount.Keys())
	if err != nil {
		t.Fatal(err)
	}
	cfg = af.Config
	if box, servers = features(t, cfg); af.Provider.Name != "openai" || cfg.Bounds.MaxSteps != 3 || box.Plugins.Dir != filepath.Join(filepath.Dir(j), "plugins") || servers != nil {
		t.Errorf("JSON: %+v, %+v", cfg, box)
	}
	// A file naming no feature with weight builds none.
	af, err = autoagent.Load(writeFile(t, "agent.yaml", "provider: openai\ncode_mode: off\n"), sandbox.Keys(), mount.Keys())
	if err != nil || len(af.Config.Features) != 0 {
		t.Errorf("a file without features: %v, %v", af.Config.Features, err)
	}
}

// features are the sandbox and the MCP servers Load built: the sandbox
// first, as the readers were given.
func features(t *testing.T, cfg autoagent.Config) (*sandbox.Sandbox, mount.Servers) {
	t.Helper()
	var box *sandbox.Sandbox
	var servers mount.Servers
	for i, f := range cfg.Features {
		switch f := f.(type) {
		case *sandbox.Sandbox:
			if box != nil || i != 0 {
				t.Errorf("a sandbox at %d of %d features", i, len(cfg.Features))
			}
			box = f
		case mount.Servers:
			servers = f
		default:
			t.Errorf("a feature %T", f)
		}
	}
	if box == nil {
		t.Fatalf("no sandbox among %v", cfg.Features)
	}
	return box, servers
}

// A file naming a feature with weight loaded without its reader is an
// error naming the line and the package: the feature is never dropped.
func TestLoadAgentFileFeatureWithoutItsReader(t *testing.T) {
	for _, tt := range []struct {
		text, want string
		keys       []autoagent.FeatureKeys
	}{
		{"provider: openai\nplugins: {dir: tools}\n", `agent.yaml:2: plugins names a feature with weight, built by package github.com/autoagent-go/autoagent/sandbox: pass sandbox.Keys() to autoagent.Load`, nil},
		{"provider: openai\ncode_mode: also\n", `agent.yaml:2: code_mode names a feature with weight, built by package github.com/autoagent-go/autoagent/sandbox`, []autoagent.FeatureKeys{mount.Keys()}},
		{"provider: openai\ncode_languages: python\n", `agent.yaml:2: code_languages names a feature`, nil},
		{"provider: openai\ncreate_tool: {budget: 1}\n", `agent.yaml:2: create_tool names a feature`, nil},
		{"provider: openai\nmcp:\n  - url: http://x\n", `agent.yaml:2: mcp names a feature with weight, built by package github.com/autoagent-go/autoagent/mcp/mount: pass mount.Keys() to autoagent.Load`, []autoagent.FeatureKeys{sandbox.Keys()}},
	} {
		_, err := autoagent.Load(writeFile(t, "agent.yaml", tt.text), tt.keys...)
		if !errors.Is(err, autoagent.ErrAgentFile) || !errors.Is(err, autoagent.ErrConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%q): %v; want an ErrAgentFile and ErrConfig containing %q", tt.text, err, tt.want)
		}
	}
	// A nested key spelled like one is an unknown key, not a feature.
	if _, err := autoagent.Load(writeFile(t, "agent.yaml", "provider: openai\nbounds: {plugins: 1}\n")); err == nil || !strings.Contains(err.Error(), `agent.yaml:2: unknown key "plugins"`) {
		t.Errorf("bounds.plugins: %v", err)
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
		{"agent.yaml", "provider: openai\nbounds:\n  tool_timeout: soon\n", `agent.yaml:3: bounds.tool_timeout: "soon" is not a duration such as 30s`},
		{"agent.yaml", "provider: openai\nbounds:\n  shadow_guards: maybe\n", `agent.yaml:3: bounds.shadow_guards: "maybe" is not true or false`},
		{"agent.yaml", "provider: openai\nmcp:\n  - command: [x]\n  - url: http://x\n    trusted: 2\n", `agent.yaml:5: mcp[1].trusted: "2" is not true or false`},
		{"agent.yaml", "provider: openai\nbounds: [1, 2]\n", `agent.yaml:2: bounds: want keys and values, got a list`},
		{"agent.yaml", "provider: openai\nmcp: {command: x}\n", `agent.yaml:2: mcp: want a list`},
		{"agent.yaml", "provider: openai\nbounds:\n  trifecta: deny\n  trifecta_guard: off\n", `agent.yaml:4: bounds.trifecta_guard is given twice (also on line 3)`},
		{"agent.yaml", "provider: openai\nprovider: anthropic\n", `agent.yaml:2: provider is given twice (also on line 1)`},
		{"agent.yaml", "provider: openai\nbounds: {context_share: 1.5}\n", `bounds:`},
		{"agent.yaml", "provider: [openai\n", `agent.yaml:`},
		{"agent.yaml", "- provider: openai\n", `agent.yaml:1: the file: want keys and values, got a list`},
		{"agent.yaml", "provider: openai\nretrieve: {k: 3}\n", `retrieve: name a source (dirs, trusted_dirs or memory: true)`},
		{"agent.yaml", "provider: openai\nretrieve: {dirs: [d], share: 2}\n", `retrieve: invalid options: Share is 2`},
		{"agent.yaml", "provider: openai\nretrieve: {dirs: d}\n", `agent.yaml:2: retrieve.dirs: "d" is not a list of text`},
	} {
		p := writeFile(t, tt.name, tt.text)
		_, err := autoagent.Load(p, sandbox.Keys(), mount.Keys())
		if !errors.Is(err, autoagent.ErrAgentFile) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%q): %v; want an error containing %q", tt.text, err, tt.want)
		}
	}
	if _, err := autoagent.Load(filepath.Join(t.TempDir(), "none.yaml")); !errors.Is(err, autoagent.ErrAgentFile) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestLoadAgentFileRetrieve(t *testing.T) {
	p := writeFile(t, "agent.yaml", "provider: openai\nretrieve: {dirs: [docs], trusted_dirs: [/abs/notes], memory: true, embeddings: true, k: 4, share: 0.2, max_bytes: 9000}\n")
	af, err := autoagent.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	want := autoagent.RetrievalConfig{Dirs: []string{filepath.Join(filepath.Dir(p), "docs")}, TrustedDirs: []string{"/abs/notes"}, Memory: true, Embeddings: true, K: 4, Share: 0.2, MaxBytes: 9000}
	if got := af.Config.Retrieval; !reflect.DeepEqual(got, want) {
		t.Errorf("retrieval %+v, want %+v", got, want)
	}
}

// Every bound of loop.Bounds can be set in an agent file, under its JSON
// name: a bound added to the loop without a key here fails this test.
func TestAgentFileBoundsAreLoopBounds(t *testing.T) {
	bt := reflect.TypeFor[loop.Bounds]()
	var lines []string
	for i := range bt.NumField() {
		f := bt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		var v string
		switch {
		case f.Type == reflect.TypeFor[time.Duration]():
			v = "30s"
		case f.Type == reflect.TypeFor[loop.TrifectaMode]():
			v = string(loop.TrifectaApprove)
		case f.Type.Kind() == reflect.Bool:
			v = "true"
		case f.Type.Kind() == reflect.Float64:
			v = "0.5"
		case f.Type.Kind() == reflect.Int || f.Type.Kind() == reflect.Int64:
			v = "3"
		default:
			t.Fatalf("loop.Bounds.%s is a %s: teach this test its value", f.Name, f.Type)
		}
		lines = append(lines, "  "+name+": "+v)
	}
	af, err := autoagent.Load(writeFile(t, "agent.yaml", "provider: openai\nbounds:\n"+strings.Join(lines, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	bv := reflect.ValueOf(af.Config.Bounds)
	for i := range bt.NumField() {
		if bv.Field(i).IsZero() {
			t.Errorf("bounds.%s did not set loop.Bounds.%s", bt.Field(i).Tag.Get("json"), bt.Field(i).Name)
		}
	}
	if len(af.Deprecated) != 0 {
		t.Errorf("the JSON names are deprecated: %q", af.Deprecated)
	}
}

// The spellings of an earlier release still set their bound, each with a
// note naming its line and the key to write instead.
func TestAgentFileDeprecatedBoundKeys(t *testing.T) {
	p := writeFile(t, "agent.yaml", "provider: openai\nbounds:\n  prune_after: 4\n  max_repeated_calls: 2\n  trifecta: approve\n")
	af, err := autoagent.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	b := af.Config.Bounds
	if b.PruneToolResultsAfter != 4 || b.MaxRepeatedToolCalls != 2 || b.Trifecta != loop.TrifectaApprove {
		t.Errorf("bounds %+v: the old spellings were not read", b)
	}
	want := []string{
		p + ":3: bounds.prune_after is deprecated: write prune_tool_results_after",
		p + ":4: bounds.max_repeated_calls is deprecated: write max_repeated_tool_calls",
		p + ":5: bounds.trifecta is deprecated: write trifecta_guard",
	}
	if len(af.Deprecated) != len(want) {
		t.Fatalf("notes %q; want %d", af.Deprecated, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(af.Deprecated[i], w) {
			t.Errorf("note %d: %q; want it to start %q", i, af.Deprecated[i], w)
		}
	}
	// Only under bounds: a top-level trifecta is no key at all.
	if _, err := autoagent.Load(writeFile(t, "agent.yaml", "provider: openai\ntrifecta: deny\n")); err == nil || !strings.Contains(err.Error(), `unknown key "trifecta"`) {
		t.Errorf("a top-level trifecta: %v", err)
	}
}
