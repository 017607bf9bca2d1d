package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/workspace"
)

func open(t *testing.T, opts workspace.Options) (*workspace.Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	w, err := workspace.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, dir
}

// must returns a function that passes on v, failing t on err.
func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestFenceRefusesPaths(t *testing.T) {
	w, _ := open(t, workspace.Options{})
	ctx := context.Background()
	cases := []struct {
		path string
		want error
	}{
		{"../demo.py", workspace.ErrEscape},
		{"a/../../x.md", workspace.ErrEscape},
		{"..", workspace.ErrEscape},
		{"/etc/passwd", workspace.ErrAbsolute},
		{"C:/Windows/x.md", workspace.ErrAbsolute},
		{"c:x.md", workspace.ErrAbsolute},
		{`\\server\share\x.md`, workspace.ErrAbsolute},
		{`a\b.md`, workspace.ErrBadPath},
		{"", workspace.ErrBadPath},
		{"a\x00.md", workspace.ErrBadPath},
		{".autoagent-workspace/journal.jsonl", workspace.ErrReserved},
		{".AUTOAGENT-WORKSPACE/x", workspace.ErrReserved},
		{"./.autoagent-workspace/lock", workspace.ErrReserved},
		{"a/../.autoagent-workspace/x", workspace.ErrReserved},
		{"_out/.autoagent-workspace/journal.jsonl", workspace.ErrReserved},
	}
	for _, c := range cases {
		if _, err := w.Write(ctx, c.path, []byte("x")); !errors.Is(err, c.want) {
			t.Errorf("Write(%q) = %v, want %v", c.path, err, c.want)
		}
		if _, err := w.Read(c.path); !errors.Is(err, c.want) {
			t.Errorf("Read(%q) = %v, want %v", c.path, err, c.want)
		}
	}
	if got := workspace.ErrAbsolute.Error(); got != "absolute paths are not allowed: write a path relative to the workspace" {
		t.Errorf("ErrAbsolute = %q", got)
	}
	if n := countChanges(t, w); n != 0 {
		t.Errorf("%d changes journaled for refused writes", n)
	}
}

func countChanges(t *testing.T, w *workspace.Workspace) int {
	t.Helper()
	n := 0
	for _, err := range w.Changes(workspace.Filter{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

func TestExtensionAllowlists(t *testing.T) {
	w, dir := open(t, workspace.Options{WriteExt: []string{"md", ".JSON"}, ReadExt: []string{".md", ".json", ".log"}})
	ctx := context.Background()
	_, err := w.Write(ctx, "virus.exe", []byte("MZ"))
	var ee *workspace.ExtensionError
	if !errors.As(err, &ee) || !ee.Write {
		t.Fatalf("Write(virus.exe) = %v, want an ExtensionError", err)
	}
	if !strings.Contains(err.Error(), "extension .exe is not allowed here: allowed .md, .json") {
		t.Errorf("text %q", err)
	}
	for _, p := range []string{"noext", "x.md.exe", "x.log"} {
		if _, err := w.Write(ctx, p, nil); !errors.As(err, &ee) {
			t.Errorf("Write(%s) = %v, want an ExtensionError", p, err)
		}
	}
	must[workspace.Change](t)(w.Write(ctx, "Report.MD", []byte("ok")))
	os.WriteFile(filepath.Join(dir, "a.log"), []byte("log"), 0o644)
	os.WriteFile(filepath.Join(dir, "k.key"), []byte("secret"), 0o644)
	if b := must[[]byte](t)(w.Read("a.log")); string(b) != "log" {
		t.Errorf("read a.log = %q", b)
	}
	if _, err := w.Read("k.key"); !errors.As(err, &ee) || ee.Write {
		t.Errorf("Read(k.key) = %v, want a read ExtensionError", err)
	}
	if _, err := w.Rename(ctx, "Report.MD", "report.exe"); !errors.As(err, &ee) {
		t.Errorf("Rename to .exe = %v", err)
	}
	if _, err := w.Delete(ctx, "a.log"); !errors.As(err, &ee) {
		t.Errorf("Delete(a.log) = %v, want refused (not writable)", err)
	}
	if err := w.Before(ctx, "x.exe"); !errors.As(err, &ee) {
		t.Errorf("Before(x.exe) = %v, want refused", err)
	}
}

func TestSymlinksHardLinksSpecialFiles(t *testing.T) {
	w, dir := open(t, workspace.Options{})
	ctx := context.Background()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	os.WriteFile(secret, []byte("secret"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "out"))
	os.Symlink(secret, filepath.Join(dir, "s.md"))
	os.Symlink(".autoagent-workspace", filepath.Join(dir, "j"))
	os.Symlink(filepath.Join(dir, ".autoagent-workspace"), filepath.Join(dir, "jabs"))
	os.WriteFile(filepath.Join(dir, "real.md"), []byte("real"), 0o644)
	os.Symlink("real.md", filepath.Join(dir, "in.md"))
	os.Symlink(".autoagent-workspace/journal.jsonl", filepath.Join(dir, "jl.md"))
	if err := os.Link(secret, filepath.Join(dir, "hard.md")); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, filepath.Join(dir, "fifo.md"))
	for _, c := range []struct {
		path string
		want error
	}{
		{"out/secret.md", workspace.ErrEscape},
		{"s.md", workspace.ErrEscape},
		{"j/journal.jsonl", workspace.ErrReserved},
		{"jabs/journal.jsonl", workspace.ErrEscape},
		{"jl.md", workspace.ErrReserved},
		{"hard.md", workspace.ErrHardLink},
		{"fifo.md", workspace.ErrNotRegular},
	} {
		if _, err := w.Read(c.path); !errors.Is(err, c.want) {
			t.Errorf("Read(%s) = %v, want %v", c.path, err, c.want)
		}
		if _, err := w.Write(ctx, c.path, []byte("pwned")); !errors.Is(err, c.want) {
			t.Errorf("Write(%s) = %v, want %v", c.path, err, c.want)
		}
		if err := w.Before(ctx, c.path); !errors.Is(err, c.want) {
			t.Errorf("Before(%s) = %v, want %v", c.path, err, c.want)
		}
	}
	// A link inside is read through, never written through nor replaced.
	if b, err := w.Read("in.md"); err != nil || string(b) != "real" {
		t.Errorf("Read(in.md) = %q, %v", b, err)
	}
	if _, err := w.Write(ctx, "in.md", []byte("x")); !errors.Is(err, workspace.ErrLink) {
		t.Errorf("Write(in.md) = %v, want ErrLink", err)
	}
	if err := w.Before(ctx, "in.md"); !errors.Is(err, workspace.ErrLink) {
		t.Errorf("Before(in.md) = %v, want ErrLink", err)
	}
	if _, err := w.Delete(ctx, "in.md"); !errors.Is(err, workspace.ErrLink) {
		t.Errorf("Delete(in.md) = %v, want ErrLink", err)
	}
	if _, err := w.List("j"); !errors.Is(err, workspace.ErrReserved) {
		t.Errorf("List(j) = %v", err)
	}
	if _, err := w.List("out"); !errors.Is(err, workspace.ErrEscape) {
		t.Errorf("List(out) = %v", err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Fatalf("the file outside was written: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "real.md")); string(b) != "real" {
		t.Fatalf("a link's target was written: %q", b)
	}
}

func TestJournalRollbackDiff(t *testing.T) {
	w, dir := open(t, workspace.Options{})
	ctx := workspace.WithReason(context.Background(), "draft")
	c1 := must[workspace.Change](t)(w.Write(ctx, "notes/a.md", []byte("one\ntwo\nthree\n")))
	c2 := must[workspace.Change](t)(w.Write(ctx, "notes/a.md", []byte("one\n2\nthree\n")))
	c3 := must[workspace.Change](t)(w.Append(ctx, "notes/a.md", []byte("four\n")))
	if c1.ID != 1 || c2.ID != 2 || c3.ID != 3 || c1.Reason != "draft" || c1.Files[0].Before != "" {
		t.Fatalf("changes %+v %+v %+v", c1, c2, c3)
	}
	d := must[string](t)(w.Diff(c2.ID))
	want := "--- a/notes/a.md\n+++ b/notes/a.md\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
	if d != want {
		t.Errorf("diff:\n%s\nwant:\n%s", d, want)
	}
	if _, err := w.Rollback(ctx, c2.ID); err == nil {
		t.Fatal("rollback of change 2 under change 3 accepted")
	} else {
		var ce *workspace.ConflictError
		if !errors.As(err, &ce) || ce.Later != 3 {
			t.Fatalf("rollback 2 = %v", err)
		}
	}
	r := must[workspace.Change](t)(w.RollbackLast(ctx))
	if r.Op != workspace.OpRollback || len(r.Undoes) != 1 || r.Undoes[0] != 3 {
		t.Fatalf("RollbackLast = %+v", r)
	}
	must[workspace.Change](t)(w.Rollback(ctx, c2.ID))
	if b, _ := os.ReadFile(filepath.Join(dir, "notes/a.md")); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("after two rollbacks: %q", b)
	}
	must[workspace.Change](t)(w.RollbackLast(ctx)) // change 1: the file and its directory go
	if _, err := os.Stat(filepath.Join(dir, "notes")); !os.IsNotExist(err) {
		t.Fatalf("notes/ left behind: %v", err)
	}
	// A rollback is undone like any change: this redoes change 1.
	must[workspace.Change](t)(w.Rollback(ctx, 6))
	if b, _ := os.ReadFile(filepath.Join(dir, "notes/a.md")); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("after redo: %q", b)
	}
	c := must[workspace.Change](t)(w.Change(1))
	if c.RolledBackBy != 0 {
		t.Errorf("change 1 rolled back by %d after the redo", c.RolledBackBy)
	}
	if c := must[workspace.Change](t)(w.Change(3)); c.RolledBackBy != 4 {
		t.Errorf("change 3 rolled back by %d, want 4", c.RolledBackBy)
	}
	if _, err := w.Rollback(ctx, 3); err == nil {
		t.Error("a second rollback of change 3 accepted")
	}
	// A file changed outside the journal is not clobbered.
	os.WriteFile(filepath.Join(dir, "notes/a.md"), []byte("by hand"), 0o644)
	var ce *workspace.ConflictError
	if _, err := w.RollbackLast(ctx); !errors.As(err, &ce) || ce.Later != 0 {
		t.Errorf("rollback over a hand edit = %v", err)
	}
}

func TestProtectedFiles(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.json")
	os.WriteFile(pol, []byte(`{"allow":[]}`), 0o644)
	os.MkdirAll(filepath.Join(dir, "state"), 0o755)
	os.Symlink("policy.json", filepath.Join(dir, "p.json"))
	os.Symlink(".", filepath.Join(dir, "here"))
	w, err := workspace.Open(dir, workspace.Options{Protected: []workspace.Protected{
		{Path: pol, What: "the run's policy"}, {Path: filepath.Join(dir, "state"), What: "the run's state"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	var pe *workspace.ProtectedError
	for _, p := range []string{"policy.json", "POLICY.json", "p.json", "here/policy.json", "here/state/x.md", "state/x.md", "state"} {
		if _, err := w.Write(ctx, p, []byte("{}")); !errors.As(err, &pe) {
			t.Errorf("Write(%s) = %v, want a ProtectedError", p, err)
		}
		if _, err := w.Read(p); !errors.As(err, &pe) {
			t.Errorf("Read(%s) = %v, want a ProtectedError", p, err)
		}
		if err := w.Before(ctx, p); !errors.As(err, &pe) {
			t.Errorf("Before(%s) = %v, want a ProtectedError", p, err)
		}
	}
	if _, err := w.Rename(ctx, "policy.json", "q.json"); !errors.As(err, &pe) {
		t.Errorf("Rename(policy.json) = %v", err)
	}
	if b, _ := os.ReadFile(pol); string(b) != `{"allow":[]}` {
		t.Errorf("policy.json = %q", b)
	}
}

func TestReasonIsCapped(t *testing.T) {
	w, _ := open(t, workspace.Options{})
	c, err := w.Write(workspace.WithReason(context.Background(), strings.Repeat("é", 3000)), "a.md", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Reason) > 1004 || !strings.HasPrefix(c.Reason, "éé") {
		t.Errorf("reason of %d bytes kept", len(c.Reason))
	}
}

func TestSetOpensEachDirectoryOnce(t *testing.T) {
	dir := t.TempDir()
	s := workspace.NewSet(workspace.Options{WriteExt: []string{"md"}})
	a, err := s.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Open(dir + "/.")
	if err != nil || a != b {
		t.Fatalf("second Open = %p, %v; want %p", b, err, a)
	}
	if err := a.Before(context.Background(), "x.exe"); err == nil {
		t.Error("the set's options were not applied")
	}
	other := t.TempDir()
	own, err := workspace.Open(other, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(own); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Open(other); got != own {
		t.Error("Open did not return the workspace added")
	}
	if err := s.Add(must[*workspace.Workspace](t)(workspace.Open(dir, workspace.Options{}))); err == nil {
		t.Error("a second workspace of one directory added")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Read("x.md"); err == nil {
		t.Error("the set did not close the workspace added")
	}
	if _, err := a.Read("x.md"); err == nil {
		t.Error("a workspace of a closed set still reads")
	}
	if _, err := s.Open(dir); !errors.Is(err, workspace.ErrClosed) {
		t.Errorf("Open after Close = %v", err)
	}
}
