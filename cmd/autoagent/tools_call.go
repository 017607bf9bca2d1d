package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/safefile"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/tool"
)

func init() { addToolsCommand(newToolsCallCmd) }

// callFlags are the flags of `tools call`.
type callFlags struct {
	paths   pluginPaths
	tool    string
	args    string
	grants  []string
	timeout time.Duration
	memory  int64
}

func newToolsCallCmd() *cobra.Command {
	var f callFlags
	c := &cobra.Command{
		Use:   "call FILE.wasm|NAME --args JSON [--tool T] [--grant G]... [--timeout D] [--memory MB] [--plugins DIR] [--manifest FILE]",
		Short: "Call one tool of a WebAssembly module in the sandbox and print its result",
		Long: `Call one tool of a WebAssembly module in the sandbox and print its result
(JSON: content, structuredContent, isError) on stdout.

A FILE.wasm runs with exactly the --grant flags given and nothing else
(its describe sidecar FILE.tool.json is read when present). A NAME is an
approved module of the plugins directory (by approval name or file name)
and runs with its approved grants and limits.

Exit status: 0 when the call ran, even if the tool reported an error;
1 when the sandbox refused or stopped it (a missing grant, a limit, a
crash, an invalid result) or the module could not be loaded; 2 on a usage
error.`,
		Example: `  autoagent tools call plugins/fetch_url.wasm --args '{"url":"https://api.example.com/v1"}' --grant net:api.example.com
  autoagent tools call echo.wasm --tool echo --args '{"city":"Oslo"}' --timeout 2s
  autoagent tools call fetch_url --args '{"url":"https://api.example.com/v1"}'`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("want one FILE.wasm or NAME, got %d arguments", len(args)))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			return runToolsCall(c, args[0], f)
		},
	}
	fl := c.Flags()
	f.paths.register(fl)
	fl.StringVar(&f.tool, "tool", "", "the tool to call (needed when the module has several)")
	fl.StringVar(&f.args, "args", "", "the tool's arguments, a JSON object (required)")
	fl.StringArrayVar(&f.grants, "grant", nil, "a capability for a FILE (repeatable): net:HOST, fs.read:PATH, env:NAME, kv:NS, clock, random, ...")
	fl.DurationVar(&f.timeout, "timeout", 0, "wall-time limit of the call (default 10s)")
	fl.Int64Var(&f.memory, "memory", 0, "memory limit in MiB (default 64)")
	return c
}

func runToolsCall(c *cobra.Command, target string, f callFlags) error {
	if !c.Flags().Changed("args") {
		return usageError(errors.New("--args JSON is required (use '{}' for no arguments)"))
	}
	args := json.RawMessage(f.args)
	if trimmed := bytes.TrimSpace(args); !json.Valid(trimmed) || len(trimmed) == 0 || trimmed[0] != '{' {
		return usageError(fmt.Errorf("--args must be a JSON object, got %q", f.args))
	}
	if f.timeout < 0 || f.memory < 0 || f.memory > 4096 {
		return usageError(errors.New("--timeout must be positive and --memory between 1 and 4096 MiB"))
	}
	limits := host.Limits{Timeout: f.timeout, Memory: f.memory << 20}

	ctx := c.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	var rec *host.CallRecord
	h, err := host.New(ctx, host.Options{
		PoolSize: -1, // one call: a pool would only instantiate for nothing
		OnCall:   func(_ context.Context, r host.CallRecord) { rec = &r },
		// Whatever --grant says: this program, the backends and the
		// trust store stay out of reach.
		Protected: autoagent.Config{}.Protects(),
	})
	if err != nil {
		return err
	}
	defer h.Close(context.Background())

	var t tool.Tool
	if isModuleFile(target) {
		t, err = fileTool(ctx, h, target, f, limits)
	} else {
		if len(f.grants) > 0 || f.timeout != 0 || f.memory != 0 {
			return usageError(fmt.Errorf("%s is a plugin name: it runs with its approved grants and limits, so --grant, --timeout and --memory apply only to a FILE.wasm", target))
		}
		t, err = namedTool(ctx, h, target, f)
	}
	if err != nil {
		return err
	}

	res, callErr := t.Call(ctx, tool.Call{ID: "cli", Name: t.Spec().Name, Arguments: args})
	out, err := json.Marshal(newCallOutput(res))
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(c.OutOrStdout(), "%s\n", out); err != nil {
		return err
	}
	if callErr != nil {
		return callErr
	}
	if rec != nil && !rec.Outcome.Ran() {
		return fmt.Errorf("%s (%s)", termtext.Name(res.Text()), rec.Outcome)
	}
	return nil
}

// callOutput is what tools call prints: the tool's Result with every key
// docs/ARCHITECTURE.md §8 names always present, so a script can read isError without
// treating a missing key as false, and content is a list even when empty.
type callOutput struct {
	Content           []tool.Content  `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError"`
}

func newCallOutput(r tool.Result) callOutput {
	out := callOutput{Content: r.Content, StructuredContent: r.StructuredContent, IsError: r.IsError}
	if out.Content == nil {
		out.Content = []tool.Content{}
	}
	return out
}

// isModuleFile tells a FILE.wasm from a plugin NAME: a path to an existing
// file, or anything ending in .wasm or containing a path separator.
func isModuleFile(target string) bool {
	if strings.HasSuffix(target, ".wasm") || strings.ContainsRune(target, os.PathSeparator) {
		return true
	}
	st, err := os.Stat(target)
	return err == nil && !st.IsDir()
}

// fileTool loads FILE with exactly the --grant flags.
func fileTool(ctx context.Context, h *host.Host, file string, f callFlags, limits host.Limits) (tool.Tool, error) {
	grants, err := parseCLIGrants(f.grants)
	if err != nil {
		return nil, usageError(err)
	}
	b, err := safefile.Read(file, maxModuleFile)
	if err != nil {
		return nil, err
	}
	var sidecar []byte
	sc := strings.TrimSuffix(file, ".wasm") + ".tool.json"
	if sb, err := safefile.Read(sc, maxModuleFile); err == nil {
		sidecar = sb
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	name := strings.TrimSuffix(baseName(file), ".wasm")
	l, err := h.Load(ctx, host.Module{Name: name, Bytes: b, Grants: grants, Limits: limits, Sidecar: sidecar})
	if err != nil {
		return nil, err
	}
	return pickTool(l.Tools(), f.tool, name, file)
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// namedTool finds NAME among the approved plugins of the plugins
// directory (or, failing that, among the tools they expose).
func namedTool(ctx context.Context, h *host.Host, name string, f callFlags) (tool.Tool, error) {
	opts, err := f.paths.dirOptions()
	if err != nil {
		return nil, err
	}
	d, err := plugindir.Open(ctx, h, opts)
	if err != nil {
		return nil, err
	}
	snap := d.Snapshot()
	p, ok := snap.Plugin(name)
	if !ok {
		if t, ok := snap.Tool(name); ok && f.tool == "" {
			return t, nil
		}
		return nil, fmt.Errorf("no plugin named %q in %s (give a FILE.wasm path to call a module that is not in the plugins directory)", name, f.paths.dir())
	}
	if p.Loaded == nil || p.Status != plugindir.StatusApproved {
		reason := ""
		if p.Err != nil {
			reason = ": " + termtext.Name(p.Err.Error())
		}
		if snap.Untrusted != nil {
			return nil, fmt.Errorf("plugin %s is %s%s", name, p.Status, reason)
		}
		return nil, fmt.Errorf("plugin %s is %s%s; approve it with `autoagent tools approve %s`", name, p.Status, reason, p.Path)
	}
	return pickTool(p.Loaded.Tools(), f.tool, name, name)
}

// pickTool returns the tool named want. When want is "" it is the only
// tool, else the tool named like the module (eponym: `tools call read_file`
// on a module offering read_file and list_dir means read_file). module
// names the module in errors.
func pickTool(tools []tool.Tool, want, eponym, module string) (tool.Tool, error) {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Spec().Name
		if t.Spec().Name == want {
			return t, nil
		}
	}
	switch {
	case want != "":
		return nil, usageError(fmt.Errorf("%s has no tool %q (it has: %s)", module, want, strings.Join(names, ", ")))
	case len(tools) == 1:
		return tools[0], nil
	}
	if i := slices.Index(names, eponym); i >= 0 {
		return tools[i], nil
	}
	slices.Sort(names)
	return nil, usageError(fmt.Errorf("%s has %d tools; choose one with --tool (%s)", module, len(tools), strings.Join(names, ", ")))
}
