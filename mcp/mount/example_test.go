package mount_test

import (
	"context"
	"log"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/mcp/mount"
	"github.com/autoagent-go/autoagent/providers/catalog"
)

// A runtime with the tools of an MCP server started as a process, and of
// one reached over streamable HTTP, whose results are trusted.
func Example() {
	ctx := context.Background()
	model, err := catalog.New(catalog.Config{Name: "openai"}) // reads OPENAI_API_KEY
	if err != nil {
		log.Fatal(err)
	}
	rt, err := autoagent.New(ctx, autoagent.Config{
		LLM: model,
		Features: []autoagent.Feature{mount.Servers{
			{Command: []string{"node", "crm-server.js"}, Prefix: "crm_"},
			{URL: "http://127.0.0.1:8931/mcp", Prefix: "ours_", Trusted: true},
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
}

// Load reads an agent file's mcp key only with mount.Keys among its
// readers; without it, a file naming MCP servers is an error saying so.
func ExampleKeys() {
	af, err := autoagent.Load("agent.yaml", mount.Keys())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	rt, err := autoagent.New(ctx, af.Config)
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
}
