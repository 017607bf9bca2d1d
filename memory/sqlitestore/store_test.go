package sqlitestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/memorytest"
)

// Started with hammerEnv set, the test binary is one of several processes
// adding facts to one database at once.
const hammerEnv = "AUTOAGENT_TEST_SQLITE_HAMMER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(hammerEnv); spec != "" {
		if err := hammer(spec); err != nil {
			fmt.Fprintln(os.Stderr, "hammer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hammer adds n facts named after who, one transaction each. spec is
// "path|who|n".
func hammer(spec string) error {
	var path, who string
	var n int
	parts := bytes.Split([]byte(spec), []byte("|"))
	if len(parts) != 3 {
		return fmt.Errorf("bad spec %q", spec)
	}
	path, who = string(parts[0]), string(parts[1])
	n, err := strconv.Atoi(string(parts[2]))
	if err != nil {
		return err
	}
	st, err := Open(path, Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	for i := range n {
		_, err := st.Update(context.Background(), func(s *memory.FactState) error {
			now := time.Now().UTC()
			s.Facts = append(s.Facts, memory.Record{ID: s.NextID, Text: fmt.Sprintf("%s fact %d", who, i), Source: memory.SourceHost, ValidFrom: now, Updated: now})
			s.NextID++
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func open(t *testing.T, path string) *Store {
	t.Helper()
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestUpdateAndLoadRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "facts.db")
	st := open(t, path)
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 123456789, time.UTC)
	got, err := st.Update(ctx, func(s *memory.FactState) error {
		s.Identity = "alice"
		s.Facts = append(s.Facts,
			memory.Record{ID: 1, Text: "Lives in Oslo.", Subject: "user", Source: memory.SourceUser, ValidFrom: t0, Updated: t0},
			memory.Record{ID: 2, Text: "Has a cat.", Source: memory.SourceAgent, ValidFrom: t0, Updated: t0, Tainted: true},
			memory.Record{ID: 3, Text: "Likes tea.", Source: memory.SourceHost, ValidFrom: t0, Updated: t0},
		)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.NextID != 4 {
		t.Errorf("NextID = %d, want 4 (normalized)", got.NextID)
	}
	t1 := t0.Add(time.Hour)
	// Supersede 1 by 4, erase 3.
	got, err = st.Update(ctx, func(s *memory.FactState) error {
		s.Facts[0].InvalidAt, s.Facts[0].SupersededBy, s.Facts[0].Updated = t1, 4, t1
		s.Facts = append(s.Facts[:2], memory.Record{ID: 4, Text: "Lives in Bergen.", Subject: "user", Source: memory.SourceUser, ValidFrom: t1, Updated: t1})
		s.NextID = 5
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A second handle (another process would do the same) reads it back.
	loaded, err := open(t, path).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(got, loaded); d != "" {
		t.Errorf("Load differs from Update's result (-update +load):\n%s", d)
	}
	want := &memory.FactState{Identity: "alice", NextID: 5, Facts: []memory.Record{
		{ID: 1, Text: "Lives in Oslo.", Subject: "user", Source: memory.SourceUser, ValidFrom: t0, InvalidAt: t1, SupersededBy: 4, Updated: t1},
		{ID: 2, Text: "Has a cat.", Source: memory.SourceAgent, ValidFrom: t0, Updated: t0, Tainted: true},
		{ID: 4, Text: "Lives in Bergen.", Subject: "user", Source: memory.SourceUser, ValidFrom: t1, Updated: t1},
	}}
	if d := cmp.Diff(want, loaded); d != "" {
		t.Errorf("stored state (-want +got):\n%s", d)
	}
}

func TestFailedUpdateChangesNothing(t *testing.T) {
	ctx := context.Background()
	st := open(t, filepath.Join(t.TempDir(), "facts.db"))
	boom := errors.New("boom")
	_, err := st.Update(ctx, func(s *memory.FactState) error {
		s.Facts = append(s.Facts, memory.Record{ID: 1, Text: "x", Source: memory.SourceHost})
		s.Identity = "bob"
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want fn's error", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := st.Update(cctx, func(*memory.FactState) error { return nil }); err == nil {
		t.Error("Update with a cancelled context succeeded")
	}
	got, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Facts) != 0 || got.Identity != "" || got.NextID != 1 {
		t.Errorf("state after failed updates: %+v", got)
	}
	g, err := st.Generation(ctx)
	if err != nil || g != 0 {
		t.Errorf("Generation = %d, %v; want 0 after no commit", g, err)
	}
}

func TestSeveralProcessesLoseNothing(t *testing.T) {
	const perProcess = 25
	path := filepath.Join(t.TempDir(), "shared.db")
	st := open(t, path) // creates the file before the children race
	var cmds []*exec.Cmd
	for _, who := range []string{"p1", "p2"} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), hammerEnv+"="+path+"|"+who+"|"+strconv.Itoa(perProcess), "GORACE=atexit_sleep_ms=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if stderr.Len() > 0 {
				t.Logf("%s stderr: %s", who, stderr.String())
			}
		})
		cmds = append(cmds, cmd)
	}
	if err := hammer(path + "|parent|" + strconv.Itoa(perProcess)); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	got, err := st.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Facts) != 3*perProcess || got.NextID != 3*perProcess+1 {
		t.Fatalf("%d facts, NextID %d; want %d and %d", len(got.Facts), got.NextID, 3*perProcess, 3*perProcess+1)
	}
	seen := make(map[string]bool)
	for i, r := range got.Facts {
		if r.ID != int64(i+1) {
			t.Fatalf("ids are not 1..%d: position %d holds %d", 3*perProcess, i, r.ID)
		}
		seen[r.Text] = true
	}
	for _, who := range []string{"p1", "p2", "parent"} {
		for i := range perProcess {
			if !seen[fmt.Sprintf("%s fact %d", who, i)] {
				t.Errorf("lost %s fact %d", who, i)
			}
		}
	}
	var mode string
	if err := st.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestCorruptFileIsReportedAndKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "facts.db")
	junk := bytes.Repeat([]byte("this is not an sqlite database\n"), 200)
	if err := os.WriteFile(path, junk, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, Options{})
	var ce *memory.CorruptStoreError
	if !errors.As(err, &ce) || ce.Path != path {
		t.Fatalf("Open = %v, want *memory.CorruptStoreError naming the file", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(after, junk) {
		t.Error("the corrupt file was modified")
	}
}

func TestVectors(t *testing.T) {
	ctx := context.Background()
	st := open(t, filepath.Join(t.TempDir(), "facts.db"))
	vecs := map[int64][]float32{1: {0.5, -1, 3.25}, 7: {0, 1e-7, -2}}
	if err := st.SaveVectors(ctx, "embed-1", vecs); err != nil {
		t.Fatal(err)
	}
	got, err := st.LoadVectors(ctx, "embed-1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(vecs, got); d != "" {
		t.Errorf("vectors (-saved +loaded):\n%s", d)
	}
	other, err := st.LoadVectors(ctx, "embed-2")
	if err != nil || len(other) != 0 {
		t.Errorf("vectors of another model: %v, %v; want none", other, err)
	}
}

func TestGenerationSeesOtherWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "facts.db")
	a, b := open(t, path), open(t, path)
	g0, _ := a.Generation(ctx)
	if _, err := b.Update(ctx, func(*memory.FactState) error { return nil }); err != nil {
		t.Fatal(err)
	}
	g1, err := a.Generation(ctx)
	if err != nil || g1 == g0 {
		t.Errorf("generation %d → %d (%v); want a change after another handle's update", g0, g1, err)
	}
}

func TestConformanceFactOnSQLite(t *testing.T) {
	memorytest.Run(t, memorytest.Options{
		New: func(t *testing.T) memory.Memory {
			f, err := memory.NewFact(context.Background(), memory.FactOptions{
				Provider: extractor{}, Store: open(t, filepath.Join(t.TempDir(), "facts.db")),
				MaxMessages: 10, KeepRecent: 4, MaxFacts: 200,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		},
	})
}
