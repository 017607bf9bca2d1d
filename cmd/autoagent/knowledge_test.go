package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/trace"
)

// TestRunRules: --rules auto puts the repository's AGENTS.md before the
// system prompt, says so on stderr and in the trace; without it, the
// file is not read; --rules FILE reads a named file; an oversized file
// is a usage error naming the bound.
func TestRunRules(t *testing.T) {
	e := newCLIEnv(t)
	if err := os.Mkdir(filepath.Join(e.root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(e.root, "svc")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.root, "AGENTS.md"), []byte("Answer in French."), 0o644); err != nil {
		t.Fatal(err)
	}
	script := e.writeScript(`{"text":"Bonjour."}`)
	t.Chdir(sub)
	tracePath := filepath.Join(e.root, "run.jsonl")

	r := e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--plugins", e.plugins, "--json", "--trace", tracePath, "--rules", "auto", "hi")
	got := decodeRunJSON(t, r.stdout)
	system := got.Messages[0].Parts[0].Text
	if got.Messages[0].Role != "system" || !strings.HasPrefix(system, "# Project rules (AGENTS.md)\n\nAnswer in French.\n\n") {
		t.Errorf("the system prompt does not start with the rules: %q", system)
	}
	if !strings.Contains(r.stderr, "rules: "+filepath.Join(e.root, "AGENTS.md")) || !strings.Contains(r.stderr, "read as instructions") {
		t.Errorf("stderr does not say which rule file was used:\n%s", r.stderr)
	}
	b, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"type":"rules_loaded"`) || !strings.Contains(string(b), `"sha256":"`) {
		t.Errorf("the trace has no rules_loaded event:\n%s", b)
	}

	r = e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--plugins", e.plugins, "--json", "hi")
	if got := decodeRunJSON(t, r.stdout); strings.Contains(got.Messages[0].Parts[0].Text, "French") {
		t.Error("the rule file was read without --rules")
	}

	named := filepath.Join(e.root, "team.md")
	if err := os.WriteFile(named, []byte("Be brief."), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--plugins", e.plugins, "--json", "--rules", named, "hi")
	if got := decodeRunJSON(t, r.stdout); !strings.Contains(got.Messages[0].Parts[0].Text, "# Project rules (team.md)\n\nBe brief.") {
		t.Errorf("--rules FILE: %q", got.Messages[0].Parts[0].Text)
	}

	if err := os.WriteFile(named, []byte(strings.Repeat("x", 64<<10+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.mustRun(2, "run", "--provider", "scripted", "--script", script, "--plugins", e.plugins, "--rules", named, "hi")
	if !strings.Contains(r.stderr, "over 65536 bytes") {
		t.Errorf("an oversized rule file: %s", r.stderr)
	}
	f, err := os.Open(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := trace.Summarize(f); err != nil {
		t.Error(err)
	}
}

// TestRunSkills is a skill folder's whole path through the CLI: the
// model lists the skills, loads one, reads its reference file, and
// calls the WebAssembly tool the skill ships, which stays pending (not
// offered) until its sha256 is approved in the manifest; then it runs.
// The skill came with --skills, so what it says is framed as data.
func TestRunSkills(t *testing.T) {
	e := newCLIEnv(t)
	skill := filepath.Join(e.root, "skills", "echoer")
	if err := os.MkdirAll(filepath.Join(skill, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"SKILL.md":     "---\nname: echoer\ndescription: Echo words back. Use when asked to echo.\n---\nTo echo, call the echo tool. The rules are in reference.md.\n",
		"reference.md": "Echo exactly what was given.",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(skill, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(e.testdata, "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	module := filepath.Join(skill, "tools", "echo.wasm")
	if err := os.WriteFile(module, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script := e.writeScript(
		`{"tool_calls":[{"id":"c1","name":"list_skills","arguments":{}}]}`,
		`{"tool_calls":[{"id":"c2","name":"load_skill","arguments":{"name":"echoer"}}]}`,
		`{"tool_calls":[{"id":"c3","name":"read_skill_file","arguments":{"name":"echoer","path":"reference.md"}}]}`,
		`{"tool_calls":[{"id":"c4","name":"echo","arguments":{"msg":"hello"}}]}`,
		`{"text":"done"}`,
	)
	args := []string{"run", "--provider", "scripted", "--script", script, "--json", "--skills", filepath.Join(e.root, "skills"), "echo hello"}
	results := func(r result) map[string]string {
		got := decodeRunJSON(t, r.stdout)
		out := map[string]string{}
		for _, m := range got.Messages {
			for _, p := range m.Parts {
				if p.ToolResult != nil {
					out[p.ToolResult.CallID] = p.ToolResult.Content
				}
			}
		}
		return out
	}

	r := e.mustRun(0, args...)
	got := results(r)
	if !strings.Contains(got["c1"], "- echoer: Echo words back.") {
		t.Errorf("list_skills: %q", got["c1"])
	}
	if !strings.Contains(got["c2"], "To echo, call the echo tool.") || !strings.Contains(got["c2"], "- reference.md") {
		t.Errorf("load_skill: %q", got["c2"])
	}
	if !strings.Contains(got["c3"], "Echo exactly what was given.") {
		t.Errorf("read_skill_file: %q", got["c3"])
	}
	for _, id := range []string{"c1", "c2", "c3"} {
		if !strings.Contains(got[id], "[EXTERNAL UNTRUSTED CONTENT") {
			t.Errorf("%s: an untrusted skill's words are not framed as data: %q", id, got[id])
		}
	}
	if strings.Contains(got["c4"], "hello") || !strings.Contains(got["c4"], "echo") {
		t.Errorf("the pending tool ran, or its refusal does not name it: %q", got["c4"])
	}
	if !strings.Contains(r.stderr, "skill echoer ships tool modules") || !strings.Contains(r.stderr, "not approved, not loaded: echo.wasm") {
		t.Errorf("stderr does not say the skill's module is pending:\n%s", r.stderr)
	}

	// The skill's author ships a manifest approving its own module: it
	// counts for nothing until this user trusts it.
	planted := `{"version":1,"tools":{"` + sha256Hex(t, module) + `":{"file":"echo.wasm","name":"echo","approved_by":"the skill's author","approved_at":"2026-12-01T00:00:00Z"}}}`
	if err := os.WriteFile(filepath.Join(skill, "tools", "manifest.json"), []byte(planted), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.mustRun(0, args...)
	if got := results(r); strings.Contains(got["c4"], "hello") || !strings.Contains(r.stderr, "approval(s) ignored") {
		t.Errorf("a manifest shipped with the skill approved its module: %q\nstderr:\n%s", got["c4"], r.stderr)
	}
	os.Remove(filepath.Join(skill, "tools", "manifest.json"))

	e.mustRun(0, "tools", "approve", module, "--yes", "--by", "tester")
	r = e.mustRun(0, args...)
	if got := results(r); !strings.Contains(got["c4"], "hello") {
		t.Errorf("the approved tool did not run: %q\nstderr:\n%s", got["c4"], r.stderr)
	}
}

// TestRunCacheTwice: the same scripted run twice with --cache: the
// second is answered from the cache (its own script, which says
// otherwise, is never played), gives the same result with no tokens
// spent, and the trace's summary counts the hits and what they saved.
func TestRunCacheTwice(t *testing.T) {
	e := newCLIEnv(t)
	e.add("echo.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes", "--by", "tester")
	first := e.writeScript(
		`{"tool_calls":[{"id":"call_1","name":"echo","arguments":{"msg":"hi"}}],"usage":{"input_tokens":100,"output_tokens":20}}`,
		`{"text":"The tool said hi.","usage":{"input_tokens":150,"output_tokens":10}}`,
	)
	cacheFile := filepath.Join(e.root, "responses.cache")
	tracePath := filepath.Join(e.root, "run.jsonl")
	r1 := e.mustRun(0, "run", "--provider", "scripted", "--script", first, "--json", "--cache", cacheFile, "Echo hi")
	other := filepath.Join(e.root, "other.jsonl")
	if err := os.WriteFile(other, []byte(`{"text":"A different answer."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r2 := e.mustRun(0, "run", "--provider", "scripted", "--script", other, "--json", "--cache", cacheFile, "--trace", tracePath, "Echo hi")
	a, b := decodeRunJSON(t, r1.stdout), decodeRunJSON(t, r2.stdout)
	if b.Output != "The tool said hi." || a.Output != b.Output || a.Steps != b.Steps || len(a.Messages) != len(b.Messages) {
		t.Errorf("second run: %q in %d steps, want the first's %q in %d", b.Output, b.Steps, a.Output, a.Steps)
	}
	if a.Usage.TotalTokens != 280 || b.Usage.TotalTokens != 0 {
		t.Errorf("usage: first %+v, second %+v; want 280, then none", a.Usage, b.Usage)
	}
	s := e.mustRun(0, "trace", "summarize", tracePath)
	if !strings.Contains(s.stdout, "response cache: 2 hits, 0 misses   saved: 250 in, 30 out tokens") {
		t.Errorf("trace summarize:\n%s", s.stdout)
	}
	r := e.mustRun(2, "run", "--provider", "scripted", "--script", other, "--cache-ttl", "1h", "x")
	if !strings.Contains(r.stderr, "give --cache FILE") {
		t.Errorf("--cache-ttl alone: %s", r.stderr)
	}
}

// TestKnowledgeFlagsWhereTheyCannotApply: a durable run uses the
// worker's agent, so --rules, --skills and --cache given to `run
// --temporal` are refused rather than ignored; eval refuses --cache,
// which would make its trials replay the first.
func TestKnowledgeFlagsWhereTheyCannotApply(t *testing.T) {
	e := newCLIEnv(t)
	for _, flag := range [][]string{{"--rules", "auto"}, {"--skills", "s"}, {"--trusted-skills", "s"}, {"--cache", "c"}, {"--retrieve", "d"}, {"--retrieve-memory"}} {
		r := e.mustRun(2, append([]string{"run", "--temporal", "127.0.0.1:1"}, append(flag, "hi")...)...)
		if !strings.Contains(r.stderr, flag[0]+" with --temporal") {
			t.Errorf("run --temporal %s: %s", flag[0], r.stderr)
		}
	}
	cases := filepath.Join(e.root, "cases.jsonl")
	if err := os.WriteFile(cases, []byte(`{"id":"a","prompt":"hi"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.mustRun(2, "eval", cases, "--provider", "scripted", "--cache", "c")
	if !strings.Contains(r.stderr, "--cache is not for eval") {
		t.Errorf("eval --cache: %s", r.stderr)
	}
	// The agent file's cache key is refused the same way.
	agent := filepath.Join(e.root, "agent.yaml")
	if err := os.WriteFile(agent, []byte("provider: scripted\ncache:\n  file: answers.cache\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.mustRun(2, "eval", cases, "--agent", agent, "--script", cases)
	if !strings.Contains(r.stderr, "the agent file's cache is not for eval") {
		t.Errorf("eval --agent with a cache key: %s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.root, "answers.cache")); err == nil {
		t.Error("the refused eval made the agent file's cache file")
	}
}

// TestRunRetrieve: --retrieve DIR puts the passages of DIR's documents
// relevant to the prompt before the model (the trace's retrieved event
// names them), notes the files it skipped, and taints the run.
func TestRunRetrieve(t *testing.T) {
	e := newCLIEnv(t)
	docs := filepath.Join(e.root, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(docs, "deploy.md"), []byte("Staging is deployed with make ship."), 0o644)
	os.WriteFile(filepath.Join(docs, "blob.bin"), []byte("staging\x00"), 0o644)
	if err := os.Symlink("/etc/passwd", filepath.Join(docs, "passwd.md")); err != nil {
		t.Fatal(err)
	}
	script := e.writeScript(`{"text":"With make ship."}`)
	tracePath := filepath.Join(e.root, "run.jsonl")
	r := e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--plugins", e.plugins, "--json", "--trace", tracePath, "--retrieve", docs, "How is staging deployed?")
	for _, want := range []string{"blob.bin not indexed: binary", "passwd.md not indexed: a symbolic link leading out of the directory"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	b, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"type":"retrieved"`) || !strings.Contains(string(b), `"sources":["deploy.md:1 35B untrusted"]`) || !strings.Contains(string(b), `"type":"tainted"`) {
		t.Errorf("the trace lacks the retrieval or the taint:\n%s", b)
	}
	r = e.mustRun(2, "run", "--provider", "scripted", "--script", script, "--plugins", e.plugins, "--retrieve", filepath.Join(e.root, "none"), "hi")
	if !strings.Contains(r.stderr, "the documents directory") {
		t.Errorf("a missing directory: %s", r.stderr)
	}
}
