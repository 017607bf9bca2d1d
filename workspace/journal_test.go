package workspace_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/loopwire"
	"github.com/autoagent-go/autoagent/workspace"
)

// runCtx is a context of a tool call in run.
func runCtx(run string) context.Context {
	ctx, _ := loopwire.RemoteCallContext(context.Background(), loopwire.Call{RunID: run, CallID: "c1", Name: "write_file"}, false)
	return ctx
}

// tree is a directory's files (content) and directories ("/" suffix),
// the journal's directory aside.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == workspace.JournalDir {
			return filepath.SkipDir
		}
		if d.IsDir() {
			m[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		m[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func filesOnly(m map[string]string) map[string]string {
	maps.DeleteFunc(m, func(k, _ string) bool { return strings.HasSuffix(k, "/") })
	return m
}

func diffTrees(a, b map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if v, ok := b[k]; !ok {
			out = append(out, "only before: "+k)
		} else if v != a[k] {
			out = append(out, "differs: "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "only after: "+k)
		}
	}
	return strings.Join(out, "\n")
}

// TestRollbackRunRestoresTree runs 1 000 random operations in a run,
// among changes of another run, then rolls the run back: the tree is
// byte for byte what it was, and the other run's work stands.
func TestRollbackRunRestoresTree(t *testing.T) {
	w, dir := open(t, workspace.Options{})
	os.MkdirAll(filepath.Join(dir, "keep/empty"), 0o755)
	os.WriteFile(filepath.Join(dir, "keep/a.md"), []byte("kept"), 0o644)
	os.WriteFile(filepath.Join(dir, "p0.md"), []byte("seed"), 0o644)
	other := runCtx("other")
	must[workspace.Change](t)(w.Write(other, "other.md", []byte("other run")))
	before := tree(t, dir)

	rng := rand.New(rand.NewPCG(1, 2))
	ctx := runCtx("r1")
	paths := []string{"p0.md", "p1.md", "d/p2.md", "d/e/p3.md", "keep/a.md", "x/y/z.md", "d/p4.md"}
	ok := 0
	for i := range 1000 {
		p := paths[rng.IntN(len(paths))]
		var err error
		switch rng.IntN(10) {
		case 0, 1, 2, 3:
			_, err = w.Write(ctx, p, fmt.Appendf(nil, "v%d of %s\n", rng.IntN(20), p))
		case 4, 5:
			_, err = w.Append(ctx, p, fmt.Appendf(nil, "line %d\n", i))
		case 6:
			_, err = w.Delete(ctx, p)
		case 7:
			_, err = w.Rename(ctx, p, paths[rng.IntN(len(paths))])
		case 8:
			_, err = w.RollbackLast(ctx)
		case 9:
			_, err = w.Write(ctx, p, nil)
		}
		if err == nil {
			ok++
		}
	}
	if ok < 700 {
		t.Fatalf("only %d of 1000 operations succeeded", ok)
	}
	if d := diffTrees(before, tree(t, dir)); d == "" {
		t.Fatal("the run changed nothing")
	}
	end := tree(t, dir)
	rr := must[workspace.Change](t)(w.RollbackRun(context.Background(), "r1"))
	if d := diffTrees(before, tree(t, dir)); d != "" {
		t.Fatalf("after RollbackRun:\n%s", d)
	}
	if _, err := w.RollbackRun(context.Background(), "r1"); !errors.Is(err, workspace.ErrNoChange) {
		t.Errorf("a second RollbackRun = %v", err)
	}
	// The rollback of the rollback brings the run's files back (empty
	// directories are not journaled).
	must[workspace.Change](t)(w.Rollback(context.Background(), rr.ID))
	if d := diffTrees(filesOnly(end), filesOnly(tree(t, dir))); d != "" {
		t.Errorf("redoing the run:\n%s", d)
	}
	must[workspace.Change](t)(w.RollbackRun(context.Background(), "r1"))
	if d := diffTrees(before, tree(t, dir)); d != "" {
		t.Fatalf("after the second RollbackRun:\n%s", d)
	}
}

// TestJournalSurvivesReopen: a second Workspace on the directory sees
// every change, in order, with its who and reason.
func TestJournalSurvivesReopen(t *testing.T) {
	w, dir := open(t, workspace.Options{})
	ctx := workspace.WithReason(runCtx("r9"), "because")
	for i := range 5 {
		must[workspace.Change](t)(w.Write(ctx, "f.md", []byte(strconv.Itoa(i))))
	}
	w.Close()
	w2 := must[*workspace.Workspace](t)(workspace.Open(dir, workspace.Options{}))
	defer w2.Close()
	n := 0
	for c, err := range w2.Changes(workspace.Filter{RunID: "r9"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if c.ID != n || c.RunID != "r9" || c.CallID != "c1" || c.Tool != "write_file" || c.Reason != "because" || c.State != workspace.Done {
			t.Errorf("change %+v", c)
		}
	}
	if n != 5 {
		t.Errorf("%d changes after reopening, want 5", n)
	}
}

// TestBeforeImagesAreContentAddressed: a file rewritten 1 000 times
// between two contents stores two before-images.
func TestBeforeImagesAreContentAddressed(t *testing.T) {
	w, dir := open(t, workspace.Options{})
	ctx := context.Background()
	for i := range 1000 {
		must[workspace.Change](t)(w.Write(ctx, "f.md", []byte(strconv.Itoa(i%2))))
	}
	n := 0
	filepath.WalkDir(filepath.Join(dir, workspace.JournalDir, "blobs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	if n != 2 {
		t.Errorf("%d blobs stored for two distinct versions", n)
	}
}

// TestTornJournalLineIgnored: a last line cut mid-way is dropped on
// Open and the journal goes on.
func TestTornJournalLineIgnored(t *testing.T) {
	w, dir := open(t, workspace.Options{})
	ctx := context.Background()
	must[workspace.Change](t)(w.Write(ctx, "a.md", []byte("a")))
	w.Close()
	jf := filepath.Join(dir, workspace.JournalDir, "journal.jsonl")
	f, _ := os.OpenFile(jf, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"k":"begin","id":2,"change":{"id":2,"op":"wr`)
	f.Close()
	w2 := must[*workspace.Workspace](t)(workspace.Open(dir, workspace.Options{}))
	defer w2.Close()
	c := must[workspace.Change](t)(w2.Write(ctx, "b.md", []byte("b")))
	if c.ID != 2 {
		t.Errorf("next change %d, want 2", c.ID)
	}
	// A damaged line that is not the last is an error, not data loss.
	w2.Close()
	b, _ := os.ReadFile(jf)
	os.WriteFile(jf, bytes.Replace(b, []byte(`"k":"done","id":1`), []byte(`"k":"dXne","id":1`), 1), 0o644)
	if _, err := workspace.Open(dir, workspace.Options{}); err == nil || !strings.Contains(err.Error(), "journal corrupt") {
		t.Errorf("Open of a corrupt journal = %v", err)
	}
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// checkConsistent fails t unless every file the journal names holds
// what the journal says it holds: the after-image of its newest standing
// change.
func checkConsistent(t *testing.T, w *workspace.Workspace, dir string) int {
	t.Helper()
	last := map[string]workspace.FileChange{}
	n := 0
	for c, err := range w.Changes(workspace.Filter{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if c.State == workspace.Pending {
			t.Errorf("change %d pending after Open", c.ID)
		}
		if c.State != workspace.Done {
			continue
		}
		for _, f := range c.Files {
			last[f.Path] = f
		}
	}
	for p, f := range last {
		b, err := os.ReadFile(filepath.Join(dir, p))
		got := ""
		if err == nil {
			got = sha(string(b))
		}
		if got != f.After {
			t.Errorf("%s holds %q, not the after-image of its last change", p, b)
		}
	}
	return n
}

const childEnv = "WORKSPACE_TEST_CHILD"

// TestMain runs the child processes of the crash and concurrency tests.
func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		child(spec)
		return
	}
	os.Exit(m.Run())
}

// child writes to the workspace as spec says:
// "mode,dir,run,n[,stage]"; mode "write" writes n times, "crash" also
// kills itself at the nth commit's stage; a "+sync" suffix sets
// Options.Sync.
func child(spec string) {
	f := strings.Split(spec, ",")
	mode, dir, run := f[0], f[1], f[2]
	mode, sync := strings.CutSuffix(mode, "+sync")
	n, _ := strconv.Atoi(f[3])
	if mode == "crash" {
		k, at := 0, n
		workspace.SetCrashHook(func(stage string) {
			if stage == f[4] {
				if k++; k == at {
					killSelf()
				}
			}
		})
		n *= 2
	}
	w, err := workspace.Open(dir, workspace.Options{Sync: sync})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := runCtx(run)
	for i := range n {
		p := fmt.Sprintf("f%d.md", i%10)
		data := bytes.Repeat(fmt.Appendf(nil, "%s %d\n", run, i), 1+i%50)
		if _, err := w.Write(ctx, p, data); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
}

func startChild(t *testing.T, spec string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+spec)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestKillAtCrashPoints kills a writer at each of commit's crash points,
// deterministically: Open undoes the interrupted change and the files
// match the journal. "swapped" is between the exchange of the new file
// with the old one and the old one's move into the store, which only
// rewrites pass (the child's first ten writes make their files).
func TestKillAtCrashPoints(t *testing.T) {
	for _, mode := range []string{"crash", "crash+sync"} {
		for _, stage := range []string{"begun", "swapped", "applied"} {
			if stage == "swapped" && mode == "crash+sync" {
				continue // a synced change copies its before-image
			}
			t.Run(mode+"/"+stage, func(t *testing.T) { killAt(t, mode, stage) })
		}
	}
}

func killAt(t *testing.T, mode, stage string) {
	dir := t.TempDir()
	cmd := startChild(t, mode+","+dir+",r1,37,"+stage)
	if err := cmd.Wait(); err == nil {
		t.Fatal("the child was not killed")
	}
	// A crash between a temporary file's write and its rename leaves it
	// behind.
	os.WriteFile(filepath.Join(dir, workspace.JournalDir, "tmp", "0123456789abcdef"), []byte("half"), 0o644)
	w := must[*workspace.Workspace](t)(workspace.Open(dir, workspace.Options{}))
	defer w.Close()
	if es, _ := os.ReadDir(filepath.Join(dir, workspace.JournalDir, "tmp")); len(es) != 0 {
		t.Errorf("%d temporary files left after Open", len(es))
	}
	want := 37
	if stage == "swapped" {
		want += 10
	}
	if n := checkConsistent(t, w, dir); n != want {
		t.Errorf("%d changes in the journal, want %d", n, want)
	}
	c := must[workspace.Change](t)(w.Change(want))
	if c.State != workspace.Aborted {
		t.Errorf("the interrupted change is %s, want aborted", c.State)
	}
}

// TestKill9MidWrites kills a process writing 1 000 times at random
// moments: every file is before or after its change and the journal
// agrees with the files.
func TestKill9MidWrites(t *testing.T) {
	for i := range 3 {
		dir := t.TempDir()
		cmd := startChild(t, "write,"+dir+",r1,1000")
		jf := filepath.Join(dir, workspace.JournalDir, "journal.jsonl")
		want := int64(20_000 + i*40_000) // bytes of journal: some dozens of changes in
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			if fi, err := os.Stat(jf); err == nil && fi.Size() >= want {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Kill()
		err := cmd.Wait()
		w := must[*workspace.Workspace](t)(workspace.Open(dir, workspace.Options{}))
		n := checkConsistent(t, w, dir)
		w.Close()
		if err == nil || n >= 1000 {
			t.Logf("round %d: the child finished before the kill (%d changes)", i, n)
		} else {
			t.Logf("round %d: killed after %d changes", i, n)
		}
	}
}

// TestKill9AtRandomMoments kills writers at random moments, a dozen
// times, without and with Options.Sync: after Open each file holds what
// the journal says, and rolling the run back removes every file it
// wrote, so each image the journal names is whole.
func TestKill9AtRandomMoments(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	killed := 0
	for i := range 12 {
		mode, want := "write", int64(rng.IntN(200_000)) // bytes of journal: up to some hundreds of changes in
		if i%4 == 3 {
			mode, want = mode+"+sync", want/10 // a synced change costs ten times more
		}
		dir := t.TempDir()
		cmd := startChild(t, mode+","+dir+",r1,1000")
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		jf := filepath.Join(dir, workspace.JournalDir, "journal.jsonl")
		var err error
	poll:
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
			if fi, err := os.Stat(jf); err == nil && fi.Size() >= want {
				break
			}
			select {
			case err = <-exited:
				exited <- err
				break poll
			case <-time.After(time.Duration(rng.IntN(300)) * time.Microsecond):
			}
		}
		cmd.Process.Kill()
		err = <-exited
		w := must[*workspace.Workspace](t)(workspace.Open(dir, workspace.Options{}))
		n := checkConsistent(t, w, dir)
		if err != nil && n < 1000 {
			killed++
		}
		if _, err := w.RollbackRun(context.Background(), "r1"); err != nil && !errors.Is(err, workspace.ErrNoChange) {
			t.Errorf("round %d (%d changes): RollbackRun: %v", i, n, err)
		}
		if left := filesOnly(tree(t, dir)); len(left) != 0 {
			t.Errorf("round %d (%d changes): %d files left after RollbackRun", i, n, len(left))
		}
		w.Close()
	}
	t.Logf("%d of 12 writers killed mid-way", killed)
}

// TestTwoProcesses: two processes writing one workspace, to the same
// files, lose no journal entry.
func TestTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	w := must[*workspace.Workspace](t)(workspace.Open(dir, workspace.Options{}))
	defer w.Close()
	a := startChild(t, "write,"+dir+",ra,200")
	b := startChild(t, "write,"+dir+",rb,200")
	ctx := runCtx("rc")
	for i := range 50 {
		must[workspace.Change](t)(w.Write(ctx, fmt.Sprintf("f%d.md", i%10), []byte("c")))
	}
	if err := a.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(); err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	if n := checkConsistent(t, w, dir); n != 450 {
		t.Errorf("%d changes, want 450", n)
	}
	for c := range w.Changes(workspace.Filter{}) {
		runs[c.RunID]++
	}
	if runs["ra"] != 200 || runs["rb"] != 200 || runs["rc"] != 50 {
		t.Errorf("changes per run %v", runs)
	}
}

// TestConcurrentWriters hammers one Workspace from goroutines writing,
// rolling back and listing at once: no change is lost and the files
// match the journal.
func TestConcurrentWriters(t *testing.T) {
	w, dir := open(t, workspace.Options{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			ctx := runCtx(fmt.Sprintf("g%d", g))
			for i := range 40 {
				if _, err := w.Write(ctx, fmt.Sprintf("f%d.md", (g+i)%5), fmt.Appendf(nil, "%d %d", g, i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			for _, err := range w.Changes(workspace.Filter{}) {
				if err != nil {
					t.Error(err)
				}
			}
		}
	})
	wg.Wait()
	if n := checkConsistent(t, w, dir); n != 320 {
		t.Errorf("%d changes, want 320", n)
	}
}

// TestJournalDirMustBeADirectory: a link standing in the journal
// directory's place is refused at Open, not followed.
func TestJournalDirMustBeADirectory(t *testing.T) {
	dir := t.TempDir()
	os.Symlink(t.TempDir(), filepath.Join(dir, workspace.JournalDir))
	if _, err := workspace.Open(dir, workspace.Options{}); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("Open with a linked journal directory = %v", err)
	}
}

// killSelf ends this process as kill -9 would: no deferred function, no
// flush (os.Process.Kill is SIGKILL on Unix, TerminateProcess on Windows).
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill()
	}
	select {} // the kill is on its way
}
