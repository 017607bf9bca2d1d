package autoagent_test

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
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// fakeFeature records what New gave it and what Close did.
type fakeFeature struct {
	name    string
	protect []manifest.Protected
	fail    error
	log     *[]string
	setup   autoagent.Setup // a copy of what Start saw
}

var _ autoagent.Feature = (*fakeFeature)(nil)

func (f *fakeFeature) Protects() []manifest.Protected { return f.protect }

func (f *fakeFeature) Start(ctx context.Context, s *autoagent.Setup) error {
	*f.log = append(*f.log, "start "+f.name)
	f.setup = autoagent.Setup{Agent: s.Agent, Tools: s.Tools, Provider: s.Provider, Model: s.Model,
		Tracer: s.Tracer, Protected: s.Protected, Workspaces: s.Workspaces, Notes: s.Notes}
	s.OnClose(func(context.Context) error {
		*f.log = append(*f.log, "close "+f.name)
		return nil
	})
	if f.fail != nil {
		return f.fail
	}
	tl, err := tool.New(f.name, "A feature's tool.", func(context.Context, struct{}) (string, error) { return "ok", nil })
	if err != nil {
		return err
	}
	return s.Tools.Add(tl)
}

// Features start in order with the runtime as built so far, add their
// tools, and are closed last started first by Close.
func TestFeaturesStartInOrderAndCloseLastFirst(t *testing.T) {
	ctx := context.Background()
	var log []string
	a := &fakeFeature{name: "tool_a", log: &log, protect: []manifest.Protected{{File: "/a/secret", What: "a's"}}}
	b := &fakeFeature{name: "tool_b", log: &log}
	pol := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(pol, []byte(`{"rules":[]}`), 0o644)
	model := script(scripted.Turn{Text: "done"})
	rt, err := autoagent.New(ctx, autoagent.Config{LLM: model, Model: "m1", PolicyFile: pol,
		Workspace: autoagent.WorkspaceConfig{Dir: t.TempDir()}, Features: []autoagent.Feature{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tool_a", "tool_b"} {
		if _, ok := rt.Tools().Get(name); !ok {
			t.Errorf("the feature's tool %s is not in the registry", name)
		}
	}
	s := a.setup
	if s.Agent != rt.Agent() || s.Tools != rt.Tools() || s.Provider != model || s.Model != "m1" || s.Notes == nil || s.Workspaces == nil {
		t.Errorf("Setup %+v; want the runtime's agent, tools, model, notes and workspaces", s)
	}
	if !slices.ContainsFunc(s.Protected, func(p manifest.Protected) bool { return p.File == "/a/secret" }) ||
		!slices.ContainsFunc(s.Protected, func(p manifest.Protected) bool { return p.File == pol }) {
		t.Errorf("Setup.Protected %v; want the features' and the runtime's files", s.Protected)
	}
	if err := rt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if want := []string{"start tool_a", "start tool_b", "close tool_b", "close tool_a"}; !slices.Equal(log, want) {
		t.Errorf("log %q, want %q", log, want)
	}
}

// A feature that fails to start fails New, which closes what the
// features before it (and the failing one) opened; a nil feature is a
// config error, not a panic.
func TestFeatureFailureClosesWhatStarted(t *testing.T) {
	ctx := context.Background()
	var log []string
	boom := errors.New("boom")
	_, err := autoagent.New(ctx, autoagent.Config{LLM: script(), Features: []autoagent.Feature{
		&fakeFeature{name: "tool_a", log: &log}, &fakeFeature{name: "tool_b", log: &log, fail: boom}, &fakeFeature{name: "tool_c", log: &log}}})
	if !errors.Is(err, boom) {
		t.Fatalf("New: %v; want the feature's error", err)
	}
	if want := []string{"start tool_a", "start tool_b", "close tool_b", "close tool_a"}; !slices.Equal(log, want) {
		t.Errorf("log %q, want %q", log, want)
	}
	if _, err := autoagent.New(ctx, autoagent.Config{LLM: script(), Features: []autoagent.Feature{nil}}); !errors.Is(err, autoagent.ErrConfig) {
		t.Errorf("a nil feature: %v; want ErrConfig", err)
	}
	if got := (autoagent.Config{Features: []autoagent.Feature{nil}}).Protects(); len(got) == 0 {
		t.Error("Protects with a nil feature names nothing")
	}
}

// What a feature protects is known before anything starts, so the
// runtime's own workspace refuses it too, not only the feature's host.
func TestFeatureProtectsReachTheWorkspace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	secret := filepath.Join(dir, "approvals.md")
	os.WriteFile(secret, []byte("kept"), 0o644)
	var log []string
	f := &fakeFeature{name: "tool_a", log: &log, protect: []manifest.Protected{{File: secret, What: "the feature's approvals"}}}
	model := script(calls(tc("c1", "write_file", `{"path":"approvals.md","content":"forged"}`)), scripted.Turn{Text: "done"})
	rt, err := autoagent.New(ctx, autoagent.Config{LLM: model, Workspace: autoagent.WorkspaceConfig{Dir: dir}, Features: []autoagent.Feature{f}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	res, err := rt.Run(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "kept" {
		t.Errorf("the protected file holds %q", b)
	}
	if got := resultOf(res.Messages, "c1"); !strings.Contains(got, "the feature's approvals") {
		t.Errorf("write_file answered %q; want the refusal naming what the file is", got)
	}
}

// badKeys gives Load a layout it cannot decode into.
type badKeys struct{}

func (badKeys) Layout() any { return new(string) }
func (badKeys) Feature(any, string) (autoagent.Feature, error) {
	return nil, errors.New("not called")
}

// countKeys reads the key "plugins" into a feature that only counts.
type countKeys struct{ built *int }

type countLayout struct {
	Plugins *struct {
		Dir string `yaml:"dir"`
	} `yaml:"plugins"`
}

func (countKeys) Layout() any { return &countLayout{} }
func (k countKeys) Feature(layout any, dir string) (autoagent.Feature, error) {
	*k.built++
	var log []string
	return &fakeFeature{name: filepath.Join(dir, layout.(*countLayout).Plugins.Dir), log: &log}, nil
}

// A FeatureKeys that gives no struct is a config error; keys read by two
// readers go to the first, which alone builds a feature.
func TestLoadFeatureKeysRules(t *testing.T) {
	p := writeFile(t, "agent.yaml", "provider: openai\nplugins: {dir: tools}\n")
	if _, err := autoagent.Load(p, badKeys{}); !errors.Is(err, autoagent.ErrConfig) || !strings.Contains(err.Error(), "pointer to a struct") {
		t.Errorf("a layout that is no struct: %v", err)
	}
	var first, second int
	af, err := autoagent.Load(p, countKeys{&first}, countKeys{&second})
	if err != nil {
		t.Fatal(err)
	}
	if first != 1 || second != 0 || len(af.Config.Features) != 1 {
		t.Fatalf("built by the first %d, the second %d; features %v", first, second, af.Config.Features)
	}
	if got := af.Config.Features[0].(*fakeFeature).name; got != filepath.Join(filepath.Dir(p), "tools") {
		t.Errorf("the feature was given dir %q; want the file's directory", got)
	}
	b, _ := json.Marshal(af.Config.Protected)
	if !strings.Contains(string(b), "agent.yaml") {
		t.Errorf("the agent file is not protected: %s", b)
	}
}
