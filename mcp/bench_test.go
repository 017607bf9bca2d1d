package mcp_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"testing"

	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/tool"
)

// BenchmarkToolCall measures one tool call of 100 bytes of arguments:
// direct (the baseline), and through an MCP client and server over an
// in-process pipe and over streamable HTTP on loopback.
func BenchmarkToolCall(b *testing.B) {
	args := json.RawMessage(`{"msg":"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567"}`)
	call := tool.Call{ID: "c", Name: "echo", Arguments: args}
	run := func(b *testing.B, tl tool.Tool) {
		b.ReportAllocs()
		ctx := context.Background()
		for b.Loop() {
			if res, err := tl.Call(ctx, call); err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, echoTool()) })

	srv := mcp.NewServer(mcp.ServerOptions{})
	if err := srv.SetTools([]tool.Tool{echoTool()}); err != nil {
		b.Fatal(err)
	}
	b.Run("pipe", func(b *testing.B) {
		c := pipeB(b, srv)
		tl, _ := c.Tool("echo")
		run(b, tl)
	})
	b.Run("http", func(b *testing.B) {
		hs := httptest.NewServer(srv)
		defer hs.Close()
		defer srv.Close()
		c, err := mcp.Connect(context.Background(), mcp.ClientOptions{URL: hs.URL})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		tl, _ := c.Tool("echo")
		run(b, tl)
	})
}

func pipeB(b *testing.B, srv *mcp.Server) *mcp.Client {
	a, z := net.Pipe()
	go srv.ServeIO(context.Background(), a, a)
	c, err := mcp.Connect(context.Background(), mcp.ClientOptions{Stream: z})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}
