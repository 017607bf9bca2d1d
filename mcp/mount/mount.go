// Package mount mounts the tools of MCP servers on an autoagent Runtime:
// Servers is a Feature (autoagent.Config.Features), so only a program
// that names this package links MCP's client.
//
//	rt, err := autoagent.New(ctx, autoagent.Config{
//		LLM:      model, // catalog.New(catalog.Config{Name: "openai"})
//		Features: []autoagent.Feature{mount.Servers{
//			{Command: []string{"node", "crm-server.js"}, Prefix: "crm_"},
//		}},
//	})
//
// MCP tools are untrusted by default: their results are framed as data
// and taint the run, after which egress tools are refused (the trifecta
// guard). An agent file's mcp key is read by Keys.
package mount

import (
	"context"
	"fmt"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/mcp"
)

// Server is one MCP server to mount: a stdio Command (argv) or a URL.
type Server struct {
	Command []string
	Env     []string // KEY=VALUE for a Command's process
	URL     string
	// Prefix goes before every tool name; Include, when set, mounts only
	// these tools (server names).
	Prefix  string
	Include []string
	// Trusted reads the server's results as instructions, not only data:
	// leave it false unless the server is yours.
	Trusted bool
	// Egress flags the tools as able to send data out (stopped by the
	// trifecta guard once a run is tainted).
	Egress bool
}

// Servers are the MCP servers a Runtime mounts, connected in order when
// it starts and closed with it.
type Servers []Server

var _ autoagent.Feature = Servers(nil)

// Protects is nil: an MCP server's files are its own process's.
func (Servers) Protects() []manifest.Protected { return nil }

// Start connects to each server (its stderr to the runtime's notes) and
// adds its tools to the runtime's registry. autoagent.New calls it.
func (ss Servers) Start(ctx context.Context, st *autoagent.Setup) error {
	for i, s := range ss {
		c, err := mcp.Connect(ctx, mcp.ClientOptions{
			Command: s.Command, Env: s.Env, URL: s.URL, Prefix: s.Prefix, Include: s.Include,
			Trusted: s.Trusted, Egress: s.Egress, Stderr: st.Notes,
		})
		if err != nil {
			return fmt.Errorf("MCP server %d: %w", i+1, err)
		}
		st.OnClose(func(context.Context) error { return c.Close() })
		if err := c.Publish(st.Tools); err != nil {
			return fmt.Errorf("MCP server %d: %w", i+1, err)
		}
	}
	return nil
}
