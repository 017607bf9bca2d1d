package rules_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/testsys"

	"github.com/autoagent-go/autoagent/rules"
	"github.com/autoagent-go/autoagent/trace"
)

// write creates root/rel with text, making its directories.
func write(t *testing.T, root, rel, text string) string {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// repo returns a new repository (a directory holding .git) with the
// subdirectory a/b.
func repo(t *testing.T) (root, sub string) {
	t.Helper()
	root = t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub = filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	return root, sub
}

// TestDiscoverOrder: in one directory the names win in the documented
// order; a nearer directory wins over a farther one whatever the name.
func TestDiscoverOrder(t *testing.T) {
	cases := []struct {
		name  string
		files []string // relative to the repository root
		want  string   // the file used, relative to the root
	}{
		{"agents first", []string{"a/b/AGENTS.md", "a/b/.agents/AGENTS.md", "a/b/CLAUDE.md", "a/b/.claude/CLAUDE.md"}, "a/b/AGENTS.md"},
		{".agents second", []string{"a/b/.agents/AGENTS.md", "a/b/CLAUDE.md", "a/b/.claude/CLAUDE.md"}, "a/b/.agents/AGENTS.md"},
		{"claude third", []string{"a/b/CLAUDE.md", "a/b/.claude/CLAUDE.md"}, "a/b/CLAUDE.md"},
		{".claude last", []string{"a/b/.claude/CLAUDE.md"}, "a/b/.claude/CLAUDE.md"},
		{"nearest directory wins", []string{"AGENTS.md", "a/CLAUDE.md", "a/b/.claude/CLAUDE.md"}, "a/b/.claude/CLAUDE.md"},
		{"parent when none here", []string{"AGENTS.md", "a/.claude/CLAUDE.md"}, "a/.claude/CLAUDE.md"},
		{"up to the root", []string{"CLAUDE.md"}, "CLAUDE.md"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, sub := repo(t)
			for _, f := range c.files {
				write(t, root, f, "rules of "+f)
			}
			f, ok, err := rules.Discover(sub, rules.Options{})
			if err != nil || !ok {
				t.Fatalf("Discover = %v, %v", ok, err)
			}
			if want := filepath.Join(root, c.want); f.Path != want {
				t.Errorf("used %s, want %s", f.Path, want)
			}
			if f.Text != "rules of "+c.want || !f.Discovered {
				t.Errorf("text %q, discovered %v", f.Text, f.Discovered)
			}
		})
	}
}

// TestDiscoverStopsAtTheRoot: a file above the repository's root, or
// above a directory in no repository, is never read.
func TestDiscoverStopsAtTheRoot(t *testing.T) {
	outer := t.TempDir()
	write(t, outer, "AGENTS.md", "someone else's rules")
	root := filepath.Join(outer, "project")
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := rules.Discover(root, rules.Options{}); ok || err != nil {
		t.Errorf("found a file above the repository: %v, %v", ok, err)
	}
	// No repository: the starting directory only.
	plain := filepath.Join(outer, "plain", "sub")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := rules.Discover(plain, rules.Options{}); ok || err != nil {
		t.Errorf("found a file above a directory in no repository: %v, %v", ok, err)
	}
	write(t, plain, "CLAUDE.md", "here")
	if f, ok, err := rules.Discover(plain, rules.Options{}); !ok || err != nil || f.Text != "here" {
		t.Errorf("the starting directory's file: %+v, %v, %v", f, ok, err)
	}
}

func TestDiscoverBound(t *testing.T) {
	root, sub := repo(t)
	write(t, root, "AGENTS.md", strings.Repeat("x", 101))
	_, ok, err := rules.Discover(sub, rules.Options{MaxBytes: 100})
	if !errors.Is(err, rules.ErrTooLarge) || ok {
		t.Fatalf("a file over the bound: %v, %v", ok, err)
	}
	if !strings.Contains(err.Error(), "AGENTS.md") || !strings.Contains(err.Error(), "100 bytes") {
		t.Errorf("the error does not name the file and the bound: %v", err)
	}
	if f, ok, err := rules.Discover(sub, rules.Options{MaxBytes: 101}); !ok || err != nil || len(f.Text) != 101 {
		t.Errorf("a file at the bound: %v, %v", ok, err)
	}
	// The default bound, through Read too.
	big := write(t, root, "big.md", strings.Repeat("y", rules.DefaultMaxBytes+1))
	if _, err := rules.Read(big, rules.Options{}); !errors.Is(err, rules.ErrTooLarge) {
		t.Errorf("Read over the default bound: %v", err)
	}
}

func TestReadRefusesWhatIsNotText(t *testing.T) {
	dir := t.TempDir()
	bin := write(t, dir, "rules.md", "ok\xff\xfe")
	if _, err := rules.Read(bin, rules.Options{}); !errors.Is(err, rules.ErrNotText) {
		t.Errorf("binary rules: %v", err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	fifo := filepath.Join(dir, "fifo.md")
	if err := testsys.Mkfifo(fifo); err != nil {
		t.Skip("no FIFO:", err)
	}
	if _, err := rules.Read(fifo, rules.Options{}); err == nil {
		t.Error("a FIFO was read")
	}
}

// TestDiscoverRefusesLinksOut: a checkout's AGENTS.md linking to a file
// of the user's is refused, not sent to the model; a link inside the
// repository is fine.
func TestDiscoverRefusesLinksOut(t *testing.T) {
	root, sub := repo(t)
	secret := write(t, t.TempDir(), "id_ed25519", "PRIVATE KEY")
	if err := os.Symlink(secret, filepath.Join(sub, "AGENTS.md")); err != nil {
		t.Skip("no symlinks:", err)
	}
	f, ok, err := rules.Discover(sub, rules.Options{})
	if !errors.Is(err, rules.ErrOutside) || ok || strings.Contains(f.Text, "PRIVATE") {
		t.Fatalf("a link out of the repository: %+v, %v, %v", f, ok, err)
	}
	// A directory on the way that links out.
	os.Remove(filepath.Join(sub, "AGENTS.md"))
	outDir := t.TempDir()
	write(t, outDir, "AGENTS.md", "PRIVATE notes")
	if err := os.Symlink(outDir, filepath.Join(sub, ".agents")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rules.Discover(sub, rules.Options{}); !errors.Is(err, rules.ErrOutside) {
		t.Errorf("a linked directory out of the repository: %v", err)
	}
	os.Remove(filepath.Join(sub, ".agents"))
	shared := write(t, root, "docs/rules.md", "shared rules")
	if err := os.Symlink(shared, filepath.Join(sub, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	if f, ok, err := rules.Discover(sub, rules.Options{}); !ok || err != nil || f.Text != "shared rules" {
		t.Errorf("a link inside the repository: %+v, %v, %v", f, ok, err)
	}
}

func TestPrompt(t *testing.T) {
	files := []rules.File{{Path: "/p/AGENTS.md", Text: "Use tabs.\n"}, {Path: "/q/extra.md", Text: "  "}, {Path: "/q/team.md", Text: "Be brief."}}
	got := rules.Prompt(files, "You are helpful.")
	want := "# Project rules (AGENTS.md)\n\nUse tabs.\n\n# Project rules (team.md)\n\nBe brief.\n\nYou are helpful."
	if got != want {
		t.Errorf("Prompt =\n%q\nwant\n%q", got, want)
	}
	if got := rules.Prompt(nil, "sys"); got != "sys" {
		t.Errorf("no files: %q", got)
	}
}

// TestTraceNamesTheFile: the trace says which file steered the run, by
// path and content hash.
func TestTraceNamesTheFile(t *testing.T) {
	root, sub := repo(t)
	write(t, root, "AGENTS.md", "abc")
	f, _, err := rules.Discover(sub, rules.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tr := trace.New(trace.JSONL(&buf))
	rules.Trace(tr, f)
	var ev struct {
		Type    string         `json:"type"`
		Payload map[string]any `json:"payload"`
	}
	if err := json.Unmarshal(buf.Bytes(), &ev); err != nil {
		t.Fatal(err)
	}
	// The path as every trace string is (a temporary directory's random
	// name looks like a secret); sha256("abc"), computed by hand, not by the code under test.
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if ev.Type != "rules_loaded" || ev.Payload["path"] != trace.Redact(filepath.Join(root, "AGENTS.md")) || ev.Payload["sha256"] != abc || ev.Payload["discovered"] != true {
		t.Errorf("event = %+v", ev)
	}
	rules.Trace(nil, f) // a nil tracer is allowed
}
