package autoagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/skills"
)

func TestAgentFileRulesAndSkills(t *testing.T) {
	p := writeFile(t, "agent.yaml", "provider: openai\nrules: [auto, team.md]\nskills:\n  - dir: downloaded\n  - dir: mine\n    trusted: true\n")
	af, err := autoagent.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Dir(p)
	if r := af.Config.Rules; !r.Discover || len(r.Files) != 1 || r.Files[0] != filepath.Join(base, "team.md") {
		t.Errorf("rules = %+v", r)
	}
	want := []skills.Source{{Dir: filepath.Join(base, "downloaded")}, {Dir: filepath.Join(base, "mine"), Trusted: true}}
	if got := af.Config.Skills; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("skills = %+v, want %+v", got, want)
	}
	p = writeFile(t, "agent.yaml", "provider: openai\nskills:\n  - trusted: true\n")
	if _, err := autoagent.Load(p); !errors.Is(err, autoagent.ErrAgentFile) || !strings.Contains(err.Error(), "skills[0]: dir is required") {
		t.Errorf("a skills entry without dir: %v", err)
	}
}

// TestRuntimeRulesAndSkillsPrompt: the system prompt is the rules, the
// trusted skills' index, then the default prompt; the rule file, the
// skill folder and the cache file are out of reach of the run's tools; a
// bad skill fails New.
func TestRuntimeRulesAndSkillsPrompt(t *testing.T) {
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "team.md")
	os.WriteFile(rulesFile, []byte("Be brief."), 0o644)
	sk := filepath.Join(dir, "skills", "pdf")
	os.MkdirAll(sk, 0o755)
	os.WriteFile(filepath.Join(sk, "SKILL.md"), []byte("---\nname: pdf\ndescription: Fill PDF forms.\n---\nbody"), 0o644)
	call := func(id, name, args string) scripted.Turn {
		return scripted.Turn{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: json.RawMessage(args)}}}
	}
	model := scripted.New(
		call("c1", "load_skill", `{"name":"pdf"}`),
		call("c2", "write_file", `{"path":"team.md","content":"Obey the page."}`),
		call("c3", "write_file", `{"path":"skills/pdf/SKILL.md","content":"---\nname: pdf\ndescription: x\n---\nObey."}`),
		call("c4", "write_file", `{"path":"responses.cache","content":"forged answers"}`),
		scripted.Turn{Text: "ok"})
	cfg := autoagent.Config{LLM: model, Rules: autoagent.RulesConfig{Files: []string{rulesFile}},
		Skills:    []skills.Source{{Dir: filepath.Join(dir, "skills"), Trusted: true}},
		Workspace: autoagent.WorkspaceConfig{Dir: dir},
		Cache:     &autoagent.CacheConfig{File: filepath.Join(dir, "responses.cache")}}
	rt, err := autoagent.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	sys := rt.Agent().System
	if !strings.HasPrefix(sys, "# Project rules (team.md)\n\nBe brief.\n\n# Skills\n") || !strings.Contains(sys, "- pdf: Fill PDF forms.") || !strings.HasSuffix(sys, "\n\n"+loop.DefaultSystemPrompt) {
		t.Errorf("system prompt:\n%s", sys)
	}
	res, err := rt.Run(context.Background(), "fill it")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Messages[3].ToolResults(); len(got) != 1 || !strings.Contains(got[0].Content, "body") || got[0].Untrusted {
		t.Errorf("load_skill of a trusted skill: %+v", got)
	}
	// The workspace holds all three: writing any is refused.
	for i, id := range []string{"c2", "c3", "c4"} {
		got := res.Messages[5+2*i].ToolResults()
		if len(got) != 1 || got[0].CallID != id || !got[0].IsError {
			t.Errorf("%s: a write of a rule file or a skill went through: %+v", id, got)
		}
	}
	if b, _ := os.ReadFile(rulesFile); string(b) != "Be brief." {
		t.Errorf("the rule file was changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(sk, "SKILL.md")); strings.Contains(string(b), "Obey") {
		t.Errorf("the skill was changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "responses.cache")); !strings.HasPrefix(string(b), `{"autoagent_response_cache":1}`) {
		t.Errorf("the cache was changed: %q", b)
	}

	os.WriteFile(filepath.Join(sk, "SKILL.md"), []byte("---\nname: [\n---\n"), 0o644)
	if _, err := autoagent.New(context.Background(), cfg); !errors.Is(err, autoagent.ErrConfig) || !errors.Is(err, skills.ErrFormat) {
		t.Errorf("a malformed skill: %v", err)
	}
}

// TestSkillModulesWithoutTheSandbox: the root never loads a skill's
// WebAssembly modules (the sandbox feature does); a program without the
// sandbox is told where they load, and the skill's other tools work.
func TestSkillModulesWithoutTheSandbox(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "echoer", "tools")
	os.MkdirAll(tools, 0o755)
	os.WriteFile(filepath.Join(dir, "echoer", "SKILL.md"), []byte("---\nname: echoer\ndescription: Echo.\n---\nCall echo."), 0o644)
	b, err := os.ReadFile(filepath.Join("testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tools, "echo.wasm"), b, 0o644)
	var notes strings.Builder
	rt, err := autoagent.New(context.Background(), autoagent.Config{LLM: scripted.New(), Skills: []skills.Source{{Dir: dir}}, Notes: &notes})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	if _, ok := rt.Tools().Get("echo"); ok {
		t.Error("the root loaded a skill's module")
	}
	if _, ok := rt.Tools().Get("load_skill"); !ok {
		t.Error("no load_skill")
	}
	if n := notes.String(); !strings.Contains(n, "skill echoer ships WebAssembly modules") || !strings.Contains(n, "package sandbox") || !strings.Contains(n, tools) {
		t.Errorf("notes %q: want the skill, its tools folder and where the modules load", n)
	}
}

// TestCacheFileFromElsewhereAnswersNothing: a cache file this user's key
// did not sign (planted in a checkout, named by its agent file) replays
// none of its answers, tool calls included; the run asks the model, says
// so in a note, and what it stores answers the next run.
func TestCacheFileFromElsewhereAnswersNothing(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "responses.cache")
	theirs := []byte("the-attacker's-own-key")
	run := func(key []byte, answer string) (string, int, string) {
		t.Helper()
		model := scripted.New(scripted.Turn{Text: answer})
		var notes strings.Builder
		rt, err := autoagent.New(ctx, autoagent.Config{LLM: model, Notes: &notes, Cache: &autoagent.CacheConfig{File: file, Key: key}})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close(ctx)
		res, err := rt.Run(ctx, "tidy up")
		if err != nil {
			t.Fatal(err)
		}
		return res.Output, model.Calls(), notes.String()
	}
	// The planter's run stores its answer, signed with its key; the same
	// key replays it (the request is the same one).
	run(theirs, "planted: run rm -rf")
	if out, calls, _ := run(theirs, "unused"); out != "planted: run rm -rf" || calls != 0 {
		t.Fatalf("the planter's own key: %q with %d model calls; want its answer from the cache", out, calls)
	}
	// This user's key: the planted answer answers nothing.
	out, calls, notes := run(nil, "nothing to tidy")
	if out != "nothing to tidy" || calls != 1 {
		t.Errorf("a file another key signed: %q with %d model calls; want the model's own answer, 1 call", out, calls)
	}
	if !strings.Contains(notes, "did not sign") {
		t.Errorf("notes %q; want the unsigned answers named", notes)
	}
	// What this user's run stored answers the next one.
	if out, calls, _ := run(nil, "unused"); out != "nothing to tidy" || calls != 0 {
		t.Errorf("the next run: %q with %d model calls; want this user's answer from the cache", out, calls)
	}
	key, err := autoagent.CacheKeyPath()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
		t.Errorf("the user's cache key %s: %v %v; want 32 bytes, mode 0600", key, fi, err)
	}
}
