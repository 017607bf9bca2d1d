package autoagent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/trace"
)

// sinkFunc is a trace.Sink of a function.
type sinkFunc func(trace.Event) error

func (f sinkFunc) WriteEvent(ev trace.Event) error { return f(ev) }

// TraceSinks receive the run's events beside the trace file; with a
// Tracer of the program's own they are a config error, not dropped.
func TestTraceSinksReceiveTheRun(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var types []trace.Type
	sink := sinkFunc(func(ev trace.Event) error {
		mu.Lock()
		defer mu.Unlock()
		types = append(types, ev.Type)
		return nil
	})
	file := filepath.Join(t.TempDir(), "trace.jsonl")
	rt, err := autoagent.New(ctx, autoagent.Config{LLM: script(scripted.Turn{Text: "done"}), TraceFile: file, TraceSinks: []trace.Sink{sink}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Run(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := slices.Clone(types)
	mu.Unlock()
	if !slices.Contains(got, trace.RunStart) || !slices.Contains(got, trace.RunEnd) {
		t.Errorf("the sink saw %v; want run_start and run_end", got)
	}
	b, err := os.ReadFile(file)
	if n := strings.Count(string(b), "\n"); err != nil || n != len(got) {
		t.Errorf("the trace file holds %d lines (%v), the sink saw %d events: both get every event", n, err, len(got))
	}

	_, err = autoagent.New(ctx, autoagent.Config{LLM: script(), Tracer: trace.New(), TraceSinks: []trace.Sink{sink}})
	if !errors.Is(err, autoagent.ErrConfig) || !strings.Contains(err.Error(), "add the sinks to your Tracer") {
		t.Errorf("TraceSinks with a Tracer: %v; want ErrConfig saying what to do", err)
	}
	if _, err := autoagent.New(ctx, autoagent.Config{LLM: script(), TraceSinks: []trace.Sink{nil}}); !errors.Is(err, autoagent.ErrConfig) {
		t.Errorf("a nil sink: %v; want ErrConfig, not a panic at the first event", err)
	}
}

// The model is the program's to build (its HTTP client is
// providers/catalog's weight): a Config without one says where to build
// it, and opens nothing.
func TestConfigWithoutAModelSaysWhereToBuildOne(t *testing.T) {
	rt, err := autoagent.New(context.Background(), autoagent.Config{Model: "gpt-x", System: "hi"})
	if !errors.Is(err, autoagent.ErrConfig) || rt != nil || !strings.Contains(err.Error(), "Config.LLM") || !strings.Contains(err.Error(), "providers/catalog") {
		t.Errorf("no LLM: %v, %v; want ErrConfig naming Config.LLM and providers/catalog", rt, err)
	}
}

// The session store is the program's: the runtime protects its files from
// sandboxed tools, and leaves it open on Close.
func TestSessionStoreIsTheCallers(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "sessions.db")
	st := openSessions(t, db)
	cfg := autoagent.Config{LLM: script(scripted.Turn{Text: "hi"}), Sessions: st}
	var files []string
	for _, p := range cfg.Protects() {
		if p.File != "" {
			files = append(files, p.File)
		}
	}
	for _, want := range []string{db, db + "-wal", db + "-shm", db + "-journal"} {
		if !slices.Contains(files, want) {
			t.Errorf("Protects names %q; want %s among them", files, want)
		}
	}
	rt, err := autoagent.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	k := autoagent.SessionKey{Session: "s"}
	if _, err := rt.Continue(ctx, k, "hello"); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, k, llm.UserText("after Close")); err != nil {
		t.Errorf("the store after the runtime's Close: %v; want it still open", err)
	}
}

// create_tool offered without a plugins directory configured stages in
// ./plugins/staging: Start does not trip over the absent PluginsConfig.
func TestCreateToolWithoutPluginsConfig(t *testing.T) {
	t.Chdir(t.TempDir())
	rt, err := autoagent.New(context.Background(), autoagent.Config{
		LLM:      script(scripted.Turn{Text: "hi"}),
		Features: []autoagent.Feature{&sandbox.Sandbox{CreateTool: sandbox.CreateToolConfig{Budget: 1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	if _, ok := rt.Agent().Tools.Get("create_tool"); !ok {
		t.Error("create_tool not offered")
	}
}
