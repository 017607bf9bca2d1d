package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/syncbuf"
	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/tool"
)

// A client that writes its requests and closes its end at once (a shell
// pipe) gets every answer: the end of input waits for the work in flight.
func TestServeIOAnswersEverythingReadBeforeTheEnd(t *testing.T) {
	release := make(chan struct{})
	slow := fnTool("slow", `{"type":"object"}`, func(ctx context.Context, _ tool.Call) (tool.Result, error) {
		select {
		case <-release:
			return tool.Text("slept"), nil
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	})
	srv := mcp.NewServer(mcp.ServerOptions{})
	if err := srv.SetTools([]tool.Tool{echoTool(), slow}); err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"slow","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"msg":"hi"}}}`,
	}, "\n") // no final newline: the last message is still one
	var out syncbuf.Buffer
	served := make(chan error, 1)
	go func() { served <- srv.ServeIO(context.Background(), strings.NewReader(in), &out) }()

	select {
	case err := <-served:
		t.Fatalf("ServeIO returned (%v) while a call was still running; output:\n%s", err, out.String())
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-served; err != nil {
		t.Fatalf("ServeIO: %v", err)
	}
	answered := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		answered[string(m.ID)] = string(m.Result)
	}
	for _, id := range []string{`1`, `2`, `"three"`, `4`} {
		if _, ok := answered[id]; !ok {
			t.Errorf("request %s got no answer; output:\n%s", id, out.String())
		}
	}
	if !strings.Contains(answered[`"three"`], "slept") || !strings.Contains(answered[`4`], "hi") {
		t.Errorf("tool answers: %q, %q", answered[`"three"`], answered[`4`])
	}
}

// A request the client cancelled is not answered, so it is not waited for.
func TestServeIODoesNotWaitForACancelledRequest(t *testing.T) {
	block := fnTool("block", `{"type":"object"}`, func(ctx context.Context, _ tool.Call) (tool.Result, error) {
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	})
	// A drain timeout far beyond the test's: were the cancelled request
	// still awaited, only the context would end ServeIO, with its error.
	srv := mcp.NewServer(mcp.ServerOptions{DrainTimeout: time.Hour})
	if err := srv.SetTools([]tool.Tool{block}); err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`,
	}, "\n") + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.ServeIO(ctx, strings.NewReader(in), &syncbuf.Buffer{}); err != nil || ctx.Err() != nil {
		t.Fatalf("ServeIO: %v, context %v (it waited for a request the client cancelled)", err, ctx.Err())
	}
}

// A request whose handler waits for the session to end is given up on
// after DrainTimeout: the end of input does not keep the session open for
// ever.
func TestServeIOGivesUpAfterDrainTimeout(t *testing.T) {
	block := fnTool("block", `{"type":"object"}`, func(ctx context.Context, _ tool.Call) (tool.Result, error) {
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	})
	srv := mcp.NewServer(mcp.ServerOptions{DrainTimeout: 50 * time.Millisecond})
	if err := srv.SetTools([]tool.Tool{block}); err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`,
	}, "\n") + "\n"
	served := make(chan error, 1)
	go func() { served <- srv.ServeIO(context.Background(), strings.NewReader(in), &syncbuf.Buffer{}) }()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("ServeIO: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ServeIO still waiting for a call that is never answered, long after DrainTimeout")
	}
}
