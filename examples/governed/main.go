// Command governed is a governed agent through the front door: a sandboxed
// tool a person approved (plugins/, package sandbox), the tools of an MCP
// server (package mcp/mount; untrusted: their results taint the run), a
// policy that refuses one of them, and a conversation that continues
// across runs of the program.
//
//	autoagent tools approve plugins/echo.wasm
//	go run ./examples/governed -mcp "node server.js stdio" -script script.jsonl "hello"
//
// Without -script it talks to OpenAI (OPENAI_API_KEY); -provider picks
// another provider by name.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/mcp/mount"
	"github.com/autoagent-go/autoagent/providers/catalog"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/session/sqlitestore"
)

// options are the program's flags.
type options struct {
	provider, script string
	plugins, mcp     string
	policy, sessions string
	session          string
}

func main() {
	var o options
	flag.StringVar(&o.provider, "provider", "openai", "model provider: "+strings.Join(catalog.Names(), ", "))
	flag.StringVar(&o.script, "script", "", "script of the scripted provider (offline); implies -provider scripted")
	flag.StringVar(&o.plugins, "plugins", "plugins", "plugins directory of approved .wasm tools")
	flag.StringVar(&o.mcp, "mcp", "", "command line of an MCP server to mount (words split on spaces)")
	flag.StringVar(&o.policy, "policy", "", "policy file (allow / deny / approve rules)")
	flag.StringVar(&o.sessions, "sessions", "sessions.db", "session store")
	flag.StringVar(&o.session, "session", "governed", "the conversation to continue")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: governed [flags] PROMPT")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Stdout, o, strings.Join(flag.Args(), " ")); err != nil {
		fmt.Fprintln(os.Stderr, "governed:", err)
		os.Exit(1)
	}
}

// run continues the conversation with prompt and prints the answer, the
// tools that ran and whether untrusted content entered the run.
func run(ctx context.Context, out io.Writer, o options, prompt string) error {
	sessions, err := sqlitestore.Open(o.sessions, sqlitestore.Options{})
	if err != nil {
		return err
	}
	defer sessions.Close()
	pc := catalog.Config{Name: o.provider, ScriptFile: o.script}
	if o.script != "" {
		pc.Name = "scripted"
	}
	model, err := catalog.New(pc)
	if err != nil {
		return err
	}
	cfg := autoagent.Config{
		LLM:        model,
		Features:   []autoagent.Feature{&sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Dir: o.plugins, NoWatch: true}}},
		PolicyFile: o.policy,
		Sessions:   sessions,
		Notes:      os.Stderr,
	}
	if o.mcp != "" {
		cfg.Features = append(cfg.Features, mount.Servers{{Command: strings.Fields(o.mcp), Prefix: "mcp_"}})
	}
	rt, err := autoagent.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer rt.Close(ctx)
	res, err := rt.Continue(ctx, autoagent.SessionKey{Session: o.session}, prompt)
	if err != nil {
		return err
	}
	for _, m := range res.Messages {
		for _, r := range m.ToolResults() {
			mark := "ok"
			if r.IsError {
				mark = "refused or failed"
			}
			fmt.Fprintf(out, "tool %s: %s\n", r.Name, mark)
		}
	}
	fmt.Fprintf(out, "tainted: %v\n", res.State.Tainted)
	fmt.Fprintln(out, res.Output)
	return nil
}
