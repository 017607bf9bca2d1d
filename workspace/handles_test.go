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

// TestKeptHandlesHoldTheFence swaps links in under the directories a
// workspace keeps open, and under those it does not, between writes: a
// kept handle follows the directory it opened, never a link put in its
// place, and a directory of the workspace is reached afresh each time.
func TestKeptHandlesHoldTheFence(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	unchanged := func(t *testing.T) {
		t.Helper()
		if es, _ := os.ReadDir(outside); len(es) != 0 {
			t.Fatalf("%d entries written outside the workspace", len(es))
		}
	}

	t.Run("root", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "ws")
		os.Mkdir(dir, 0o755)
		w := must[*workspace.Workspace](t)(workspace.Open(dir, workspace.Options{}))
		defer w.Close()
		must[workspace.Change](t)(w.Write(ctx, "a.md", []byte("1")))
		moved := filepath.Join(parent, "moved")
		if err := os.Rename(dir, moved); err != nil {
			t.Fatal(err)
		}
		os.Symlink(outside, dir)
		must[workspace.Change](t)(w.Write(ctx, "a.md", []byte("2")))
		must[workspace.Change](t)(w.Write(ctx, "b.md", []byte("3")))
		unchanged(t)
		if b, _ := os.ReadFile(filepath.Join(moved, "a.md")); string(b) != "2" {
			t.Errorf("the workspace's own directory holds a.md = %q", b)
		}
		must[workspace.Change](t)(w.RollbackLast(ctx))
		unchanged(t)
	})

	for _, c := range []struct {
		name   string
		target func(dir string) string
		want   error
	}{
		{"subdir to outside", func(string) string { return outside }, workspace.ErrEscape},
		{"subdir to journal", func(string) string { return workspace.JournalDir }, workspace.ErrReserved},
		{"subdir to journal tmp", func(string) string { return workspace.JournalDir + "/tmp" }, workspace.ErrReserved},
		{"subdir to journal blobs", func(string) string { return workspace.JournalDir + "/blobs" }, workspace.ErrReserved},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, dir := open(t, workspace.Options{})
			must[workspace.Change](t)(w.Write(ctx, "d/x.md", []byte("1")))
			jf := filepath.Join(dir, workspace.JournalDir, "journal.jsonl")
			journal, _ := os.ReadFile(jf)
			os.Rename(filepath.Join(dir, "d"), filepath.Join(dir, "d.old"))
			if err := os.Symlink(c.target(dir), filepath.Join(dir, "d")); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{"d/x.md", "d/journal.jsonl", "d/lock"} {
				if _, err := w.Write(ctx, p, []byte("pwned")); !errors.Is(err, c.want) {
					t.Errorf("Write(%s) = %v, want %v", p, err, c.want)
				}
				if _, err := w.Rename(ctx, "d.old/x.md", p); !errors.Is(err, c.want) {
					t.Errorf("Rename(d.old/x.md, %s) = %v, want %v", p, err, c.want)
				}
			}
			unchanged(t)
			if b, _ := os.ReadFile(jf); string(b) != string(journal) {
				t.Errorf("the journal changed:\n%s", b)
			}
			for _, sub := range []string{"tmp", "blobs"} {
				es, _ := os.ReadDir(filepath.Join(dir, workspace.JournalDir, sub))
				for _, e := range es {
					if !e.IsDir() {
						t.Errorf("a file %s/%s was placed in the journal", sub, e.Name())
					}
				}
			}
		})
	}

	t.Run("journal tmp", func(t *testing.T) {
		w, dir := open(t, workspace.Options{})
		must[workspace.Change](t)(w.Write(ctx, "a.md", []byte("1")))
		tmp := filepath.Join(dir, workspace.JournalDir, "tmp")
		os.Rename(tmp, tmp+".old")
		os.Symlink(outside, tmp)
		// The kept handle is the directory Open found, not the link.
		must[workspace.Change](t)(w.Write(ctx, "a.md", []byte("2")))
		unchanged(t)
		if b, _ := os.ReadFile(filepath.Join(dir, "a.md")); string(b) != "2" {
			t.Errorf("a.md = %q", b)
		}
		w.Close()
		// Opened again, the link is refused.
		if _, err := workspace.Open(dir, workspace.Options{}); err == nil {
			t.Error("Open with a link as the journal's tmp directory succeeded")
		}
	})
}

// TestSyncOption: with Options.Sync a change syncs what it wrote, in
// order; without it, nothing.
func TestSyncOption(t *testing.T) {
	ctx := context.Background()
	w, _ := open(t, workspace.Options{})
	before := workspace.Syncs()
	must[workspace.Change](t)(w.Write(ctx, "a.md", []byte("unsynced")))
	must[workspace.Change](t)(w.Write(ctx, "a.md", []byte("unsynced again")))
	if n := workspace.Syncs() - before; n != 0 {
		t.Errorf("%d fsyncs for two changes without Options.Sync", n)
	}
	ws, _ := open(t, workspace.Options{Sync: true})
	before = workspace.Syncs()
	must[workspace.Change](t)(ws.Write(ctx, "a.md", []byte("synced")))
	// A new file: the journal line that begins the change, the file.
	if n := workspace.Syncs() - before; n != 2 {
		t.Errorf("%d fsyncs for a new file with Options.Sync, want 2", n)
	}
	before = workspace.Syncs()
	must[workspace.Change](t)(ws.Write(ctx, "a.md", []byte("synced again")))
	// The before-image, the store's new directory and the image's entry
	// in it, the journal line, the file.
	if n := workspace.Syncs() - before; n != 5 {
		t.Errorf("%d fsyncs for a rewrite with Options.Sync, want 5", n)
	}
}

// TestPlacedDirectoryCheckedAgain swaps a directory for a link to the
// journal's tmp after the fence looked at the path and before the file
// is placed: the directory the file would land in is refused by its
// identity, and once the link is gone the change is undone.
func TestPlacedDirectoryCheckedAgain(t *testing.T) {
	w, dir := open(t, workspace.Options{})
	ctx := context.Background()
	must[workspace.Change](t)(w.Write(ctx, "d/x.md", []byte("1")))
	d := filepath.Join(dir, "d")
	workspace.SetCrashHook(func(stage string) {
		if stage == "begun" {
			os.Rename(d, d+".old")
			os.Symlink(workspace.JournalDir+"/tmp", d)
		}
	})
	_, err := w.Write(ctx, "d/x.md", []byte("2"))
	workspace.SetCrashHook(nil)
	if !errors.Is(err, workspace.ErrReserved) {
		t.Errorf("a write whose directory became the journal's = %v", err)
	}
	es, _ := os.ReadDir(filepath.Join(dir, workspace.JournalDir, "tmp"))
	for _, e := range es {
		t.Errorf("%s was placed in the journal's tmp", e.Name())
	}
	os.Remove(d)
	os.Rename(d+".old", d)
	c := must[workspace.Change](t)(w.Write(ctx, "d/x.md", []byte("3")))
	if prev := must[workspace.Change](t)(w.Change(c.ID - 1)); prev.State != workspace.Aborted {
		t.Errorf("the refused change is %s, want aborted", prev.State)
	}
	checkConsistent(t, w, dir)
}

// TestSwapPutsBackWhatItDidNotRead replaces a file from outside between
// the read of its before-image and the exchange: what the exchange took
// out is not what was read, so it is put back untouched and the change
// aborted.
func TestSwapPutsBackWhatItDidNotRead(t *testing.T) {
	w, dir := open(t, workspace.Options{})
	ctx := context.Background()
	must[workspace.Change](t)(w.Write(ctx, "a.md", []byte("one")))
	workspace.SetCrashHook(func(stage string) {
		if stage == "begun" {
			os.WriteFile(filepath.Join(dir, "b.md"), []byte("from outside"), 0o644)
			os.Rename(filepath.Join(dir, "b.md"), filepath.Join(dir, "a.md"))
		}
	})
	_, err := w.Write(ctx, "a.md", []byte("two"))
	workspace.SetCrashHook(nil)
	if err == nil || !strings.Contains(err.Error(), "changed while it was being written") {
		t.Errorf("a write racing an outside replace = %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.md")); string(b) != "from outside" {
		t.Errorf("a.md = %q, want the outside content put back", b)
	}
	if c := must[workspace.Change](t)(w.Change(2)); c.State != workspace.Aborted {
		t.Errorf("the change is %s, want aborted", c.State)
	}
	if es, _ := os.ReadDir(filepath.Join(dir, workspace.JournalDir, "tmp")); len(es) != 0 {
		t.Errorf("%d temporary files left", len(es))
	}
}

// TestSwapRefusedFallsBackToACopy: where the file system refuses to
// exchange two files, the first rewrite learns it and copies the
// before-image instead; rollback and the journal are the same.
func TestSwapRefusedFallsBackToACopy(t *testing.T) {
	w, dir := open(t, workspace.Options{})
	ctx := runCtx("r1")
	tries := 0
	workspace.SetSwapHook(func() bool { tries++; return true })
	defer workspace.SetSwapHook(nil)
	for i := range 5 {
		must[workspace.Change](t)(w.Write(ctx, "a.md", []byte(strings.Repeat("x", i+1))))
	}
	if tries != 1 {
		t.Errorf("%d exchanges tried, want 1 (then the copy)", tries)
	}
	checkConsistent(t, w, dir)
	must[workspace.Change](t)(w.RollbackRun(context.Background(), "r1"))
	if es := filesOnly(tree(t, dir)); len(es) != 0 {
		t.Errorf("files left after RollbackRun: %v", es)
	}
}

// TestDiffReadsTheResultFromTheFile: a write keeps no after-image, so
// Diff shows the file's content while it holds the change's result, and
// says so when it was changed outside since.
func TestDiffReadsTheResultFromTheFile(t *testing.T) {
	w, dir := open(t, workspace.Options{})
	ctx := context.Background()
	must[workspace.Change](t)(w.Write(ctx, "a.md", []byte("one\n")))
	c := must[workspace.Change](t)(w.Write(ctx, "a.md", []byte("two\n")))
	d := must[string](t)(w.Diff(c.ID))
	if !strings.Contains(d, "-one\n+two\n") {
		t.Errorf("Diff = %q", d)
	}
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("by hand\n"), 0o644)
	if _, err := w.Diff(c.ID); err == nil || !strings.Contains(err.Error(), "changed outside the workspace") {
		t.Errorf("Diff of a change whose result was overwritten by hand = %v", err)
	}
	// The next change stores what the file holds, so earlier results
	// stay shown.
	must[workspace.Change](t)(w.Write(ctx, "a.md", []byte("three\n")))
	c1 := must[string](t)(w.Diff(1))
	if !strings.Contains(c1, "+one\n") {
		t.Errorf("Diff(1) = %q", c1)
	}
}
