package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/pluginload"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/tool"
)

func init() { addCommand(newMCPCmd) }

func newMCPCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve sandboxed tools to other agents over the Model Context Protocol",
	}
	c.AddCommand(newMCPServeCmd())
	return c
}

func newMCPServeCmd() *cobra.Command {
	var (
		paths      pluginPaths
		addr       string
		quarantine bool
		trusted    bool
	)
	c := &cobra.Command{
		Use:   "serve [--plugins DIR] [--manifest FILE] [--http ADDR] [--quarantine] [--trusted-clients]",
		Short: "Serve the approved tools of a plugins directory over MCP (stdio, or streamable HTTP)",
		Long: `Serve the approved sandboxed tools of a plugins directory to MCP clients
(Claude Desktop, IDEs, other agents), each tool running in the WebAssembly
sandbox with exactly the grants and limits the manifest approved.

By default the server speaks MCP on standard input and output: configure
the client to run "autoagent mcp serve --plugins /path/to/plugins". With
--http ADDR it serves streamable HTTP at http://ADDR/mcp instead; there is
no authentication, so keep ADDR on a loopback address (127.0.0.1:8080) or
put an authenticating proxy in front.

The directory and the manifest are watched: approving, revoking, adding or
removing a module changes the served tools while serving, and clients are
notified (notifications/tools/list_changed). Diagnostics go to standard
error. The server stops on SIGINT or SIGTERM, and on stdio when the client
closes its input.

Each call runs tainted: a client's arguments come from another agent's
model, so what a tool writes for it (a kv value) stays untrusted when an
autoagent run reads it back. --trusted-clients runs calls as your own.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return serveMCP(c, paths, addr, quarantine, trusted)
		},
	}
	paths.register(c.Flags())
	c.Flags().StringVar(&addr, "http", "", "serve streamable HTTP at ADDR (host:port, e.g. 127.0.0.1:8080) instead of stdio")
	c.Flags().BoolVar(&quarantine, "quarantine", false, "also serve modules nobody approved, with no grants at all")
	c.Flags().BoolVar(&trusted, "trusted-clients", false, "run the clients' calls untainted, as your own (default: tainted, see above)")
	return c
}

func serveMCP(c *cobra.Command, paths pluginPaths, addr string, quarantine, trusted bool) error {
	stderr := c.ErrOrStderr()
	ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if fi, err := os.Stat(paths.dir()); err != nil || !fi.IsDir() {
		return fmt.Errorf("plugins directory %s does not exist: create it, put .wasm tools in it and approve them with `autoagent tools approve FILE`", paths.dir())
	}
	var ln net.Listener
	if addr != "" {
		var err error
		if ln, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("--http %s: %w", addr, err)
		}
		defer ln.Close()
	}

	trust, err := trustStore(paths.dir())
	if err != nil {
		return err
	}
	hopts := sandbox.HostOptions(nil)
	hopts.Protected = autoagent.Config{Features: []autoagent.Feature{&sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Trust: trust}}}}.Protects()
	h, dir, err := pluginload.Open(ctx, hopts, plugindir.Options{Dir: paths.dir(), Manifest: paths.manifest, Quarantine: quarantine, Trust: trust})
	if err != nil {
		return fmt.Errorf("loading plugins from %s: %w", paths.dir(), err)
	}
	defer h.Close(context.WithoutCancel(ctx))
	defer dir.Close(context.WithoutCancel(ctx))

	srv := mcp.NewServer(mcp.ServerOptions{Name: "autoagent", Version: version, TrustedClients: trusted})
	defer srv.Close()
	serveTools := func() []tool.Tool {
		tools := dir.Tools()
		if err := srv.SetTools(tools); err != nil {
			fmt.Fprintf(stderr, "autoagent: %s\n", termtext.Text(err.Error()))
		}
		prompts, resources := pluginCatalog(dir.Snapshot())
		if err := srv.SetPrompts(prompts); err != nil {
			fmt.Fprintf(stderr, "autoagent: %s\n", termtext.Text(err.Error()))
		}
		if err := srv.SetResources(resources); err != nil {
			fmt.Fprintf(stderr, "autoagent: %s\n", termtext.Text(err.Error()))
		}
		return tools
	}
	tools := serveTools()
	pluginload.Report(stderr, dir.Snapshot())

	watchCtx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for ch, err := range dir.Watch(watchCtx) {
			if err != nil {
				fmt.Fprintf(stderr, "autoagent: plugins: %s\n", termtext.Text(err.Error()))
				continue
			}
			serveTools()
			fmt.Fprintf(stderr, "autoagent: tools changed: %s\n", describeChange(ch))
		}
	})
	defer wg.Wait()
	defer stopWatch()

	if ln == nil {
		fmt.Fprintf(stderr, "autoagent: serving %s over MCP on stdio\n", toolList(tools))
		// The protocol's stream is for a program, and JSON-RPC escapes
		// what it carries.
		err = srv.ServeIO(ctx, c.InOrStdin(), rawWriter(c.OutOrStdout()))
	} else {
		err = serveMCPHTTP(ctx, stderr, srv, ln, tools)
	}
	if errors.Is(err, context.Canceled) {
		return nil // SIGINT or SIGTERM: a normal end
	}
	return err
}

// pluginCatalog returns the prompts, resources and resource templates of
// the loaded plugins (hyper-mcp v2 plugins list them), for mcp serve. A
// name (a prompt's) or URI (a resource's) offered twice is served from
// the first plugin offering it, approved plugins first: a quarantined
// drop-in nobody approved cannot take an approved plugin's prompt or
// resource (found by attacking our own sandbox), as it cannot take its
// tools.
func pluginCatalog(snap *plugindir.Snapshot) ([]mcp.Prompt, []mcp.Resource) {
	var (
		prompts   []mcp.Prompt
		resources []mcp.Resource
		taken     = map[string]bool{}
	)
	add := func(key string) bool {
		if taken[key] {
			return false
		}
		taken[key] = true
		return true
	}
	for _, approved := range []bool{true, false} {
		for _, p := range snap.Plugins {
			l := p.Loaded
			if l == nil || (p.Status == plugindir.StatusApproved) != approved {
				continue
			}
			for _, pr := range l.Prompts() {
				if !add("prompt " + pr.Name) {
					continue
				}
				def, _ := json.Marshal(pr)
				name := pr.Name
				prompts = append(prompts, mcp.Prompt{Definition: def, Complete: l.Complete,
					Get: func(ctx context.Context, args map[string]string) (json.RawMessage, error) {
						return l.GetPrompt(ctx, name, args)
					}})
			}
			for _, r := range l.Resources() {
				if !add("resource " + r.URI) {
					continue
				}
				def, _ := json.Marshal(r)
				resources = append(resources, mcp.Resource{Definition: def, Read: l.ReadResource, Complete: l.Complete})
			}
			for _, r := range l.ResourceTemplates() {
				if !add("template " + r.URITemplate) {
					continue
				}
				def, _ := json.Marshal(r)
				resources = append(resources, mcp.Resource{Definition: def, Template: true, Read: l.ReadResource, Complete: l.Complete})
			}
		}
	}
	return prompts, resources
}

// serveMCPHTTP serves srv at /mcp on ln until ctx ends, then closes the
// MCP sessions (their event streams would keep the server busy) and shuts
// the HTTP server down.
func serveMCPHTTP(ctx context.Context, stderr io.Writer, srv *mcp.Server, ln net.Listener, tools []tool.Tool) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + "/mcp"
	fmt.Fprintf(stderr, "autoagent: serving %s over MCP at %s\n", toolList(tools), url)
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(stderr, "autoagent: warning: %s is not a loopback address and MCP has no authentication here: anyone who can reach it can call these tools\n", ln.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	srv.Close()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return ctx.Err()
}

func toolList(tools []tool.Tool) string {
	if len(tools) == 0 {
		return "no tools yet (approve modules with `autoagent tools approve FILE`; they appear while serving)"
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Spec().Name
	}
	return fmt.Sprintf("%d tool(s) (%s)", len(tools), strings.Join(names, ", "))
}

func describeChange(ch plugindir.Change) string {
	var parts []string
	for _, p := range []struct {
		sign  string
		names []string
	}{{"+", ch.Added}, {"-", ch.Removed}, {"~", ch.Replaced}} {
		if len(p.names) > 0 {
			parts = append(parts, p.sign+strings.Join(p.names, " "+p.sign))
		}
	}
	if len(parts) == 0 {
		return "no tool added or removed"
	}
	return strings.Join(parts, " ")
}
