package synth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// The engine's file names: the plain engine, and the code-mode build that
// offers tools.call (it imports the host's tool_call function, so it only
// loads with a tools: grant).
const (
	EngineFile       = "jsengine.wasm"
	BridgeEngineFile = "jsengine-tools.wasm"
)

// EngineEnv names the environment variable that points at the engine
// module; the code-mode build is looked up beside it.
const EngineEnv = "AUTOAGENT_JS_ENGINE"

// checkTool is the engine's probe tool (synth/jsengine reply.go).
const checkTool = "autoagent_check"

// FindEngine returns the path of the JavaScript engine module: file
// (EngineFile or BridgeEngineFile) in the directory of $AUTOAGENT_JS_ENGINE
// when set (for EngineFile, the variable's own path), else in the user
// cache directory (autoagent/synth). It never takes the engine in the
// .cache/synth of a checkout holding the working directory: every
// JavaScript tool is that module (the code-mode build runs with tools:
// grants, or with every tool of a run), and a repository someone cloned
// is not trusted to bring the code that gets them. The error wraps
// ErrNoEngine and says how to build the engine and name it.
func FindEngine(file string) (string, error) {
	var tried []string
	try := func(p string) bool {
		tried = append(tried, p)
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	if env := os.Getenv(EngineEnv); env != "" {
		p := env
		if file != EngineFile {
			p = filepath.Join(filepath.Dir(env), file)
		}
		if try(p) {
			return p, nil
		}
	}
	if c, err := os.UserCacheDir(); err == nil {
		if p := filepath.Join(c, "autoagent", "synth", file); try(p) {
			return p, nil
		}
	}
	target := "synth-engine"
	tags := ""
	if file == BridgeEngineFile {
		target, tags = "synth-engine-tools", " -tags toolbridge"
	}
	return "", fmt.Errorf("%w: %s not found (looked in %v); build it with `make %s` in the autoagent checkout "+
		"(or in its synth/jsengine directory with `GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared%s -o %s .`) "+
		"and set %s to the path of its .cache/synth/%s, or copy the engines into the user cache's autoagent/synth "+
		"(a working directory's checkout is not searched: its engine would run every JavaScript tool)",
		ErrNoEngine, file, tried, target, tags, file, EngineEnv, EngineFile)
}

// engine is a loaded engine module: its bytes and their digest, read and
// computed once (the engine is ~19 MB, and every JavaScript tool is it).
type engine struct {
	path  string
	bytes []byte
	sha   string
}

func readEngine(path string) (*engine, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist; build it with `make synth-engine`", ErrNoEngine, path)
	}
	if err != nil {
		return nil, fmt.Errorf("synth: reading the JavaScript engine: %w", err)
	}
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, fmt.Errorf("%w: %s is not a WebAssembly module; rebuild it with `make synth-engine`", ErrNoEngine, path)
	}
	return &engine{path: path, bytes: b, sha: manifest.Sum(b)}, nil
}

// WarmEngine compiles the engine module at path in h, so that later tools
// load at once, and runs its self-check. The first compile of the engine
// takes seconds (it is a large module) and is cached on disk by the host:
// while it runs, progress receives a line every few seconds. It returns the
// loaded probe module; keep it open to keep the compiled engine in memory,
// and close it when done.
func WarmEngine(ctx context.Context, h *host.Host, path string, progress io.Writer) (*host.Loaded, error) {
	e, err := readEngine(path)
	if err != nil {
		return nil, err
	}
	return e.warm(ctx, h, progress)
}

// probeSidecar is the describe document of the engine's probe module.
var probeSidecar = mustJSON(map[string]any{"tools": []any{map[string]any{
	"name": checkTool, "description": "checks a script", "inputSchema": map[string]any{"type": "object"},
}}})

func (e *engine) warm(ctx context.Context, h *host.Host, progress io.Writer) (*host.Loaded, error) {
	stop := reportProgress(progress, fmt.Sprintf("synth: loading the JavaScript engine (%.1f MB): the first time it is compiled to machine code, which takes a while; later runs read it from the disk cache",
		float64(len(e.bytes))/1e6))
	start := time.Now()
	// The probe is granted tools: for a tool that does not exist, so the
	// code-mode engine (which imports tool_call) loads too; its script
	// calls nothing.
	l, err := h.Load(ctx, host.Module{
		Name: "jsengine", Bytes: e.bytes, Sidecar: probeSidecar,
		Config: map[string]string{"script": "function run() { return 1 }"},
		Grants: []manifest.Grant{{Kind: manifest.KindTools, Name: checkTool}},
	})
	stop()
	if err != nil {
		return nil, fmt.Errorf("synth: loading the JavaScript engine %s: %w", e.path, err)
	}
	if d := time.Since(start); progress != nil && d > progressAfter {
		fmt.Fprintf(progress, "synth: JavaScript engine ready in %.1fs\n", d.Seconds())
	}
	t, _ := l.Tool(checkTool)
	res, err := t.Call(ctx, tool.Call{Name: checkTool, Arguments: json.RawMessage(`{}`)})
	if err == nil && res.IsError {
		err = errors.New(res.Text())
	}
	if err != nil {
		_ = l.Close(ctx)
		return nil, fmt.Errorf("synth: the JavaScript engine %s fails its self-check: %w", e.path, err)
	}
	return l, nil
}

// progressAfter is how long a step runs before progress is shown; a cache
// hit finishes well within it and prints nothing.
const progressAfter = time.Second

// progressEvery is the interval of "still working" lines.
const progressEvery = 5 * time.Second

// reportProgress prints msg once the work has taken progressAfter, then a
// line every progressEvery, until the returned stop is called.
func reportProgress(w io.Writer, msg string) (stop func()) {
	if w == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		t := time.NewTimer(progressAfter)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
		}
		fmt.Fprintln(w, msg)
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fmt.Fprintf(w, "synth: … still working (%ds)\n", int(time.Since(start).Seconds()))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
