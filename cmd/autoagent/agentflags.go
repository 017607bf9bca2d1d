package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/spf13/pflag"
)

// agentFlags are the flags `run` and `chat` share (DESIGN.md §8).
type agentFlags struct {
	provider, model, baseURL, apiKeyEnv, script string
	plugins, manifest                           string
	quarantine, stream, json                    bool
	system                                      string
	maxSteps                                    int
	tokenBudget                                 int64
	traceFile                                   string
}

func (f *agentFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.provider, "provider", "openai", "model provider: "+strings.Join(autoagent.ProviderNames(), "|"))
	fs.StringVar(&f.model, "model", "", "model name (default: the provider's default model)")
	fs.StringVar(&f.baseURL, "base-url", "", "provider endpoint (required for openai-compatible, e.g. http://localhost:11434/v1)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "", "environment variable holding the API key (default per provider: OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, DEEPSEEK_API_KEY)")
	fs.StringVar(&f.script, "script", "", "script file played by --provider scripted (offline, for demos and tests)")
	fs.StringVar(&f.plugins, "plugins", "plugins", "plugins directory of sandboxed .wasm tools")
	fs.StringVar(&f.manifest, "manifest", "", "approvals manifest (default: PLUGINS/manifest.json)")
	fs.BoolVar(&f.quarantine, "quarantine", false, "also load modules nobody approved, with no grants at all")
	fs.BoolVar(&f.stream, "stream", false, "print the answer as it arrives, with tool calls on stderr")
	fs.BoolVar(&f.json, "json", false, "print the run's result as one JSON object (output, steps, usage, messages, stop_reason)")
	fs.StringVar(&f.system, "system", "", "system prompt (default: the agent's built-in prompt)")
	fs.IntVar(&f.maxSteps, "max-steps", 0, "maximum model calls in the run (default 8)")
	fs.Int64Var(&f.tokenBudget, "token-budget", 0, "stop the run once input+output tokens reach N (default: no budget)")
	fs.StringVar(&f.traceFile, "trace", "", "append the run's trace events to FILE.jsonl")
}

func (f *agentFlags) validate() error {
	if f.maxSteps < 0 {
		return usageError(fmt.Errorf("--max-steps must be 0 or more, got %d", f.maxSteps))
	}
	if f.tokenBudget < 0 {
		return usageError(fmt.Errorf("--token-budget must be 0 or more, got %d", f.tokenBudget))
	}
	if f.json && f.stream {
		return usageError(errors.New("--json and --stream cannot be combined"))
	}
	return nil
}

// session is an agent built from the flags, with what must be closed after.
type session struct {
	agent   *loop.Agent
	tracer  *trace.Tracer
	host    *host.Host
	plugins *host.Dir
}

func (s *session) Close(ctx context.Context) {
	if s.plugins != nil {
		s.plugins.Close(ctx)
	}
	if s.host != nil {
		s.host.Close(ctx)
	}
	if s.tracer != nil {
		s.tracer.Close()
	}
}

// newSession builds the provider, the tracer, the sandboxed tools of the
// plugins directory and the agent. Notes about plugins that were not loaded
// go to stderr.
func (f *agentFlags) newSession(ctx context.Context, stderr io.Writer) (*session, error) {
	s := &session{}
	p, err := autoagent.NewProvider(autoagent.ProviderConfig{
		Name: f.provider, Model: f.model, BaseURL: f.baseURL, APIKeyEnv: f.apiKeyEnv, ScriptFile: f.script,
	})
	if err != nil {
		if errors.Is(err, autoagent.ErrUnknownProvider) {
			return nil, usageError(err)
		}
		return nil, err
	}
	if f.traceFile != "" {
		if s.tracer, err = trace.OpenFile(f.traceFile); err != nil {
			return nil, err
		}
	}
	reg := &tool.Registry{}
	if _, statErr := os.Stat(f.plugins); statErr == nil {
		s.host, s.plugins, err = autoagent.OpenPlugins(ctx, autoagent.PluginsConfig{
			Dir: f.plugins, Manifest: f.manifest, Quarantine: f.quarantine, Tracer: s.tracer,
		})
		if err != nil {
			s.Close(ctx)
			return nil, fmt.Errorf("loading plugins from %s: %w", f.plugins, err)
		}
		if err := s.plugins.Publish(reg); err != nil {
			fmt.Fprintf(stderr, "autoagent: %v\n", err)
		}
		reportPlugins(stderr, s.plugins.Snapshot())
	} else if f.plugins != "plugins" || f.manifest != "" {
		return nil, fmt.Errorf("plugins directory %s: %w", f.plugins, statErr)
	}
	s.agent = &loop.Agent{
		Provider: p,
		Tools:    reg,
		System:   f.system,
		Model:    f.model,
		Bounds:   loop.Bounds{MaxSteps: f.maxSteps, TokenBudget: f.tokenBudget},
		Tracer:   s.tracer,
	}
	return s, nil
}

// reportPlugins tells the user, on stderr, which plugins did not load.
func reportPlugins(w io.Writer, snap *host.Snapshot) {
	var pending, invalid []string
	for _, p := range snap.Plugins {
		switch p.Status {
		case host.StatusPending:
			pending = append(pending, p.File)
		case host.StatusInvalid:
			invalid = append(invalid, fmt.Sprintf("%s (%v)", p.File, p.Err))
		}
	}
	if len(pending) > 0 {
		fmt.Fprintf(w, "autoagent: %d plugin(s) not approved, not loaded: %s (see `autoagent tools list`, approve with `autoagent tools approve FILE`)\n", len(pending), strings.Join(pending, ", "))
	}
	for _, c := range snap.Conflicts {
		fmt.Fprintf(w, "autoagent: tool conflict: %v\n", c)
	}
	for _, i := range invalid {
		fmt.Fprintf(w, "autoagent: invalid plugin: %s\n", i)
	}
}

// streamRun prints a streamed run: text deltas on stdout, tool activity on
// stderr. It returns what Run would.
func streamRun(out, errw io.Writer, events func(yield func(loop.Event, error) bool)) (*loop.Result, error) {
	var res *loop.Result
	var runErr error
	midLine := false // the answer's last delta did not end a line
	endLine := func() {
		if midLine {
			fmt.Fprintln(out)
			midLine = false
		}
	}
	for ev, err := range events {
		switch ev.Type {
		case loop.EventText:
			fmt.Fprint(out, ev.Text)
			midLine = ev.Text != "" && !strings.HasSuffix(ev.Text, "\n") || midLine && ev.Text == ""
		case loop.EventToolStart:
			endLine()
			if ev.Call != nil {
				fmt.Fprintf(errw, "→ %s %s\n", ev.Call.Name, trace.Preview(string(ev.Call.Arguments), 120))
			}
		case loop.EventToolEnd:
			if ev.ToolResult != nil {
				mark := "✓"
				if ev.ToolResult.IsError {
					mark = "✗"
				}
				fmt.Fprintf(errw, "%s %s: %s\n", mark, ev.ToolResult.Name, trace.Preview(ev.ToolResult.Content, 200))
			}
		case loop.EventCorrection:
			fmt.Fprintf(errw, "\n↺ correction: %s\n", trace.Preview(ev.Text, 200))
		case loop.EventApproval:
			for _, p := range ev.Pending {
				fmt.Fprintf(errw, "⏸ approval required for %s (call %s): %s\n", p.Call.Name, p.Call.ID, p.Reason)
			}
		case loop.EventDone:
			res = ev.Result
		}
		if err != nil {
			runErr = err
		}
	}
	endLine()
	return res, runErr
}
