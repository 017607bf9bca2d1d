package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/skills"
)

// echoSkill makes a skill folder in a new directory whose tools/ holds
// echo.wasm and a manifest.json approving it, as a skill's author would
// ship it; it returns the directory and the manifest's path.
func echoSkill(t *testing.T) (dir, manifestPath string) {
	t.Helper()
	dir = t.TempDir()
	tools := filepath.Join(dir, "echoer", "tools")
	os.MkdirAll(tools, 0o755)
	os.WriteFile(filepath.Join(dir, "echoer", "SKILL.md"), []byte("---\nname: echoer\ndescription: Echo.\n---\nCall echo."), 0o644)
	b, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tools, "echo.wasm"), b, 0o644)
	planted := `{"version":1,"tools":{"` + manifest.Sum(b) + `":{"file":"echo.wasm","name":"echo","approved_by":"the skill's author","approved_at":"2026-12-01T00:00:00Z"}}}`
	manifestPath = filepath.Join(tools, "manifest.json")
	os.WriteFile(manifestPath, []byte(planted), 0o644)
	return dir, manifestPath
}

// TestSkillManifestNeedsTrust: the sandbox loads a skill's modules, but
// judges the skill's own manifest under the user's trust store even when
// the program gives no plugins configuration: a skill approving its own
// module loads nothing until the user trusts that manifest; then it does.
func TestSkillManifestNeedsTrust(t *testing.T) {
	ctx := context.Background()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	trustPath := filepath.Join(t.TempDir(), "trust.json")
	t.Setenv("AUTOAGENT_TRUST", trustPath)
	dir, manifestPath := echoSkill(t)
	start := func() (*autoagent.Runtime, string) {
		var notes strings.Builder
		rt, err := autoagent.New(ctx, autoagent.Config{LLM: scripted.New(), Skills: []skills.Source{{Dir: dir}},
			Features: []autoagent.Feature{&sandbox.Sandbox{}}, Notes: &notes})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(ctx) })
		return rt, notes.String()
	}
	rt, notes := start()
	if _, ok := rt.Tools().Get("echo"); ok {
		t.Error("the skill's own manifest approved its module")
	}
	if _, ok := rt.Tools().Get("load_skill"); !ok {
		t.Error("no load_skill")
	}
	if !strings.Contains(notes, "skill echoer ships tool modules") || strings.Contains(notes, "not loaded: they load with the sandbox") {
		t.Errorf("notes %q: want the sandbox's note, not the root's", notes)
	}

	b, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	store := &manifest.TrustStore{Path: trustPath}
	if _, err := store.Trust(ctx, manifestPath, manifest.Sum(b), "the user", "test"); err != nil {
		t.Fatal(err)
	}
	if rt, _ := start(); !hasTool(rt, "echo") {
		t.Error("the skill's module, its manifest trusted, did not load")
	}
}

// TestSkillModulesLoadOnce: two sandboxes in one runtime load a skill's
// modules once (Setup.TakeSkillModules), not twice over one tool name.
func TestSkillModulesLoadOnce(t *testing.T) {
	ctx := context.Background()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("AUTOAGENT_TRUST", filepath.Join(t.TempDir(), "trust.json"))
	dir, _ := echoSkill(t)
	var notes strings.Builder
	rt, err := autoagent.New(ctx, autoagent.Config{LLM: scripted.New(), Skills: []skills.Source{{Dir: dir}},
		Features: []autoagent.Feature{&sandbox.Sandbox{}, &sandbox.Sandbox{}}, Notes: &notes})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	if n := strings.Count(notes.String(), "skill echoer ships tool modules"); n != 1 {
		t.Errorf("the skill's modules loaded %d times; notes %q", n, notes.String())
	}
}

func hasTool(rt *autoagent.Runtime, name string) bool {
	_, ok := rt.Tools().Get(name)
	return ok
}
