package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/marker"
	"github.com/autoagent-go/autoagent/mcp"
)

// The test binary plays the helpdesk server when this variable is set.
const serveEnv = "EXAMPLES_MCP_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) != "" {
		if err := serve(context.Background()); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func server(t *testing.T, trusted bool) mcp.ClientOptions {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcp.ClientOptions{Command: []string{self}, Env: []string{serveEnv + "=1"}, Trusted: trusted}
}

func TestMCPToolsAreUntrustedByDefault(t *testing.T) {
	var out bytes.Buffer
	o, err := run(context.Background(), &out, server(t, false))
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if o.posted != 0 {
		t.Fatalf("the key was posted\n%s", out.String())
	}
	if !o.result.Tainted {
		t.Errorf("reading the MCP tool's result did not taint the run")
	}
	var ticket, webhook string
	for _, m := range o.result.Messages {
		for _, r := range m.ToolResults() {
			switch r.Name {
			case "helpdesk_read_ticket":
				ticket = r.Content
			case "post_webhook":
				webhook = r.Content
			}
		}
	}
	if !strings.HasPrefix(ticket, marker.UntrustedOpen) || !strings.Contains(ticket, "Ticket #4711") {
		t.Errorf("the ticket did not reach the model framed as untrusted data: %q", ticket)
	}
	if !strings.HasPrefix(webhook, "EgressBlocked: ") {
		t.Errorf("post_webhook result %q, want the trifecta guard's refusal", webhook)
	}
}

// A server the user declares trusted taints nothing: the same run posts
// the key, which is what the default protects against.
func TestTrustedServerIsNotGuarded(t *testing.T) {
	var out bytes.Buffer
	o, err := run(context.Background(), &out, server(t, true))
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if o.posted != 1 || o.result.Tainted {
		t.Errorf("posted %d, tainted %v; want the webhook called once on an untainted run", o.posted, o.result.Tainted)
	}
}
