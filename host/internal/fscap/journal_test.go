package fscap

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// names is a journal that records the names it is given.
type names []string

func (n *names) Before(_ context.Context, rel string) error {
	*n = append(*n, rel)
	return nil
}

// workspaceMount mounts a fresh directory holding a.txt, sub/deep.txt and
// a link subl -> sub, journaled by the returned journal.
func workspaceMount(t *testing.T) (*rootFS, *names, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"a.txt": "a", "sub/deep.txt": "deep"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("sub", filepath.Join(dir, "subl")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	j := &names{}
	r := &rootFS{root: root, journal: j}
	r.own.Begin()
	return r, j, dir
}

// The journal's name of a path: `.` and `..` resolved, never through a
// symbolic link (the file there has another name), never above the root
// nor into the journal's own directory by any spelling, failing as the
// system would for a missing or non-directory component.
func TestWorkspaceName(t *testing.T) {
	r, _, dir := workspaceMount(t)
	r.hidden = ".journal"
	if err := os.Mkdir(filepath.Join(dir, ".journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		in     string
		follow bool
		want   string
		e      experimentalsys.Errno
	}{
		{"a.txt", true, "a.txt", 0},
		{"./a.txt", true, "a.txt", 0},
		{"sub/../a.txt", true, "a.txt", 0},
		{"sub//deep.txt/", true, "sub/deep.txt", 0},
		{"sub/./new.txt", true, "sub/new.txt", 0},
		{"sub/..", true, ".", 0},
		{"", true, ".", 0},
		{"../a.txt", true, "", experimentalsys.EPERM},
		{"sub/../../ws/a.txt", true, "", experimentalsys.EPERM},
		{"subl/deep.txt", false, "", experimentalsys.EPERM},
		{"subl/../a.txt", false, "", experimentalsys.EPERM},
		{"subl", true, "", experimentalsys.EPERM},
		{"subl", false, "subl", 0}, // the link itself, as a delete names it
		{"missing/../a.txt", true, "", experimentalsys.ENOENT},
		{"a.txt/../a.txt", true, "", experimentalsys.ENOTDIR},
		{".journal", false, "", experimentalsys.EACCES},
		{".journal/journal.jsonl", true, "", experimentalsys.EACCES},
		{"sub/../.JOURNAL/x", true, "", experimentalsys.EACCES},
		{"./.journal", false, "", experimentalsys.EACCES},
		{"sub/.journal", true, "", experimentalsys.EACCES},
		{"sub/.Journal./x", false, "", experimentalsys.EACCES},
		{"sub/.journals", true, "sub/.journals", 0},
	} {
		got, e := r.workspaceName(tt.in, tt.follow)
		if got != tt.want || e != tt.e {
			t.Errorf("workspaceName(%q, %v) = %q, %v; want %q, %v", tt.in, tt.follow, got, e, tt.want, tt.e)
		}
	}
	// Every operation goes through it.
	if _, e := r.OpenFile(".journal/x", experimentalsys.O_RDONLY, 0); e != experimentalsys.EACCES {
		t.Errorf("open in the journal's directory: %v", e)
	}
	if _, e := r.Stat(".Journal"); e != experimentalsys.EACCES {
		t.Errorf("stat of the journal's directory: %v", e)
	}
	if e := r.Rename("a.txt", ".journal/a.txt"); e != experimentalsys.EACCES {
		t.Errorf("rename into the journal's directory: %v", e)
	}
	if e := r.Rmdir(".journal"); e != experimentalsys.EACCES {
		t.Errorf("rmdir of the journal's directory: %v", e)
	}
}

// Each file is journaled once per call whatever the spelling, again in
// the next call; a file open since an earlier call is journaled again at
// its first change in this one, and refused once it is no longer at the
// name it was journaled under.
func TestJournalOncePerFilePerCall(t *testing.T) {
	r, j, dir := workspaceMount(t)
	f, e := r.OpenFile("a.txt", experimentalsys.O_RDWR, 0)
	if e != 0 {
		t.Fatal(e)
	}
	defer f.Close()
	for _, p := range []string{"./a.txt", "sub/../a.txt"} {
		g, e := r.OpenFile(p, experimentalsys.O_WRONLY|experimentalsys.O_APPEND, 0)
		if e != 0 {
			t.Fatalf("%s: %v", p, e)
		}
		g.Close()
	}
	if _, e := f.Write([]byte("1")); e != 0 {
		t.Fatal(e)
	}
	if got := *j; len(got) != 1 || got[0] != "a.txt" {
		t.Fatalf("first call journaled %q, want a.txt once", got)
	}

	r.own.Begin() // the next call, the file still open
	if _, e := f.Pwrite([]byte("2"), 1); e != 0 {
		t.Fatal(e)
	}
	if e := f.Truncate(1); e != 0 {
		t.Fatal(e)
	}
	if got := *j; len(got) != 2 || got[1] != "a.txt" {
		t.Fatalf("second call journaled %q, want a.txt again", got)
	}

	// Moved by someone else between calls, another file made in its
	// place: its changes would land in a name nobody journaled.
	if err := os.Rename(filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.own.Begin()
	if _, e := f.Write([]byte("3")); e != experimentalsys.EACCES {
		t.Errorf("write to a file moved since: %v, want EACCES", e)
	}
	if got := *j; len(got) != 2 {
		t.Errorf("journaled %q for a refused write", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(b) != "1" {
		t.Errorf("b.txt holds %q, want 1", b)
	}
}

// A file opened for reading only is not journaled, nor a directory made
// or removed, nor an open bound to fail (a file to make that exists, one
// to write that does not).
func TestJournalOnlyChanges(t *testing.T) {
	r, j, _ := workspaceMount(t)
	f, e := r.OpenFile("a.txt", experimentalsys.O_RDONLY, 0)
	if e != 0 {
		t.Fatal(e)
	}
	f.Close()
	if _, e := r.OpenFile("a.txt", experimentalsys.O_WRONLY|experimentalsys.O_CREAT|experimentalsys.O_EXCL, 0o644); e != experimentalsys.EEXIST {
		t.Errorf("exclusive create of an existing file: %v, want EEXIST", e)
	}
	if _, e := r.OpenFile("missing.txt", experimentalsys.O_WRONLY, 0); e != experimentalsys.ENOENT {
		t.Errorf("write of a missing file: %v, want ENOENT", e)
	}
	if e := r.Mkdir("d", 0o755); e != 0 {
		t.Fatal(e)
	}
	if e := r.Rmdir("d"); e != 0 {
		t.Fatal(e)
	}
	if len(*j) != 0 {
		t.Errorf("journaled %q for a read and a directory", *j)
	}
}
