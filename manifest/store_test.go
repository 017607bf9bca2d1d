package manifest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/testsys"

	"github.com/google/go-cmp/cmp"
)

var fixedNow = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func newStore(t *testing.T) *Store {
	t.Helper()
	return &Store{Path: filepath.Join(t.TempDir(), "plugins", "manifest.json"), Now: func() time.Time { return fixedNow }}
}

func approve(t *testing.T, s *Store, sum, file string, grants ...string) Entry {
	t.Helper()
	gs := mustGrants(t, grants...)
	e, err := s.Approve(context.Background(), Approval{SHA256: sum, File: file, Grants: gs, Requested: gs, By: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func load(t *testing.T, s *Store) *Manifest {
	t.Helper()
	m, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func logRecords(t *testing.T, s *Store) []AuditEntry {
	t.Helper()
	var out []AuditEntry
	for r, err := range ReadLog(s.LogPath()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func TestLoadMissingIsEmpty(t *testing.T) {
	s := newStore(t)
	m := load(t, s)
	if m.Len() != 0 {
		t.Errorf("missing file loaded %d entries", m.Len())
	}
	if _, err := os.Stat(s.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load created the file: %v", err)
	}
}

func TestLoadDirectoryIsAnError(t *testing.T) {
	s := &Store{Path: t.TempDir()}
	if _, err := s.Load(); err == nil || !strings.Contains(err.Error(), s.Path) {
		t.Errorf("Load of a directory: %v, want an error naming it", err)
	}
}

func TestApproveWritesEntryAndLog(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	req := mustGrants(t, "net:*.example.com", "clock")
	e, err := s.Approve(ctx, Approval{
		SHA256: sumA, File: "/somewhere/fetch_url.wasm", Grants: mustGrants(t, "net:api.example.com"), Requested: req,
		Limits: Limits{Memory: 32 << 20}, By: "alice", Note: "looked at it",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Entry{SHA256: sumA, File: "fetch_url.wasm", Name: "fetch_url", Grants: mustGrants(t, "net:api.example.com"),
		Limits: Limits{Memory: 32 << 20}, ApprovedBy: "alice", ApprovedAt: fixedNow, Note: "looked at it"}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("returned entry (-want +got):\n%s", diff)
	}
	got, ok := load(t, s).Lookup(sumA)
	if !ok {
		t.Fatal("approved entry not in the file")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored entry (-want +got):\n%s", diff)
	}
	recs := logRecords(t, s)
	wantRec := []AuditEntry{{Time: fixedNow, Action: ActionApprove, By: "alice", SHA256: sumA, File: "fetch_url.wasm", Name: "fetch_url",
		Grants: mustGrants(t, "net:api.example.com"), Limits: Limits{Memory: 32 << 20}, Note: "looked at it"}}
	if diff := cmp.Diff(wantRec, recs); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}
	if filepath.Base(s.LogPath()) != "manifest.log.jsonl" {
		t.Errorf("LogPath = %s", s.LogPath())
	}
}

func TestApproveRefusesMoreThanRequested(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	a := Approval{SHA256: sumA, File: "a.wasm", Grants: mustGrants(t, "net:api.example.com", "env:TOKEN"),
		Requested: mustGrants(t, "net:api.example.com"), By: "alice"}
	_, err := s.Approve(ctx, a)
	var xe *ExceedError
	if !errors.As(err, &xe) || !errors.Is(err, ErrExceedsRequest) {
		t.Fatalf("error = %v, want *ExceedError", err)
	}
	if len(xe.Exceeding) != 1 || xe.Exceeding[0].String() != "env:TOKEN" {
		t.Errorf("Exceeding = %v, want [env:TOKEN]", xe.Exceeding)
	}
	if !strings.Contains(err.Error(), "refusing to grant env:TOKEN: the module requests net:api.example.com") {
		t.Errorf("message = %q", err)
	}
	if _, err := os.Stat(s.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused approval wrote the manifest")
	}

	a.Force = true
	if _, err := s.Approve(ctx, a); err != nil {
		t.Fatalf("forced approval: %v", err)
	}
	recs := logRecords(t, s)
	if len(recs) != 1 || len(recs[0].Forced) != 1 || recs[0].Forced[0].String() != "env:TOKEN" {
		t.Errorf("audit log does not record the forced grant: %+v", recs)
	}
	if _, err := s.Approve(ctx, Approval{SHA256: sumB, File: "b.wasm", Grants: mustGrants(t, "clock"), By: "a"}); err == nil ||
		!strings.Contains(err.Error(), "the module requests nothing") {
		t.Errorf("granting to a module that requests nothing: %v", err)
	}
}

func TestApproveValidates(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	for _, a := range []Approval{
		{SHA256: "nothex", File: "a.wasm", By: "x"},
		{SHA256: sumA, File: "a.wasm"},
		{SHA256: sumA, File: "bad name!.wasm", By: "x"},
		{SHA256: sumA, File: "a.wasm", By: "x", Grants: []Grant{{Kind: KindNet}}},
	} {
		if _, err := s.Approve(ctx, a); err == nil {
			t.Errorf("Approve(%+v) succeeded", a)
		}
	}
	if _, err := os.Stat(s.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an invalid approval wrote the manifest")
	}
}

func TestReapprove(t *testing.T) {
	s := newStore(t)
	approve(t, s, sumA, "fetch.wasm", "clock")
	// The same bytes again: the approval is replaced (grants changed).
	approve(t, s, sumA, "fetch.wasm", "random")
	m := load(t, s)
	if e, _ := m.Lookup(sumA); m.Len() != 1 || len(e.Grants) != 1 || e.Grants[0].Kind != KindRandom {
		t.Errorf("re-approval of the same bytes: %+v", m.Entries())
	}
	recs := logRecords(t, s)
	if len(recs) != 2 || recs[0].Replaced || !recs[1].Replaced {
		t.Errorf("audit log Replaced flags wrong: %+v", recs)
	}
	// An edited module: a new entry, the old one stays.
	approve(t, s, sumB, "fetch.wasm")
	if got := load(t, s).ByName("fetch"); len(got) != 2 {
		t.Errorf("after approving edited bytes, %d entries for fetch, want 2", len(got))
	}
}

func TestRevoke(t *testing.T) {
	ctx := context.Background()
	twin := sumA[:60] + "ffff" // shares the first 60 digits with sumA
	setup := func(t *testing.T) *Store {
		s := newStore(t)
		approve(t, s, sumA, "fetch.wasm")
		approve(t, s, twin, "fetch.wasm")
		approve(t, s, sumB, "echo.wasm")
		return s
	}
	tests := []struct {
		target  string
		removed []string
		err     string
	}{
		{target: "fetch", removed: []string{sumA, twin}},
		{target: sumB, removed: []string{sumB}},
		{target: "60303AE2", removed: []string{sumB}},
		{target: sumA, removed: []string{sumA}},
		{target: sumA[:12], err: "matches 2 approvals"},
		{target: "6030", err: "no approval matches"},
		{target: "nothing", err: "no approval matches"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			s := setup(t)
			before, _ := os.ReadFile(s.Path)
			removed, err := s.Revoke(ctx, Revocation{Target: tt.target, By: "bob", Note: "why"})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Revoke(%s) error = %v, want %q", tt.target, err, tt.err)
				}
				if after, _ := os.ReadFile(s.Path); string(after) != string(before) {
					t.Errorf("a failed revoke changed the manifest")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range removed {
				got = append(got, e.SHA256)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.removed))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("removed (-want +got):\n%s", diff)
			}
			m := load(t, s)
			for _, sum := range tt.removed {
				if _, ok := m.Lookup(sum); ok {
					t.Errorf("%s still approved", Short(sum))
				}
			}
			if m.Len() != 3-len(tt.removed) {
				t.Errorf("%d entries left, want %d", m.Len(), 3-len(tt.removed))
			}
			recs := logRecords(t, s)
			revokes := recs[3:]
			if len(revokes) != len(tt.removed) {
				t.Fatalf("%d revoke records, want %d", len(revokes), len(tt.removed))
			}
			for _, r := range revokes {
				if r.Action != ActionRevoke || r.By != "bob" || r.Note != "why" || !slices.Contains(tt.removed, r.SHA256) {
					t.Errorf("bad revoke record %+v", r)
				}
			}
		})
	}
	if _, err := newStore(t).Revoke(ctx, Revocation{Target: "x"}); err == nil {
		t.Error("Revoke without By succeeded")
	}
	if _, err := newStore(t).Revoke(ctx, Revocation{Target: "x", By: "b"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Revoke on an empty manifest: %v, want ErrNotFound", err)
	}
}

// A corrupt or unknown-version manifest is never overwritten: the bytes on
// disk are exactly those before the failed change, and no audit line or
// temporary file is left.
func TestBadManifestLeftUntouched(t *testing.T) {
	docs := map[string]string{
		"syntax":    "{\"version\": 1, \"tools\": {\n",
		"empty":     "",
		"version 2": `{"version": 2, "tools": {}}`,
		"bad grant": `{"version": 1, "tools": {"` + sumA + `": {"file": "a.wasm", "name": "a", "grants": ["net:"], "approved_by": "x", "approved_at": "2026-01-01T00:00:00Z"}}}`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(s.Path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			_, aerr := s.Approve(ctx, Approval{SHA256: sumB, File: "b.wasm", By: "x"})
			_, rerr := s.Revoke(ctx, Revocation{Target: sumA, By: "x"})
			_, lerr := s.Load()
			for _, err := range []error{aerr, rerr, lerr} {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Path != s.Path || !strings.Contains(err.Error(), s.Path) {
					t.Errorf("error %v: want a *ParseError naming %s", err, s.Path)
				}
			}
			after, err := os.ReadFile(s.Path)
			if err != nil || string(after) != doc {
				t.Errorf("manifest changed: %q (%v)", after, err)
			}
			if _, err := os.Stat(s.LogPath()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("audit log written for a failed change")
			}
			assertNoTempFiles(t, filepath.Dir(s.Path))
		})
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestWriteKeepsModeAndFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	realDir := filepath.Join(dir, "real")
	if err := os.Mkdir(realDir, 0o755); err != nil {
		t.Fatal(err)
	}
	realPath := filepath.Join(realDir, "manifest.json")
	if err := os.WriteFile(realPath, []byte(`{"version": 1, "tools": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "manifest.json")
	if err := os.Symlink(realPath, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	s := &Store{Path: link}
	approve(t, s, sumA, "a.wasm")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced by a file")
	}
	fi, err := os.Stat(realPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600 kept", fi.Mode().Perm())
	}
	if _, ok := load(t, &Store{Path: realPath}).Lookup(sumA); !ok {
		t.Error("the link's target was not updated")
	}
	if _, err := os.Stat(filepath.Join(realDir, "manifest.log.jsonl")); err != nil {
		t.Errorf("audit log not beside the real file: %v", err)
	}
	assertNoTempFiles(t, realDir)
	assertNoTempFiles(t, dir)
}

func TestApproveWaitsForTheLockUntilCtxEnds(t *testing.T) {
	s := newStore(t)
	approve(t, s, sumA, "a.wasm")
	held := (&Store{Path: s.Path}).LockPath()
	lk := newTestLock(t, held)
	defer lk.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := s.Approve(ctx, Approval{SHA256: sumB, File: "b.wasm", By: "x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Approve under a held lock: %v, want the context's error", err)
	}
	if _, ok := load(t, s).Lookup(sumB); ok {
		t.Error("Approve wrote without the lock")
	}
}

// Goroutines of one process each use their own Store (so their own lock
// handle), as separate processes would.
func TestConcurrentApproveInProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "manifest.json")
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			s := &Store{Path: path}
			for i := range each {
				sum := Sum(fmt.Appendf(nil, "%d/%d", w, i))
				if _, err := s.Approve(context.Background(), Approval{SHA256: sum, File: fmt.Sprintf("m%d_%d.wasm", w, i), By: "g"}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkAllApproved(t, path, workers, each)
}

const helperEnv = "MANIFEST_TEST_HELPER"

// TestMain doubles as the child process of TestConcurrentApproveProcesses
// (the hashicorp/go-plugin TestHelperProcess pattern): with helperEnv set,
// the test binary approves a series of modules and exits.
func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(helperApprove(spec))
	}
	os.Exit(m.Run())
}

// helperApprove runs "PATH|WORKER|COUNT": COUNT approvals, each its own
// read-modify-write of the manifest.
func helperApprove(spec string) int {
	parts := strings.Split(spec, "|")
	worker, _ := strconv.Atoi(parts[1])
	count, _ := strconv.Atoi(parts[2])
	s := &Store{Path: parts[0]}
	for i := range count {
		sum := Sum(fmt.Appendf(nil, "%d/%d", worker, i))
		if _, err := s.Approve(context.Background(), Approval{SHA256: sum, File: fmt.Sprintf("m%d_%d.wasm", worker, i), By: "p" + parts[1]}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

func TestConcurrentApproveProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "manifest.json")
	const procs, each = 4, 25
	cmds := make([]*exec.Cmd, procs)
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|%d", helperEnv, path, p, each))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[p] = cmd
		t.Cleanup(func() {
			if stderr.Len() > 0 {
				t.Logf("child %d: %s", p, stderr.String())
			}
		})
	}
	for p, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("child %d: %v", p, err)
		}
	}
	checkAllApproved(t, path, procs, each)
}

func checkAllApproved(t *testing.T, path string, workers, each int) {
	t.Helper()
	s := &Store{Path: path}
	m := load(t, s)
	if m.Len() != workers*each {
		t.Errorf("%d entries, want %d: entries were lost", m.Len(), workers*each)
	}
	for w := range workers {
		for i := range each {
			if _, ok := m.Lookup(Sum(fmt.Appendf(nil, "%d/%d", w, i))); !ok {
				t.Errorf("approval %d/%d lost", w, i)
			}
		}
	}
	if n := len(logRecords(t, s)); n != workers*each {
		t.Errorf("%d audit lines, want %d", n, workers*each)
	}
	assertNoTempFiles(t, filepath.Dir(path))
}

// TestLoadFIFO: a FIFO at the manifest's path is an error at once, not a
// read that waits for a writer forever.
func TestLoadFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "manifest.json")
	if err := testsys.Mkfifo(p); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := (&Store{Path: p}).Load(); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file (a FIFO)") {
			t.Fatalf("Load of a FIFO: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Load blocked on a FIFO")
	}
}

// TestApproveRefusesOddLockAndLog: a FIFO as the lock file made approve
// block forever, and a link as the audit log made it append where the
// link led; both are refused, saying what to remove, and nothing is
// written (found by attacking our own sandbox).
func TestApproveRefusesOddLockAndLog(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(s *Store) string
		want string
	}{
		{"lock FIFO", func(s *Store) string {
			if err := testsys.Mkfifo(s.LockPath()); err != nil {
				t.Fatal(err)
			}
			return s.LockPath()
		}, "is a FIFO, not a plain file"},
		{"log link", func(s *Store) string {
			victim := filepath.Join(t.TempDir(), "victim.txt")
			if err := os.WriteFile(victim, []byte("keep\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, s.LogPath()); err != nil {
				t.Fatal(err)
			}
			return victim
		}, "is a symbolic link, not a plain file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
				t.Fatal(err)
			}
			target := c.make(s)
			_, err := s.Approve(t.Context(), Approval{SHA256: sumA, File: "x.wasm", By: "alice"})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "remove it") {
				t.Fatalf("approve: %v, want %q", err, c.want)
			}
			if _, err := os.Stat(s.Path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the manifest was written: %v", err)
			}
			if c.name == "log link" {
				if b, _ := os.ReadFile(target); string(b) != "keep\n" {
					t.Errorf("the link's target now holds %q", b)
				}
			}
		})
	}
}

// An approval keeps the names of the module's tools, so revoking by a
// tool's name finds it from the manifest alone; the names survive a
// reload, and a name with a control character is refused.
func TestRevokeByRecordedToolName(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	if _, err := s.Approve(ctx, Approval{SHA256: sumA, File: "calc.wasm", By: "alice", Tools: []string{"fib", "spin"}}); err != nil {
		t.Fatal(err)
	}
	approve(t, s, sumB, "echo.wasm")
	if e, ok := load(t, s).Lookup(sumA); !ok || !slices.Equal(e.Tools, []string{"fib", "spin"}) {
		t.Fatalf("tools not kept across a reload: %+v", e)
	}
	removed, err := s.Revoke(ctx, Revocation{Target: "spin", By: "bob"})
	if err != nil || len(removed) != 1 || removed[0].SHA256 != sumA {
		t.Fatalf("Revoke(spin) = %+v, %v; want the approval of calc", removed, err)
	}
	if m := load(t, s); m.Len() != 1 {
		t.Errorf("%d entries left, want echo's alone", m.Len())
	}
	if _, err := s.Approve(ctx, Approval{SHA256: sumA, File: "calc.wasm", By: "alice", Tools: []string{"fib\x1b[2J"}}); err == nil || !strings.Contains(err.Error(), "control characters") {
		t.Errorf("a tool name with an escape sequence: %v, want refused", err)
	}
}
