package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/autoagent-go/autoagent"
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
