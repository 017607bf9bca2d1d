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
