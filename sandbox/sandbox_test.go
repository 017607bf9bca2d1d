package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/sandbox"
)

// A Sandbox holds what it opened for one Runtime: a second Runtime given
// the same value is refused, and the first keeps working.
func TestSandboxStartsOnce(t *testing.T) {
	ctx := context.Background()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	box := &sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Dir: t.TempDir(), NoWatch: true}}
	if box.Dir() != nil || box.Host() != nil {
		t.Fatal("a Sandbox not started holds a host")
	}
	rt, err := autoagent.New(ctx, autoagent.Config{LLM: scripted.New(scripted.Turn{Text: "one"}), Features: []autoagent.Feature{box}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	if box.Dir() == nil || box.Host() == nil {
		t.Fatal("the started Sandbox gives no plugins directory or host")
	}
	_, err = autoagent.New(ctx, autoagent.Config{LLM: scripted.New(), Features: []autoagent.Feature{box}})
	if !errors.Is(err, sandbox.ErrStarted) {
		t.Errorf("a second runtime on the same Sandbox: %v; want ErrStarted", err)
	}
	if res, err := rt.Run(ctx, "go"); err != nil || res.Output != "one" {
		t.Errorf("the first runtime after the refusal: %v %v", res, err)
	}
}

// The trust store a Sandbox's plugins count approvals by is protected
// from every sandboxed tool and workspace, whichever file it is.
func TestSandboxProtectsItsTrustStore(t *testing.T) {
	dir := t.TempDir()
	trust := &manifest.TrustStore{Path: filepath.Join(dir, "trust", "trusted.json")}
	cfg := autoagent.Config{Features: []autoagent.Feature{&sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Trust: trust}}}}
	if !slices.ContainsFunc(cfg.Protects(), func(p manifest.Protected) bool { return p.Dir == filepath.Join(dir, "trust") }) {
		t.Errorf("Protects %v; want the trust store's directory", cfg.Protects())
	}
	if got := (&sandbox.Sandbox{}).Protects(); got != nil {
		t.Errorf("a Sandbox without plugins protects %v", got)
	}
}

// An agent file that sets code_mode: off and no other sandbox key builds
// no Sandbox: nothing with weight is started for it.
func TestKeysBuildNothingForNothing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent.yaml")
	os.WriteFile(p, []byte("provider: openai\ncode_mode: off\ncreate_tool: {language: go}\n"), 0o644)
	af, err := autoagent.Load(p, sandbox.Keys())
	if err != nil || len(af.Config.Features) != 0 {
		t.Errorf("Load: %v, features %v; want none", err, af.Config.Features)
	}
}

// A run's workspace that holds the plugins directory does not let the
// model add a module or approve one: with no trust store the manifest is
// the approval, so writing it would be every grant (found by attacking
// the front door: only the CLI, which always sets a trust store, held).
func TestWorkspaceCannotWriteThePluginsDirectory(t *testing.T) {
	ctx := context.Background()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	model := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{
			{ID: "m", Name: "write_file", Arguments: json.RawMessage(`{"path":"plugins/manifest.json","content":"{}"}`)},
			{ID: "w", Name: "write_file", Arguments: json.RawMessage(`{"path":"plugins/evil.wasm","content":"\u0000asm"}`)},
		}},
		scripted.Turn{Text: "done"},
	)
	box := &sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Dir: plugins, NoWatch: true}}
	rt, err := autoagent.New(ctx, autoagent.Config{LLM: model, Workspace: autoagent.WorkspaceConfig{Dir: dir, WriteExt: []string{".json", ".wasm"}},
		Features: []autoagent.Feature{box}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	res, err := rt.Run(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"m", "w"} {
		if got := resultOf(res.Messages, id); !strings.Contains(got, "plugins directory") {
			t.Errorf("write_file %s answered %q; want the refusal naming the plugins directory", id, got)
		}
	}
	ents, _ := os.ReadDir(plugins)
	if len(ents) != 0 {
		t.Errorf("the plugins directory holds %v after the refused writes", ents)
	}
	// A manifest named outside the plugins directory is protected too.
	own := filepath.Join(dir, "approvals", "manifest.json")
	ps := (&sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Dir: plugins, Manifest: own}}).Protects()
	if !slices.ContainsFunc(ps, func(p manifest.Protected) bool { return p.Dir == filepath.Dir(own) }) {
		t.Errorf("Protects %v; want the manifest's directory %s", ps, filepath.Dir(own))
	}
}
