package mcp_test

import (
	"context"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/tool"
)

// TestCloseLeavesNoGoroutine connects through each transport, calls a
// tool, closes, and checks that every goroutine the client started ended.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	srv := mcp.NewServer(mcp.ServerOptions{})
	if err := srv.SetTools([]tool.Tool{echoTool()}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close()

	for name, opts := range map[string]func() mcp.ClientOptions{
		"command": func() mcp.ClientOptions {
			return mcp.ClientOptions{Command: helperCommand(t), Env: []string{helperEnv + "=server"}}
		},
		"http": func() mcp.ClientOptions { return mcp.ClientOptions{URL: hs.URL} },
	} {
		t.Run(name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			c, err := mcp.Connect(context.Background(), opts())
			if err != nil {
				t.Fatal(err)
			}
			echo, _ := c.Tool("echo")
			mustCall(t, echo, `{"msg":"x"}`)
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the client's goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
		})
	}
}
