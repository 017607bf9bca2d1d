package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// fakeJournal records what the host asks it to journal, and what the file
// held at that moment: the before-image it would store.
type fakeJournal struct {
	dir string
	mu  sync.Mutex
	got []string // "REL=CONTENT" or "REL absent", in order
	bad []string // a rel outside the contract
	// refuse refuses the files it names.
	refuse map[string]bool
	// who is the value of whoKey the calls' contexts carried.
	who []any
}

var _ Journal = (*fakeJournal)(nil)

type whoKey struct{}

func (j *fakeJournal) Before(ctx context.Context, rel string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if rel == "" || rel == "." || path.IsAbs(rel) || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") || strings.Contains(rel, `\`) {
		j.bad = append(j.bad, rel)
		return errors.New("bad rel")
	}
	if fi, err := os.Lstat(filepath.Join(j.dir, filepath.FromSlash(rel))); err == nil && fi.IsDir() {
		j.bad = append(j.bad, rel+" (a directory)")
		return errors.New("a directory")
	}
	j.who = append(j.who, ctx.Value(whoKey{}))
	if j.refuse[rel] {
		return fmt.Errorf("extension %s is not allowed here: allowed .md", path.Ext(rel))
	}
	b, err := os.ReadFile(filepath.Join(j.dir, filepath.FromSlash(rel)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		j.got = append(j.got, rel+" absent")
	case err != nil:
		j.got = append(j.got, rel+" unreadable: "+err.Error())
	default:
		j.got = append(j.got, rel+"="+string(b))
	}
	return nil
}

// take returns what was journaled since the last take.
func (j *fakeJournal) take() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	got := j.got
	j.got = nil
	return got
}

// workspaceDir makes a workspace holding the files named, with their
// content.
func workspaceDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loadWorkspace loads fsjournal.wasm with fs.workspace on dir, its
// journal j.
func loadWorkspace(t *testing.T, dir string, j *fakeJournal, opts Options) (*Loaded, *recorder) {
	t.Helper()
	var dirs []string
	var mu sync.Mutex
	opts.Journal = func(d string) (Journal, error) {
		mu.Lock()
		dirs = append(dirs, d)
		mu.Unlock()
		return j, nil
	}
	h, rec := newTestHost(t, opts)
	l := load(t, h, "fsjournal.wasm", Module{Grants: grants(t, "fs.workspace:"+dir)})
	if len(dirs) != 1 || dirs[0] != dir {
		t.Fatalf("Options.Journal opened %q, want once %q", dirs, dir)
	}
	return l, rec
}

type fsOp struct {
	Op   string `json:"op"`
	Path string `json:"path"`
	To   string `json:"to,omitempty"`
	Text string `json:"text,omitempty"`
	At   int64  `json:"at,omitempty"`
}

// runOps calls fsjournal with ops on dir and returns each op's outcome,
// in order ("done", the text read, or the error).
func runOps(ctx context.Context, t *testing.T, l *Loaded, dir string, ops ...fsOp) []string {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"dir": dir, "ops": ops})
	tl, _ := l.Tool("fsjournal")
	res, err := tl.Call(ctx, tool.Call{ID: "c", Name: "fsjournal", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("fsjournal: %v %s", err, res.Text())
	}
	var out []string
	for _, s := range strings.Split(res.Text(), "; ") {
		_, o, _ := strings.Cut(s, ": ")
		out = append(out, o)
	}
	if len(out) != len(ops) {
		t.Fatalf("fsjournal answered %q for %d ops", res.Text(), len(ops))
	}
	return out
}

func wantFiles(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	for name, s := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case s == "" && errors.Is(err, fs.ErrNotExist):
		case s == "":
			t.Errorf("%s exists (%q, %v), want it absent", name, b, err)
		case err != nil || string(b) != s:
			t.Errorf("%s holds %q (%v), want %q", name, b, err, s)
		}
	}
}

func sameList(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

// A module under fs.workspace writes three files, rewrites one, deletes
// one and renames one: the journal is asked for each file once per call,
// before its change (the content it reads then is the before-image), by
// its name in the workspace, with the caller's context.
func TestWorkspaceJournalsEachFileOncePerCall(t *testing.T) {
	t.Parallel()
	dir := workspaceDir(t, map[string]string{"old.txt": "old", "gone.txt": "gone", "move.txt": "move", "keep.txt": "keep"})
	j := &fakeJournal{dir: dir}
	l, rec := loadWorkspace(t, dir, j, Options{})
	ctx := context.WithValue(context.Background(), whoKey{}, "run-1")

	out := runOps(ctx, t, l, dir,
		fsOp{Op: "write", Path: "a.txt", Text: "A1"},
		fsOp{Op: "write", Path: "b.txt", Text: "B1"},
		fsOp{Op: "write", Path: "sub/c.txt", Text: "C1"},
		fsOp{Op: "write", Path: "a.txt", Text: "A2"},
		fsOp{Op: "remove", Path: "gone.txt"},
		fsOp{Op: "rename", Path: "move.txt", To: "moved.txt"},
		fsOp{Op: "append", Path: "a.txt", Text: "+"},
		fsOp{Op: "writeat", Path: "sub/../old.txt", Text: "O", At: 1},
		fsOp{Op: "truncate", Path: "./b.txt", At: 1},
		fsOp{Op: "read", Path: "keep.txt"},
		fsOp{Op: "mkdir", Path: "newdir"},
		fsOp{Op: "remove", Path: "newdir"},
	)
	for i, o := range out {
		if o != "done" && !(i == 9 && o == "keep") {
			t.Errorf("op %d: %s", i, o)
		}
	}
	want := []string{"a.txt absent", "b.txt absent", "sub/c.txt absent", "gone.txt=gone", "move.txt=move", "moved.txt absent", "old.txt=old"}
	if got := j.take(); !sameList(got, want) {
		t.Errorf("journaled\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantFiles(t, dir, map[string]string{"a.txt": "A2+", "b.txt": "B", "sub/c.txt": "C1", "gone.txt": "", "move.txt": "",
		"moved.txt": "move", "old.txt": "oOd", "keep.txt": "keep"})
	for _, w := range j.who {
		if w != "run-1" {
			t.Errorf("the journal saw the caller %v, want run-1", w)
		}
	}
	if len(j.bad) > 0 {
		t.Errorf("the journal was given %q", j.bad)
	}
	if r := rec.last(t); len(r.Denied) > 0 || !slicesContain(r.Grants, "fs.workspace:"+dir) {
		t.Errorf("record: denied %q, grants %q", r.Denied, r.Grants)
	}

	// The next call journals again what it changes, from where the last
	// one left it; opening for writing counts as a change.
	runOps(ctx, t, l, dir, fsOp{Op: "write", Path: "a.txt", Text: "A3"}, fsOp{Op: "open", Path: "keep.txt"}, fsOp{Op: "write", Path: "a.txt", Text: "A4"})
	if got, want := j.take(), []string{"a.txt=A2+", "keep.txt=keep"}; !sameList(got, want) {
		t.Errorf("second call journaled %q, want %q", got, want)
	}
}

func slicesContain(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// A journal's error refuses the change: the guest is told EACCES, nothing
// changes, the call goes on, and its record lists the refusal with the
// journal's reason.
func TestWorkspaceJournalRefusalRefusesTheChange(t *testing.T) {
	t.Parallel()
	dir := workspaceDir(t, map[string]string{"keep.exe": "keep", "src.md": "src", "dst.exe": "dst"})
	j := &fakeJournal{dir: dir, refuse: map[string]bool{"new.exe": true, "keep.exe": true, "dst.exe": true}}
	l, rec := loadWorkspace(t, dir, j, Options{})
	out := runOps(context.Background(), t, l, dir,
		fsOp{Op: "write", Path: "new.exe", Text: "virus"},
		fsOp{Op: "write", Path: "keep.exe", Text: "changed"},
		fsOp{Op: "append", Path: "keep.exe", Text: "more"},
		fsOp{Op: "truncate", Path: "keep.exe"},
		fsOp{Op: "remove", Path: "keep.exe"},
		fsOp{Op: "rename", Path: "src.md", To: "dst.exe"},
		fsOp{Op: "write", Path: "ok.md", Text: "fine"},
	)
	for i, o := range out[:6] {
		if o != "Permission denied" {
			t.Errorf("op %d: %q, want Permission denied", i, o)
		}
	}
	if out[6] != "done" {
		t.Errorf("a write the journal allows, after refusals: %q", out[6])
	}
	wantFiles(t, dir, map[string]string{"new.exe": "", "keep.exe": "keep", "src.md": "src", "dst.exe": "dst", "ok.md": "fine"})
	r := rec.last(t)
	if r.Outcome != OutcomeOK || len(r.Denied) != 6 || !strings.Contains(r.Denied[0], "fs.workspace: change of new.exe refused: extension .exe is not allowed here") {
		t.Errorf("record: outcome %s, denied %q", r.Outcome, r.Denied)
	}
}

// What the journal could not record is refused under fs.workspace: a hard
// link (made by the guest, or by anyone before), a write through a
// symbolic link or a path that goes through one, a path out of the
// workspace, a directory's rename; and the journal's own directory is
// out of reach. Nothing of it changes a file, and the journal is never
// asked about a name outside the workspace, nor about a directory.
func TestWorkspaceRefusesWhatTheJournalCannotRecord(t *testing.T) {
	t.Parallel()
	dir := workspaceDir(t, map[string]string{"a.txt": "a", "sub/deep.txt": "deep", "outside-name.txt": "x"})
	if err := os.Mkdir(filepath.Join(dir, JournalDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, JournalDir, "journal.jsonl"), []byte("entries"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(filepath.Dir(dir), "outside.txt")
	if err := os.WriteFile(outside, []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"link.txt": "a.txt", "subl": "sub"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(dir, "outside-name.txt"), outside+".hard"); err != nil {
		t.Fatal(err)
	}
	j := &fakeJournal{dir: dir}
	l, rec := loadWorkspace(t, dir, j, Options{})
	out := runOps(context.Background(), t, l, dir,
		fsOp{Op: "link", Path: "a.txt", To: "b.txt"},
		fsOp{Op: "write", Path: "link.txt", Text: "through"},
		fsOp{Op: "write", Path: "subl/deep.txt", Text: "through"},
		fsOp{Op: "write", Path: "outside-name.txt", Text: "through"},
		fsOp{Op: "rename", Path: "sub", To: "sub2"},
		fsOp{Op: "write", Path: "../outside.txt", Text: "escaped"},
		fsOp{Op: "write", Path: "sub", Text: "over a directory"},
		fsOp{Op: "rename", Path: "a.txt", To: "sub"},
		fsOp{Op: "write", Path: JournalDir + "/journal.jsonl", Text: "forged"},
		fsOp{Op: "read", Path: JournalDir + "/journal.jsonl"},
		fsOp{Op: "remove", Path: JournalDir + "/journal.jsonl"},
		fsOp{Op: "rename", Path: "a.txt", To: strings.ToUpper(JournalDir) + "/blob"},
	)
	for i, o := range out {
		if o == "done" {
			t.Errorf("op %d done, want it refused", i)
		}
	}
	wantFiles(t, dir, map[string]string{"a.txt": "a", "b.txt": "", "sub/deep.txt": "deep", "outside-name.txt": "x", "sub2": "",
		JournalDir + "/journal.jsonl": "entries", JournalDir + "/blob": ""})
	wantFiles(t, filepath.Dir(dir), map[string]string{"outside.txt": "outside"})
	if got := j.take(); len(got) > 0 || len(j.bad) > 0 {
		t.Errorf("journaled %q (bad %q), want nothing", got, j.bad)
	}
	if r := rec.last(t); len(r.Denied) < 5 {
		t.Errorf("record lists %d refusals: %q", len(r.Denied), r.Denied)
	}
}

// Without Options.Journal a module with fs.workspace does not load, and the
// error says what to set; a journal that fails to open refuses it too.
func TestWorkspaceNeedsAJournal(t *testing.T) {
	t.Parallel()
	dir := workspaceDir(t, nil)
	h, _ := newTestHost(t, Options{})
	_, err := h.Load(context.Background(), Module{Name: "fsjournal", Bytes: wasmFile(t, "fsjournal.wasm"),
		Sidecar: mustRead(t, "fsjournal.tool.json"), Grants: grants(t, "fs.workspace:"+dir)})
	if !errors.Is(err, ErrNoJournal) || !strings.Contains(err.Error(), "set host.Options.Journal") {
		t.Errorf("load without a journal: %v, want ErrNoJournal saying what to set", err)
	}
	h2, _ := newTestHost(t, Options{Journal: func(string) (Journal, error) { return nil, errors.New("journal locked") }})
	_, err = h2.Load(context.Background(), Module{Name: "fsjournal", Bytes: wasmFile(t, "fsjournal.wasm"),
		Sidecar: mustRead(t, "fsjournal.tool.json"), Grants: grants(t, "fs.workspace:"+dir)})
	if err == nil || !strings.Contains(err.Error(), "journal locked") {
		t.Errorf("load with a journal that fails: %v", err)
	}
}

// A protected directory refuses fs.workspace as it refuses fs.write.
func TestWorkspaceGrantRefusedByProtected(t *testing.T) {
	t.Parallel()
	dir := workspaceDir(t, nil)
	h, _ := newTestHost(t, Options{Journal: func(string) (Journal, error) { return &fakeJournal{}, nil },
		Protected: []manifest.Protected{{Dir: filepath.Join(dir, "sub"), What: "the plugins directory"}}})
	_, err := h.Load(context.Background(), Module{Name: "fsjournal", Bytes: wasmFile(t, "fsjournal.wasm"),
		Sidecar: mustRead(t, "fsjournal.tool.json"), Grants: grants(t, "fs.workspace:"+dir)})
	var pe *manifest.ProtectedError
	if !errors.As(err, &pe) {
		t.Errorf("fs.workspace over a protected directory: %v, want a *manifest.ProtectedError", err)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Under fs.workspace the files that govern a run stay out of reach as
// under fs.write (the same attacks, the same refusals), and the journal
// is asked about none of them: only the files the module did change.
func TestWorkspaceKeepsGoverningFilesOut(t *testing.T) {
	t.Parallel()
	dir, protected := governedWorkspace(t)
	j := &fakeJournal{dir: dir}
	h, _ := newTestHost(t, Options{Protected: protected, Journal: func(string) (Journal, error) { return j, nil }})
	l := load(t, h, "fsgovern.wasm", Module{Grants: grants(t, "fs.workspace:"+dir)})
	res := call(t, l, "fsgovern", `{"dir":"`+dir+`"}`)
	if res.IsError {
		t.Fatalf("fsgovern: %s", res.Text())
	}
	got := map[string]string{}
	for _, s := range strings.Split(res.Text(), "; ") {
		step, outcome, _ := strings.Cut(s, ": ")
		got[step] = outcome
	}
	for step, o := range got {
		// WASI has no chmod: Go's wasip1 Chmod does nothing, and succeeds.
		want := step == "read backend" || step == "create run.sh" || step == "chmod run.sh" || step == "write decoy.json"
		if (o == "done") != want {
			t.Errorf("%s: %q, want done %v", step, o, want)
		}
	}
	if got, want := j.take(), []string{"run.sh absent", "decoy.json=decoy"}; !sameList(got, want) {
		t.Errorf("journaled %q, want %q", got, want)
	}
	wantFiles(t, dir, map[string]string{"policy.json": `{"rules":[{"tool":"*","action":"approve"}]}`, "cfg/agent.yaml": "provider: openai\n",
		"sessions.db": "SQLite format 3", "decoy.json": "pwned", "backend": "#!/bin/sh\necho real backend\n"})
}

// readFence is a journal that also fences reads, allowing .md only.
type readFence struct{ fakeJournal }

func (f *readFence) CheckRead(_ context.Context, rel string) error {
	if path.Ext(rel) != ".md" {
		return fmt.Errorf("extension %s is not allowed here: allowed .md", path.Ext(rel))
	}
	return nil
}

var _ ReadChecker = (*readFence)(nil)

// A journal that fences reads (ReadChecker) refuses what a workspace's
// read allowlist refuses: an open that can read a file (for reading, or
// reading and writing) fails EACCES, the call goes on, and its record
// lists the refusal; a write-only open, a directory and a new file pass.
func TestWorkspaceReadFence(t *testing.T) {
	t.Parallel()
	dir := workspaceDir(t, map[string]string{"notes.md": "notes", "secret.key": "KEY"})
	j := &readFence{fakeJournal{dir: dir}}
	h, rec := newTestHost(t, Options{Journal: func(string) (Journal, error) { return j, nil }})
	l := load(t, h, "fsjournal.wasm", Module{Grants: grants(t, "fs.workspace:"+dir)})
	out := runOps(context.Background(), t, l, dir,
		fsOp{Op: "read", Path: "notes.md"},
		fsOp{Op: "read", Path: "secret.key"},
		fsOp{Op: "writeat", Path: "secret.key", Text: "X"},
		fsOp{Op: "write", Path: "secret.key", Text: "replaced"},
		fsOp{Op: "write", Path: "new.txt", Text: "new"},
		fsOp{Op: "mkdir", Path: "d"},
	)
	want := []string{"notes", "Permission denied", "Permission denied", "done", "done", "done"}
	if !sameList(out, want) {
		t.Errorf("ops: %q, want %q", out, want)
	}
	wantFiles(t, dir, map[string]string{"secret.key": "replaced", "new.txt": "new"})
	if r := rec.last(t); len(r.Denied) != 2 || !strings.Contains(r.Denied[0], "fs.workspace: read of secret.key refused: extension .key is not allowed here") {
		t.Errorf("record: denied %q", r.Denied)
	}
}
