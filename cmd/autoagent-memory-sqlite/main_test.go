package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/memorytest"
	"github.com/autoagent-go/autoagent/memory/remote"
	"github.com/autoagent-go/autoagent/memory/sqlitestore"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// Started with runMainEnv set, the test binary is the backend: it runs
// this command's run with its arguments.
const runMainEnv = "AUTOAGENT_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stderr))
	}
	os.Exit(m.Run())
}

// startBackend runs this command as a memory backend with args.
func startBackend(t *testing.T, args ...string) remote.Memory {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := remote.New(ctx, remote.Options{
		Path: os.Args[0], Name: "sqlite", Args: args,
		Env: []string{runMainEnv + "=1", "GORACE=atexit_sleep_ms=0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestConformance(t *testing.T) {
	memorytest.Run(t, memorytest.Options{
		New: func(t *testing.T) memory.Memory {
			return startBackend(t, "--db", filepath.Join(t.TempDir(), "facts.db"), "--max-messages", "10", "--keep-recent", "4")
		},
	})
}

// TestHostsShareOneDatabase runs two backends, as two hosts would, on one
// file: what one remembers the other recalls, and forgetting reaches both.
func TestHostsShareOneDatabase(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "shared.db")
	a := startBackend(t, "--db", db, "--identity", "alice")
	b := startBackend(t, "--db", db, "--identity", "alice")
	rec, err := a.(memory.Rememberer).Remember(ctx, "Alice is allergic to peanuts.", "alice", memory.SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Recall(ctx, "peanuts allergy", 5)
	if err != nil || len(got) != 1 || !strings.Contains(got[0].Text(), "peanuts") {
		t.Fatalf("the other host recalls %v, %v", got, err)
	}
	if _, err := b.(memory.Rememberer).Remember(ctx, "Alice lives in Oslo.", "alice", memory.SourceUser); err != nil {
		t.Fatal(err)
	}
	if found, err := b.(memory.Forgetter).Forget(ctx, rec.ID); err != nil || !found {
		t.Fatalf("Forget = %v, %v", found, err)
	}
	got, err = a.Recall(ctx, "peanuts allergy Oslo", 5)
	if err != nil || len(got) != 1 || !strings.Contains(got[0].Text(), "Oslo") {
		t.Errorf("after the other host's writes, recall = %v, %v", got, err)
	}
	// A host for another identity is refused, with the memory's sentinel.
	_, err = remote.New(ctx, remote.Options{Path: os.Args[0], Args: []string{"--db", db, "--identity", "bob"},
		Env: []string{runMainEnv + "=1", "GORACE=atexit_sleep_ms=0"}})
	if err == nil || !strings.Contains(err.Error(), "another identity") {
		t.Errorf("backend for another identity: %v", err)
	}
}

// TestForgetMatchingSeesOtherHostsFacts: host B stores a fact after host A
// last read the database; A's ForgetMatching must offer that fact to its
// model and erase it, or a person's request to forget would silently miss.
func TestForgetMatchingSeesOtherHostsFacts(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "shared.db")
	model := scripted.New(scripted.Turn{Text: `{"forget":[1],"reason":"the address"}`})
	a := openShared(t, db, model)
	b := openShared(t, db, nil)
	if got, err := a.Recall(ctx, "address", 5); err != nil || len(got) != 0 {
		t.Fatalf("empty database recalls %v, %v", got, err)
	}
	if _, err := b.Remember(ctx, "Lives at 3 Mill Lane, Oxford.", "alice", memory.SourceUser); err != nil {
		t.Fatal(err)
	}
	gone, err := a.ForgetMatching(ctx, "forget my address", false)
	if err != nil || len(gone) != 1 || gone[0].Text != "Lives at 3 Mill Lane, Oxford." {
		t.Fatalf("ForgetMatching = %+v, %v; want the address another host stored", gone, err)
	}
	if reqs := model.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].Messages[len(reqs[0].Messages)-1].Text(), "[id 1] Lives at 3 Mill Lane") {
		t.Errorf("the model was not shown the other host's fact: %d requests", len(reqs))
	}
	if got, err := b.Recall(ctx, "Mill Lane Oxford", 5); err != nil || len(got) != 0 {
		t.Errorf("after forgetting, the other host recalls %v, %v", got, err)
	}
}

// openShared serves db as the backend does, in process, with model for
// the memory's calls.
func openShared(t *testing.T, db string, model llm.Provider) *sharedFact {
	t.Helper()
	st, err := sqlitestore.Open(db, sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := memory.NewFact(context.Background(), memory.FactOptions{Provider: model, Store: st})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	s := &sharedFact{Fact: f, store: st, db: db}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"--db"}, {"--db", "x", "extra"}, {"--nope"}} {
		var stderr strings.Builder
		if code := run(args, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("run(%q) = %d, stderr %q; want 2 with a message", args, code, stderr.String())
		}
	}
	var stderr strings.Builder
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.db")
	os.WriteFile(bad, []byte(strings.Repeat("garbage ", 1000)), 0o644)
	if code := run([]string{"--db", bad}, &stderr); code != 1 || !strings.Contains(stderr.String(), "corrupt") {
		t.Errorf("corrupt db: %d, %q", code, stderr.String())
	}
	if _, err := parse([]string{"--db", "x", "--provider", "openai"}); err != nil {
		t.Errorf("model flags: %v", err)
	}
}
