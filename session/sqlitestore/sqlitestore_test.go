package sqlitestore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/session"
	"github.com/autoagent-go/autoagent/session/sessiontest"
	"github.com/autoagent-go/autoagent/session/sqlitestore"
)

// A child process appends for the multi-process tests.
const (
	childEnv    = "AUTOAGENT_SESSION_TEST_CHILD" // "DB WRITER COUNT"
	childAppend = "append"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(child(spec))
	}
	os.Exit(m.Run())
}

// child appends COUNT messages "w<WRITER>-<i>" one by one to session
// "shared", printing each seq once committed.
func child(spec string) int {
	var db string
	var writer, count int
	if _, err := fmt.Sscanf(spec, "%s %d %d", &db, &writer, &count); err != nil {
		fmt.Fprintln(os.Stderr, "child spec:", err)
		return 2
	}
	st, err := sqlitestore.Open(db, sqlitestore.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer st.Close()
	out := bufio.NewWriter(os.Stdout)
	for i := range count {
		es, err := st.Append(context.Background(), session.Key{Session: "shared"}, llm.UserText(fmt.Sprintf("w%d-%d", writer, i)))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(out, es[0].Seq)
		out.Flush()
	}
	return 0
}

func openTemp(t testing.TB) *sqlitestore.Store {
	t.Helper()
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "sessions.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Store { return openTemp(t) })
}

func startChild(t *testing.T, db string, writer, count int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d", childEnv, db, writer, count))
	return cmd
}

// Two processes × 500 appends to one session: 1000 messages, none lost,
// each writer's order kept.
func TestTwoProcessesAppendToOneSession(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	st, err := sqlitestore.Open(db, sqlitestore.Options{}) // creates the tables before the race
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, b := startChild(t, db, 0, 500), startChild(t, db, 1, 500)
	for _, c := range []*exec.Cmd{a, b} {
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []*exec.Cmd{a, b} {
		if err := c.Wait(); err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	es, err := st.Load(context.Background(), session.Key{Session: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1000 {
		t.Fatalf("%d messages, want 1000", len(es))
	}
	sessiontest.CheckWriterOrder(t, es, 2, 500)
}

// A writer killed with SIGKILL mid-appends leaves a session that opens
// with every message it reported committed.
func TestKillDuringAppendsLosesNothingCommitted(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	cmd := startChild(t, db, 0, 1_000_000)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var last int64
	for sc.Scan() {
		n, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			t.Fatalf("child printed %q", sc.Text())
		}
		last = n
		if last >= 300 {
			break
		}
	}
	time.Sleep(20 * time.Millisecond) // let it be mid-append
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if last < 300 {
		t.Fatalf("the child committed only %d messages before it stopped", last)
	}
	st, err := sqlitestore.Open(db, sqlitestore.Options{})
	if err != nil {
		t.Fatalf("the killed writer's store does not open: %v", err)
	}
	defer st.Close()
	es, err := st.Load(context.Background(), session.Key{Session: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(es)) < last {
		t.Fatalf("%d messages after the kill, but %d were reported committed", len(es), last)
	}
	sessiontest.CheckWriterOrder(t, es, 1, len(es))
	// The store takes appends again.
	if _, err := st.Append(context.Background(), session.Key{Session: "shared"}, llm.UserText("after")); err != nil {
		t.Fatal(err)
	}
}

// A file that is not a session store is refused, named, and left as it was.
func TestOpenRefusesAForeignFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "notes.db")
	junk := []byte("these are my notes, not a database\n")
	os.WriteFile(p, append(junk, make([]byte, 4096)...), 0o600)
	_, err := sqlitestore.Open(p, sqlitestore.Options{})
	var ce *sqlitestore.CorruptError
	if !errors.As(err, &ce) || ce.Path != p {
		t.Fatalf("Open of a text file: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b[:len(junk)]) != string(junk) {
		t.Error("Open changed the foreign file")
	}
	if _, err := sqlitestore.Open(filepath.Join(t.TempDir(), "a?b"), sqlitestore.Options{}); err == nil {
		t.Error("a path with '?' was accepted")
	}
}

// Entries are stamped with Options.Now.
func TestEntriesCarryTheClocksTime(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k := session.Key{Session: "s"}
	st.Append(context.Background(), k, llm.UserText("x"))
	es, _ := st.Load(context.Background(), k)
	if len(es) != 1 || !es[0].Time.Equal(at) {
		t.Errorf("entries %+v, want time %v", es, at)
	}
}

func BenchmarkAppend(b *testing.B) {
	st := openTemp(b)
	defer st.Close()
	k := session.Key{User: "u", Session: "bench"}
	msg := llm.UserText("a message of ordinary length, about as long as a chat turn usually is")
	for b.Loop() {
		if _, err := st.Append(context.Background(), k, msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoad10000(b *testing.B) {
	st := openTemp(b)
	defer st.Close()
	k := session.Key{User: "u", Session: "long"}
	batch := make([]llm.Message, 100)
	for i := range batch {
		batch[i] = llm.UserText(fmt.Sprintf("message %d of ordinary length, about as long as a chat turn usually is", i))
	}
	for range 100 {
		if _, err := st.Append(context.Background(), k, batch...); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		es, err := st.Load(context.Background(), k)
		if err != nil || len(es) != 10000 {
			b.Fatalf("%d, %v", len(es), err)
		}
	}
}

func BenchmarkSearch10000(b *testing.B) {
	st := openTemp(b)
	defer st.Close()
	k := session.Key{User: "u", Session: "long"}
	batch := make([]llm.Message, 100)
	for i := range batch {
		batch[i] = llm.UserText(fmt.Sprintf("message %d about order %d and its delivery to city %d", i, i*7, i%13))
	}
	for range 100 {
		if _, err := st.Append(context.Background(), k, batch...); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		hits, err := st.Search(context.Background(), k, "delivery city 7", 10)
		if err != nil || len(hits) != 10 {
			b.Fatalf("%d, %v", len(hits), err)
		}
	}
}
