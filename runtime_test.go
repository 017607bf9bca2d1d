package autoagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/internal/marker"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/mcp/mount"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/session"
	"github.com/autoagent-go/autoagent/session/sqlitestore"
	"github.com/autoagent-go/autoagent/tool"
)

// approvedPlugins is a plugins directory holding echo.wasm, approved.
func approvedPlugins(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatalf("test module: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	st := &manifest.Store{Path: filepath.Join(dir, "manifest.json")}
	if _, err := st.Approve(context.Background(), manifest.Approval{SHA256: manifest.Sum(b), File: "echo.wasm", By: "test"}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	return dir
}

// everythingServer is the MCP reference server's command line, or a skip.
func everythingServer(t *testing.T) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: run `make deps` to run the MCP part of the facade tests")
	}
	script, _ := filepath.Abs(filepath.Join("mcp", "testdata", "node", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if _, err := os.Stat(script); err != nil {
		t.Skip("server-everything is not installed: run `make deps` to run the MCP part of the facade tests")
	}
	return []string{node, script, "stdio"}
}

func script(turns ...scripted.Turn) *scripted.Provider { return scripted.New(turns...) }

func calls(cs ...llm.ToolCall) scripted.Turn { return scripted.Turn{ToolCalls: cs} }

func tc(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// One Runtime runs a governed agent with a sandboxed tool (an approved
// plugin) and an MCP tool (the reference server), the MCP one untrusted by
// default, under a policy.
func TestRuntimeRunsSandboxedAndMCPTools(t *testing.T) {
	ctx := context.Background()
	policy := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(policy, []byte(`{"rules":[{"tool":"ev_get-env","action":"deny","reason":"no environment"}]}`), 0o644)
	rt, err := autoagent.New(ctx, autoagent.Config{
		LLM: script(
			calls(tc("c1", "echo", `{"msg":"hi"}`), tc("c2", "ev_echo", `{"message":"hello"}`), tc("c3", "ev_get-env", `{}`)),
			scripted.Turn{Text: "done"},
		),
		Features: []autoagent.Feature{
			&sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Dir: approvedPlugins(t)}},
			mount.Servers{{Command: everythingServer(t), Prefix: "ev_"}},
		},
		PolicyFile: policy,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	res, err := rt.Run(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range res.Messages {
		for _, r := range m.ToolResults() {
			got[r.CallID] = r.Content
		}
	}
	if !strings.Contains(got["c1"], "hi") || !strings.Contains(got["c2"], "Echo: hello") || !strings.Contains(got["c3"], "ToolPolicyDenied: no environment") {
		t.Errorf("results %q", got)
	}
	if !res.State.Tainted || !strings.Contains(got["c2"], marker.UntrustedOpen) {
		t.Errorf("the MCP result did not taint the run: tainted %v, %q", res.State.Tainted, got["c2"])
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to count descriptors")
	}
	return len(ents)
}

// settle waits for goroutines and descriptors to come back to at most
// their count before, and fails with the stacks when they do not.
func settle(t *testing.T, goroutines, fds int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		g, f := runtime.NumGoroutine(), openFDs(t)
		if g <= goroutines && f <= fds {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("after Close: %d goroutines (was %d), %d descriptors (was %d)\n%s", g, goroutines, f, fds, buf[:n])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Close releases everything a Runtime opened: the watcher, the host, the
// plugins, the trace file, memory (the session store is the caller's).
func TestRuntimeCloseLeavesNothingOpen(t *testing.T) {
	ctx := context.Background()
	plugins := approvedPlugins(t)
	dir := t.TempDir()
	// Warm up what stays for the process (the compiled-code cache, SQLite's
	// first open) so only the runtime's own resources are counted.
	warm, err := autoagent.New(ctx, autoagent.Config{LLM: script(scripted.Turn{Text: "x"}), Features: []autoagent.Feature{&sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Dir: plugins}}}, Sessions: openSessions(t, filepath.Join(dir, "warm.db"))})
	if err != nil {
		t.Fatal(err)
	}
	warm.Close(ctx)
	g0, f0 := runtime.NumGoroutine(), openFDs(t)
	for range 3 {
		st := openSessions(t, filepath.Join(dir, "sessions.db"))
		rt, err := autoagent.New(ctx, autoagent.Config{
			LLM:       script(calls(tc("c1", "echo", `{"msg":"hi"}`)), scripted.Turn{Text: "done"}),
			Features:  []autoagent.Feature{&sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Dir: plugins}}},
			Sessions:  st,
			TraceFile: filepath.Join(dir, "trace.jsonl"),
			Memory:    autoagent.MemoryConfig{Kind: "fact", Dir: filepath.Join(dir, "memory")},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Continue(ctx, session.Key{Session: "s"}, "hello"); err != nil {
			t.Fatal(err)
		}
		if err := rt.Close(ctx); err != nil {
			t.Fatalf("Close: %v", err)
		}
		st.Close() // the caller's: the runtime closes only what it opened
		if err := rt.Close(ctx); err != nil {
			t.Fatalf("a second Close: %v", err)
		}
	}
	settle(t, g0, f0)
}

// A Config that cannot work is an error, and nothing stays open.
func TestRuntimeConfigErrors(t *testing.T) {
	ctx := context.Background()
	g0, f0 := runtime.NumGoroutine(), openFDs(t)
	plugins := approvedPlugins(t)
	for _, tt := range []struct {
		cfg  autoagent.Config
		want error
	}{
		{autoagent.Config{PolicyFile: "policy.json"}, autoagent.ErrConfig},
		{autoagent.Config{LLM: script(), Features: []autoagent.Feature{&sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Dir: plugins}}}, Memory: autoagent.MemoryConfig{Kind: "nope"}}, autoagent.ErrConfig},
		{autoagent.Config{LLM: script(), Features: []autoagent.Feature{&sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Dir: plugins}}}, PolicyFile: filepath.Join(t.TempDir(), "none.json")}, os.ErrNotExist},
		{autoagent.Config{LLM: script(), Tools: []tool.Tool{mustTool(t, "a"), mustTool(t, "a")}}, autoagent.ErrConfig},
	} {
		rt, err := autoagent.New(ctx, tt.cfg)
		if !errors.Is(err, tt.want) || rt != nil {
			t.Errorf("New: %v, %v; want an error wrapping %v", rt, err, tt.want)
		}
	}
	settle(t, g0, f0)
}

func mustTool(t *testing.T, name string) tool.Tool {
	t.Helper()
	tl, err := tool.New(name, "A tool.", func(context.Context, struct{}) (string, error) { return "ok", nil })
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// Continue keeps a conversation in the session store: a second runtime on
// the same file (another process, later) continues it.
func TestRuntimeContinueAcrossRuntimes(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "sessions.db")
	k := session.Key{User: "ada", Session: "trip"}
	model := func() *scripted.Provider {
		return scripted.NewWithOptions(scripted.Options{PerConversation: true}, scripted.Turn{Text: "First."}, scripted.Turn{Text: "Second."})
	}
	rt, err := autoagent.New(ctx, autoagent.Config{LLM: model(), Sessions: openSessions(t, db)})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := rt.Continue(ctx, k, "hello"); err != nil || res.Output != "First." {
		t.Fatalf("first turn: %v %v", res, err)
	}
	rt.Close(ctx)
	rt, err = autoagent.New(ctx, autoagent.Config{LLM: model(), Sessions: openSessions(t, db)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	res, err := rt.Continue(ctx, k, "again")
	if err != nil || res.Output != "Second." {
		t.Fatalf("second turn: %v %v", res, err)
	}
	msgs, _ := session.Messages(ctx, rt.Sessions(), k)
	if len(msgs) != 4 || msgs[0].Text() != "hello" || msgs[3].Text() != "Second." {
		t.Errorf("the session holds %d messages: %v", len(msgs), msgs)
	}
	none, _ := autoagent.New(ctx, autoagent.Config{LLM: model()})
	defer none.Close(ctx)
	if _, err := none.Continue(ctx, k, "x"); !errors.Is(err, autoagent.ErrNoSessions) {
		t.Errorf("Continue without a store: %v", err)
	}
}

// With a memory that compacts the history, Continue still stores exactly
// the turn: the prompt and the answer, once.
func TestRuntimeContinueWithACompactingMemory(t *testing.T) {
	ctx := context.Background()
	rt, err := autoagent.New(ctx, autoagent.Config{
		LLM:      scripted.NewWithOptions(scripted.Options{PerConversation: true}, scripted.Turn{Text: "A1"}, scripted.Turn{Text: "A2"}, scripted.Turn{Text: "A3"}, scripted.Turn{Text: "A4"}),
		Sessions: openSessions(t, filepath.Join(t.TempDir(), "s.db")),
		Memory:   autoagent.MemoryConfig{Kind: "buffer", MaxMessages: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	k := autoagent.SessionKey{Session: "s"}
	for _, q := range []string{"Q1", "Q2", "Q3"} {
		if _, err := rt.Continue(ctx, k, q); err != nil {
			t.Fatal(err)
		}
	}
	msgs, _ := session.Messages(ctx, rt.Sessions(), k)
	var got []string
	for _, m := range msgs {
		got = append(got, m.Text())
	}
	// (Which scripted answer comes back depends on what the compacted
	// request holds; that each turn is stored once does not.)
	if len(got) != 6 || got[0] != "Q1" || got[2] != "Q2" || got[4] != "Q3" || msgs[1].Role != llm.RoleAssistant || msgs[5].Role != llm.RoleAssistant {
		t.Errorf("the session holds %q: want each prompt once, with its answer", got)
	}
}

// openSessions opens an SQLite session store, closed when the test ends
// (a Runtime does not close the store it is given).
func openSessions(t *testing.T, path string) *sqlitestore.Store {
	t.Helper()
	st, err := sqlitestore.Open(path, sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// resultOf is the content of the result of call id in msgs.
func resultOf(msgs []llm.Message, id string) string {
	for _, m := range msgs {
		for _, r := range m.ToolResults() {
			if r.CallID == id {
				return r.Content
			}
		}
	}
	return ""
}
