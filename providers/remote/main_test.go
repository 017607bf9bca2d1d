package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"strings"
	"testing"
	"time"

	plugin "github.com/hashicorp/go-plugin"

	"github.com/autoagent-go/autoagent/internal/backend"
	"github.com/autoagent-go/autoagent/internal/backend/backendtest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/catalog"
)

// The test binary doubles as the backend: started with testBackendEnv set,
// TestMain serves a fake provider instead of running the tests (go-plugin's
// TestHelperProcess pattern, without the test runner's output on stdout).
const (
	testBackendEnv = "AUTOAGENT_TEST_PROVIDER_BACKEND"
	testDirEnv     = "AUTOAGENT_TEST_DIR" // where the fake leaves markers
)

func TestMain(m *testing.M) {
	switch os.Getenv(testBackendEnv) {
	case "":
		os.Exit(m.Run())
	case "fake":
		Serve(&fake{dir: os.Getenv(testDirEnv)})
	case "http":
		// What cmd/autoagent-provider-http does, with this binary's args.
		cfg, err := catalog.ParseArgs("autoagent-provider-http", os.Args[1:], catalog.HTTPNames())
		if err == nil {
			var p llm.Provider
			if p, err = catalog.New(cfg); err == nil {
				Serve(p)
				break
			}
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	case "scenario":
		Serve(newScenarioProvider())
	case "v2only":
		// A backend from a future build that dropped protocol version 1.
		backend.Serve(map[int]plugin.PluginSet{2: versions(&fake{})[1]})
	default:
		fmt.Fprintln(os.Stderr, "unknown test backend", os.Getenv(testBackendEnv))
		os.Exit(3)
	}
	os.Exit(0)
}

// fake is the provider the test backend serves. The last user message
// selects its behaviour:
//
//	mirror        answer with the request's last message, unchanged
//	fail          return a fully populated *llm.ProviderError
//	block         mark "started", wait for ctx, mark "cancelled"
//	panic         panic
//	env           answer with the environment, one variable a line
//	anything else answer "echo: " + the text
type fake struct{ dir string }

func (f *fake) Name() string { return "fake" }

func (f *fake) mark(name string) { backendtest.Mark(f.dir, name) }

var testUsage = &llm.Usage{InputTokens: 11, OutputTokens: 7, CachedTokens: 3, TotalTokens: 18}

func lastUser(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Text()
		}
	}
	return ""
}

func testProviderError() *llm.ProviderError {
	return &llm.ProviderError{
		Provider: "fake", Status: 429, Code: "rate_limit_exceeded", Message: "slow down",
		Retryable: true, RetryAfter: 2500 * time.Millisecond, RequestID: "req_123",
		Err: fmt.Errorf("upstream: %w", llm.ErrIncompleteStream),
	}
}

func (f *fake) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	switch p := lastUser(req); p {
	case "mirror":
		return &llm.Response{Message: req.Messages[len(req.Messages)-1], Usage: testUsage, FinishReason: llm.FinishStop, Model: req.Model, ID: "resp_1"}, nil
	case "fail":
		return nil, testProviderError()
	case "block":
		f.mark("started")
		<-ctx.Done()
		f.mark("cancelled")
		return nil, ctx.Err()
	case "panic":
		panic("fake backend: boom")
	case "env":
		return &llm.Response{Message: llm.AssistantText(strings.Join(os.Environ(), "\n"))}, nil
	default:
		return &llm.Response{Message: llm.AssistantText("echo: " + p), Usage: testUsage, FinishReason: llm.FinishStop}, nil
	}
}

// Stream yields "echo: " and the prompt as two deltas, a tool call and the
// done event; "block" yields one delta, then waits for ctx or yield false;
// "fail" yields one delta, then the error.
func (f *fake) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		p := lastUser(req)
		if !yield(llm.StreamEvent{Type: llm.StreamText, Text: "echo: "}, nil) {
			f.mark("stopped")
			return
		}
		switch p {
		case "block":
			f.mark("started")
			<-ctx.Done()
			f.mark("cancelled")
			yield(llm.StreamEvent{}, ctx.Err())
			return
		case "fail":
			yield(llm.StreamEvent{}, testProviderError())
			return
		case "truncated":
			return // a buggy provider: no done event
		}
		if !yield(llm.StreamEvent{Type: llm.StreamText, Text: p}, nil) {
			f.mark("stopped")
			return
		}
		call := llm.ToolCall{ID: "call_1", Name: "lookup", Arguments: json.RawMessage(`{"q":"x"}`)}
		if !yield(llm.StreamEvent{Type: llm.StreamToolCall, ToolCall: &call}, nil) {
			f.mark("stopped")
			return
		}
		msg := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart("echo: " + p), llm.ToolCallPart(call)}}
		yield(llm.StreamEvent{Type: llm.StreamDone, Response: &llm.Response{Message: msg, Usage: testUsage, FinishReason: llm.FinishToolCalls}}, nil)
	}
}

// startFake starts the fake backend and closes it when the test ends.
func startFake(t testing.TB, opts Options) (*Provider, string) {
	t.Helper()
	dir := t.TempDir()
	if opts.Path == "" {
		opts.Path = os.Args[0]
	}
	if opts.Name == "" {
		opts.Name = "fake"
	}
	// A race-enabled child sleeps a second at exit unless told otherwise.
	opts.Env = append([]string{testBackendEnv + "=fake", testDirEnv + "=" + dir, "GORACE=atexit_sleep_ms=0"}, opts.Env...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := New(ctx, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p, dir
}
