// Package jsprogram runs code mode's programs (package codemode) in the
// sandboxed JavaScript engine: goja compiled to WebAssembly (the toolbridge
// build of synth/jsengine, jsengine-tools.wasm), one fresh instance per
// program, served from the host's pool of pre-initialised instances.
//
//	h, _ := host.New(ctx, sandbox.HostOptions(nil)) // tool_call → loop.CallNested
//	programs, err := jsprogram.New(ctx, h, jsprogram.Options{})
//	if err != nil {
//		return err // ErrNoEngine says how to build the engine
//	}
//	defer programs.Close(ctx)
//	agent.CodeMode = codemode.Config{Mode: codemode.Only, Runner: programs}
//
// A program can reach nothing but the run's tools: no file, network,
// environment, timer or module loader; its clock is fixed and its random
// source seeded, so a program run again makes the same calls (see
// codemode). The host's limits bound its time, memory and output.
package jsprogram

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/synth"
	"github.com/autoagent-go/autoagent/tool"
)

// ErrNoEngine is wrapped by New's error when the engine module is not
// built; the message says how to build it.
var ErrNoEngine = synth.ErrNoEngine

// Options configure a Runner. The zero value works once the engine is
// built (make synth-engine-tools).
type Options struct {
	// Engine is the path of the engine module (jsengine-tools.wasm); ""
	// finds it as synth.FindEngine does, which includes the .cache/synth
	// of a checkout holding the working directory: a program working in
	// checkouts it does not trust names it (sandbox.TrustedEngine), as
	// the autoagent command does, since the engine can call every tool.
	Engine string
	// Limits bound each program; zero fields take the host's defaults
	// (64 MiB of memory, 10 s, 1 MiB of output).
	Limits host.Limits
	// Progress, when set, is told when loading the engine takes long (its
	// first compilation takes seconds; later ones hit the disk cache).
	Progress io.Writer
}

// Runner runs programs; it implements codemode.Runner and is safe for
// concurrent use. Close it when done.
type Runner struct {
	l *host.Loaded
	t tool.Tool
}

var _ codemode.Runner = (*Runner)(nil)

// programSidecar describes the engine's one tool, run_program, whose
// arguments are a codemode.Program.
var programSidecar = []byte(`{"tools":[{"name":"run_program","description":"runs a code-mode program",` +
	`"inputSchema":{"type":"object","properties":{"code":{"type":"string"},"language":{"type":"string"},"tools":{"type":"array","items":{"type":"string"}}},"required":["code"]}}]}`)

// New loads the engine into h and returns a Runner. h's Options.CallTool
// receives the programs' calls: sandbox.HostOptions wires it to
// loop.CallNested, the run's gate.
func New(ctx context.Context, h *host.Host, o Options) (*Runner, error) {
	path := o.Engine
	if path == "" {
		p, err := synth.FindEngine(synth.BridgeEngineFile)
		if err != nil {
			return nil, err
		}
		path = p
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("jsprogram: reading the JavaScript engine: %w (build it with `make synth-engine-tools`)", err)
	}
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, fmt.Errorf("%w: %s is not a WebAssembly module; rebuild it with `make synth-engine-tools`", ErrNoEngine, path)
	}
	done := slow(o.Progress, fmt.Sprintf("jsprogram: loading the JavaScript engine (%.1f MB); the first time it is compiled to machine code, which takes a while", float64(len(b))/1e6))
	l, err := h.Load(ctx, host.Module{
		Name: codemode.ToolName, Bytes: b, Sidecar: programSidecar,
		Config: map[string]string{"mode": "program"},
		Limits: o.Limits, CallAnyTool: true, Deterministic: true,
	})
	done()
	if err != nil {
		return nil, fmt.Errorf("jsprogram: loading the JavaScript engine %s: %w", path, err)
	}
	t, ok := l.Tool(codemode.ToolName)
	if !ok {
		_ = l.Close(ctx)
		return nil, fmt.Errorf("jsprogram: the engine %s serves no %s tool", path, codemode.ToolName)
	}
	return &Runner{l: l, t: t}, nil
}

// Run runs p in a fresh engine instance with ctx (the run_program call's:
// the program's calls go to the run through it). The result's text and
// structured content are {"result": VALUE, "console": "..."}; a program
// that throws, does not compile or passes a limit gives an error result
// saying what, and where in the program.
func (r *Runner) Run(ctx context.Context, p codemode.Program) (tool.Result, error) {
	if p.Tools == nil {
		p.Tools = []string{}
	}
	args, err := json.Marshal(p)
	if err != nil {
		return tool.Result{}, err
	}
	c := tool.Call{Name: codemode.ToolName, Arguments: args}
	if info, ok := loop.CallInfoFrom(ctx); ok {
		c.ID = info.CallID
	}
	res, err := r.t.Call(ctx, c)
	if err == nil && res.IsError {
		// The sandbox's limits speak of a tool; say which, and what to do.
		if text := res.Text(); strings.HasPrefix(text, "tool exceeded its ") {
			res = tool.Errorf("the program was stopped: it exceeded its %s (the sandbox's bound on one program); do less in one program, or split the work over several",
				strings.TrimPrefix(text, "tool exceeded its "))
		}
	}
	return res, err
}

// Close unloads the engine.
func (r *Runner) Close(ctx context.Context) error { return r.l.Close(ctx) }

// slow prints msg on w once the work has taken a second; call the
// returned function when it is done.
func slow(w io.Writer, msg string) func() {
	if w == nil {
		return func() {}
	}
	t := time.AfterFunc(time.Second, func() { fmt.Fprintln(w, msg) })
	return func() { t.Stop() }
}
