package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/workspace"
)

// escapeSeeds are paths that try to leave the workspace.
var escapeSeeds = []string{"a.md", "../x.md", "a/../../x", "/etc/passwd", "C:/Windows/x.md", `\\server\x`,
	"out/x.md", "link/../x.md", ".autoagent-workspace/journal.jsonl", "a/./b/../../..", "....//x", "c:", "~/x", "%2e%2e/x",
	"a/\x00", " ../x", "a//b.md", ".AutoAgent-Workspace./x", "..", "./..", "a/b/../../../c"}

// TestCleanPathStaysLocal: every path cleanPath accepts is local and
// outside the journal.
func TestCleanPathStaysLocal(t *testing.T) {
	for _, p := range escapeSeeds {
		checkClean(t, p)
	}
}

func checkClean(t *testing.T, p string) {
	t.Helper()
	if c, err := workspace.CleanPath(p); err == nil {
		if c != "." && !filepath.IsLocal(filepath.FromSlash(c)) {
			t.Fatalf("cleanPath(%q) = %q, not local", p, c)
		}
		if strings.HasPrefix(strings.ToLower(c), workspace.JournalDir) {
			t.Fatalf("cleanPath(%q) = %q, in the journal", p, c)
		}
	}
}

// FuzzPathStaysInside: no path, whatever it holds, reads or writes
// outside the workspace, and every path cleanPath accepts is local.
func FuzzPathStaysInside(f *testing.F) {
	for _, s := range escapeSeeds {
		f.Add(s)
	}
	parent := f.TempDir()
	dir := filepath.Join(parent, "ws")
	outside := filepath.Join(parent, "out")
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "x.md"), []byte("outside"), 0o644)
	os.Symlink("../out", filepath.Join(dir, "out"))
	os.Symlink(outside, filepath.Join(dir, "link"))
	w, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { w.Close() })
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, p string) {
		checkClean(t, p)
		if b, err := w.Read(p); err == nil && string(b) == "outside" {
			t.Fatalf("Read(%q) read the outside file", p)
		}
		w.Write(ctx, p, []byte("pwned"))
		w.Append(ctx, p, []byte("pwned"))
		w.Before(ctx, p)
		w.Delete(ctx, p)
		w.Rename(ctx, "a.md", p)
		es, _ := os.ReadDir(parent)
		if len(es) != 2 {
			t.Fatalf("after %q the parent holds %d entries", p, len(es))
		}
		if b, _ := os.ReadFile(filepath.Join(outside, "x.md")); string(b) != "outside" {
			t.Fatalf("after %q the outside file holds %q", p, b)
		}
		if es, _ := os.ReadDir(outside); len(es) != 1 {
			t.Fatalf("after %q the outside directory holds %d entries", p, len(es))
		}
	})
}
