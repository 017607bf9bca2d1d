// Package pyprogram runs code mode's programs (package codemode) written in
// Python: CPython 3.11 compiled to WebAssembly with a small C runner
// (pyengine.wasm, built by `make python-engine` from Debian's own source:
// see build/build.sh), one fresh instance per program, served from the
// host's pool of instances in which Python has already started.
//
//	h, _ := host.New(ctx, sandbox.HostOptions(nil)) // tool_call → loop.CallNested
//	programs, err := pyprogram.New(ctx, h, pyprogram.Options{})
//	if err != nil {
//		return err // ErrNoEngine says how to build the engine
//	}
//	defer programs.Close(ctx)
//	agent.CodeMode = codemode.Config{Mode: codemode.Only, Runner: codemode.Languages{
//		codemode.JavaScript: jsRunner, codemode.Python: programs}}
//
// A program is the body of a function: tools.get_order(id=7) (or
// tools.get_order({"id": 7})) calls a tool and gives its structured
// content, or its text (parsed when it is a JSON object or array), as
// dicts and lists; a refused or failed call raises ToolError; return VALUE
// gives the result and print adds to the console. It can import only the
// builtin modules and the stdlib modules frozen into the engine
// (build/frozen-modules.txt), and reach nothing but the run's tools: the
// engine has no file system, network or environment; its clock is fixed,
// its random source seeded and its hash seed 0, so a program run again
// makes the same calls. The host's limits bound its time, memory and
// output.
package pyprogram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/tool"
)

// EngineFile is the engine module's file name.
const EngineFile = "pyengine.wasm"

// EngineEnv names the environment variable that points at the engine
// module.
const EngineEnv = "AUTOAGENT_PY_ENGINE"

// ErrNoEngine is wrapped by New's error when the engine module is not
// built; the message says how to build it.
var ErrNoEngine = errors.New("pyprogram: the Python engine is not built")

// Options configure a Runner. The zero value works once the engine is
// built (make python-engine).
type Options struct {
	// Engine is the path of the engine module (pyengine.wasm); "" finds it
	// as FindEngine does: $AUTOAGENT_PY_ENGINE, else the user cache.
	Engine string
	// Limits bound each program; zero fields take the host's defaults
	// (64 MiB of memory, 10 s, 1 MiB of output).
	Limits host.Limits
	// Progress, when set, is told when loading the engine takes long (its
	// first compilation takes seconds; later ones hit the disk cache).
	Progress io.Writer
}

// Runner runs Python programs; it implements codemode.Runner and is safe
// for concurrent use. Close it when done.
type Runner struct {
	l *host.Loaded
	t tool.Tool
}

var _ codemode.Runner = (*Runner)(nil)

// programSidecar describes the engine's one tool, run_program, whose
// arguments are a codemode.Program.
var programSidecar = []byte(`{"tools":[{"name":"run_program","description":"runs a code-mode program in Python",` +
	`"inputSchema":{"type":"object","properties":{"code":{"type":"string"},"language":{"type":"string"},"tools":{"type":"array","items":{"type":"string"}}},"required":["code"]}}]}`)

// FindEngine returns the path of the engine module: $AUTOAGENT_PY_ENGINE
// when set, else autoagent/python/pyengine.wasm in the user cache
// directory. It never takes the engine in the .cache/python of a checkout
// holding the working directory: the engine runs with every tool of a run
// (host.Module.CallAnyTool), and a repository someone cloned is not
// trusted to bring the code that gets them (the JavaScript engine's rule:
// synth.FindEngine). `make` names the checkout's engine in the variable
// for what it runs. The error wraps ErrNoEngine and says how to build the
// engine and name it.
func FindEngine() (string, error) {
	var tried []string
	try := func(p string) bool {
		tried = append(tried, p)
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	if env := os.Getenv(EngineEnv); env != "" && try(env) {
		return env, nil
	}
	if c, err := os.UserCacheDir(); err == nil {
		if p := filepath.Join(c, "autoagent", "python", EngineFile); try(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %s not found (looked in %v); build it with `make python-engine` in the autoagent checkout "+
		"(CPython from Debian's source for wasm32-wasi: about 10 minutes on 2 cores the first time) and set %s to the path of its .cache/python/%s, "+
		"or copy it into the user cache's autoagent/python (a working directory's checkout is not searched: its engine would run with every tool of the run)",
		ErrNoEngine, EngineFile, tried, EngineEnv, EngineFile)
}

// New loads the engine into h and returns a Runner. h's Options.CallTool
// receives the programs' calls: sandbox.HostOptions wires it to
// loop.CallNested, the run's gate.
func New(ctx context.Context, h *host.Host, o Options) (*Runner, error) {
	path := o.Engine
	if path == "" {
		p, err := FindEngine()
		if err != nil {
			return nil, err
		}
		path = p
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %v (build it with `make python-engine`)", ErrNoEngine, path, err)
	}
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, fmt.Errorf("%w: %s is not a WebAssembly module; rebuild it with `make python-engine`", ErrNoEngine, path)
	}
	done := slow(o.Progress, fmt.Sprintf("pyprogram: loading the Python engine (%.1f MB); the first time it is compiled to machine code, which takes a while", float64(len(b))/1e6))
	l, err := h.Load(ctx, host.Module{
		Name: codemode.ToolName, Bytes: b, Sidecar: programSidecar,
		Limits: o.Limits, CallAnyTool: true, Deterministic: true,
	})
	done()
	if err != nil {
		return nil, fmt.Errorf("pyprogram: loading the Python engine %s: %w", path, err)
	}
	t, ok := l.Tool(codemode.ToolName)
	if !ok {
		_ = l.Close(ctx)
		return nil, fmt.Errorf("pyprogram: the engine %s serves no %s tool", path, codemode.ToolName)
	}
	return &Runner{l: l, t: t}, nil
}

// Run runs p, a Python program, in a fresh engine instance with ctx (the
// run_program call's: the program's calls go to the run through it). The
// result's text and structured content are {"result": VALUE, "console":
// "..."}; a program that raises, does not compile or passes a limit gives
// an error result saying what, and where in the program.
func (r *Runner) Run(ctx context.Context, p codemode.Program) (tool.Result, error) {
	if p.Tools == nil {
		p.Tools = []string{}
	}
	p.Language = codemode.Python
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
		res = explainStop(res)
	}
	return res, err
}

// explainStop rewrites the sandbox's words for a program it stopped: its
// limits speak of a tool, a trap of the module; say it is the program, and
// what to do.
func explainStop(res tool.Result) tool.Result {
	text := res.Text()
	switch {
	case strings.HasPrefix(text, "tool exceeded its "):
		return tool.Errorf("the program was stopped: it exceeded its %s (the sandbox's bound on one program); do less in one program, or split the work over several",
			strings.TrimPrefix(text, "tool exceeded its "))
	case strings.HasPrefix(text, "tool "+codemode.ToolName+" returned an invalid result: empty output"):
		return tool.Errorf("the program was stopped: it ended the Python engine (os._exit, say) before it returned; end it with return VALUE")
	case strings.HasPrefix(text, "tool "+codemode.ToolName+" trapped"), strings.Contains(text, "wasm error: "):
		return tool.Errorf("the program was stopped: the Python engine failed (%s); most often a recursion past the engine's stack after sys.setrecursionlimit: keep the default limit, or recurse less deeply", text)
	}
	return res
}

// Languages are the languages r runs: Python (see codemode.Languages).
func (r *Runner) Languages() []string { return []string{codemode.Python} }

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
