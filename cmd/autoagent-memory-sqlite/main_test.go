package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/memorytest"
	"github.com/autoagent-go/autoagent/memory/remote"
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
