package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/backend/backendtest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/sqlitestore"
)

// The test binary doubles as the backend: started with testBackendEnv set,
// TestMain serves a memory instead of running the tests.
const (
	testBackendEnv = "AUTOAGENT_TEST_MEMORY_BACKEND"
	testDirEnv     = "AUTOAGENT_TEST_DIR" // markers and the fact store live here
)

func TestMain(m *testing.M) {
	mode := os.Getenv(testBackendEnv)
	if mode == "" {
		os.Exit(m.Run())
	}
	if old, ok := strings.CutPrefix(mode, "old-"); ok {
		// A backend of an older build: it does not say it keeps taint,
		// and ignores what the requests say of it.
		keepsTaint = false
		mode = old
	}
	mem, err := testMemory(mode, os.Getenv(testDirEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "test backend:", err)
		os.Exit(3)
	}
	Serve(mem)
	os.Exit(0)
}

// testMemory builds the memory a test backend serves.
func testMemory(mode, dir string) (memory.Memory, error) {
	switch mode {
	case "buffer":
		return memory.NewBuffer(memory.BufferOptions{MaxMessages: 8})
	case "summarizing":
		return memory.NewSummarizing(memory.SummarizingOptions{Provider: testModel{}, MaxMessages: 10, KeepRecent: 4})
	case "fact-sqlite":
		st, err := sqlitestore.Open(filepath.Join(dir, "facts.db"), sqlitestore.Options{})
		if err != nil {
			return nil, err
		}
		return memory.NewFact(context.Background(), memory.FactOptions{Store: st, MaxFacts: -1})
	case "fact", "fact-background":
		f, err := memory.NewFact(context.Background(), memory.FactOptions{
			Provider: testModel{}, Path: filepath.Join(dir, "facts.json"),
			MaxMessages: 10, KeepRecent: 4, MaxFacts: 200, Background: mode == "fact-background",
		})
		if err != nil {
			return nil, err
		}
		return &probeFact{Fact: f, dir: dir}, nil
	}
	return nil, fmt.Errorf("unknown mode %q", mode)
}

// probeFact is a Fact memory whose Recall obeys test commands:
//
//	block  mark "started", wait for ctx, mark "cancelled"
//	panic  panic
type probeFact struct {
	*memory.Fact
	dir string
}

func (p *probeFact) Recall(ctx context.Context, query string, k int) ([]llm.Message, error) {
	switch query {
	case "block":
		backendtest.Mark(p.dir, "started")
		<-ctx.Done()
		backendtest.Mark(p.dir, "cancelled")
		return nil, ctx.Err()
	case "panic":
		panic("memory backend: boom")
	}
	return p.Fact.Recall(ctx, query, k)
}

// testModel answers a memory's model calls: a summary naming how many
// lines it read, or one "add" operation per user line of the exchanges.
type testModel struct{}

func (testModel) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	prompt := req.Messages[len(req.Messages)-1].Text()
	_, exchanges, _ := strings.Cut(prompt, "New exchanges:\n")
	text := fmt.Sprintf("The conversation covered %d messages.", strings.Count(exchanges, "\n"))
	if req.ResponseFormat != nil {
		var ops []map[string]string
		for _, line := range strings.Split(exchanges, "\n") {
			if fact, ok := strings.CutPrefix(line, "user: "); ok {
				ops = append(ops, map[string]string{"op": "add", "fact": fact, "subject": "user"})
			}
		}
		b, _ := json.Marshal(map[string]any{"operations": ops})
		text = string(b)
	}
	return &llm.Response{Message: llm.AssistantText(text), FinishReason: llm.FinishStop,
		Usage: &llm.Usage{InputTokens: 20, OutputTokens: 8, TotalTokens: 28}}, nil
}

func (m testModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, m.Complete)
}

// start starts a test backend serving mode and closes it when the test
// ends. It returns the memory and the backend's directory.
func start(t testing.TB, mode string, opts Options) (Memory, string) {
	t.Helper()
	dir := dirOr(t, opts)
	if opts.Path == "" {
		opts.Path = os.Args[0]
	}
	if opts.Name == "" {
		opts.Name = mode
	}
	// A race-enabled child sleeps a second at exit unless told otherwise.
	opts.Env = append([]string{testBackendEnv + "=" + mode, testDirEnv + "=" + dir, "GORACE=atexit_sleep_ms=0"}, opts.Env...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := New(ctx, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m, dir
}

// dirOr returns the directory a test put in Env, or a fresh one.
func dirOr(t testing.TB, o Options) string {
	for _, e := range o.Env {
		if v, ok := strings.CutPrefix(e, testDirEnv+"="); ok {
			return v
		}
	}
	return t.TempDir()
}

func pidOf(m Memory) int {
	type hasClient interface{ pid() int }
	return m.(hasClient).pid()
}
