package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/tool"
)

// pipe connects a client to srv in-process and closes both at the end of
// the test.
func pipe(t *testing.T, srv *mcp.Server, opts mcp.ClientOptions) *mcp.Client {
	t.Helper()
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ServeIO(ctx, a, a) }()
	opts.Stream = b
	c, err := mcp.Connect(context.Background(), opts)
	if err != nil {
		cancel()
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("ServeIO after the client closed: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("ServeIO did not return after the client closed")
		}
		cancel()
	})
	return c
}

type echoIn struct {
	Msg   string `json:"msg" jsonschema:"what to echo"`
	Times int    `json:"times,omitempty"`
}

func echoTool() tool.Tool {
	return tool.Must(tool.New("echo", "Echoes msg.", func(_ context.Context, in echoIn) (string, error) {
		out := in.Msg
		for i := 1; i < in.Times; i++ {
			out += " " + in.Msg
		}
		return out, nil
	}))
}

// fnTool is a tool with a hand-written spec and behaviour.
func fnTool(name, schema string, fn func(context.Context, tool.Call) (tool.Result, error)) tool.Tool {
	return &rawTool{spec: llm.ToolSpec{Name: name, Description: "test tool " + name, InputSchema: json.RawMessage(schema)}, fn: fn}
}

type rawTool struct {
	spec llm.ToolSpec
	fn   func(context.Context, tool.Call) (tool.Result, error)
}

func (t *rawTool) Spec() llm.ToolSpec { return t.spec }
func (t *rawTool) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	return t.fn(ctx, c)
}

var _ tool.Tool = (*rawTool)(nil)

func mustCall(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	res, err := tl.Call(context.Background(), tool.Call{ID: "c1", Name: tl.Spec().Name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s(%s): %v", tl.Spec().Name, args, err)
	}
	return res
}

func toolNames(ts []tool.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Spec().Name)
	}
	return out
}

// waitFor polls cond until it holds; list changes arrive asynchronously.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var errBackend = errors.New("backend unreachable")
