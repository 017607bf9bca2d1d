package synth

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/manifest"
)

// DefaultMaxSource bounds the source of a tool the model writes.
const DefaultMaxSource = 64 << 10

// JavaScript is the default back-end: the model writes a script defining
// function run(args), and every tool is the same engine module
// (synth/jsengine, goja compiled to WebAssembly) with the script in its
// configuration. No toolchain is needed at run time and the engine is
// compiled to machine code once for all tools.
//
// The zero value finds the engine with [FindEngine].
type JavaScript struct {
	// Engine is the path of the engine module; "" means FindEngine.
	Engine string
	// BridgeEngine is the path of the code-mode engine, used for tools
	// granted tools:NAME; "" means FindEngine(BridgeEngineFile).
	BridgeEngine string
	// MaxSource bounds the script in bytes; 0 means DefaultMaxSource.
	MaxSource int

	mu      sync.Mutex
	engines [2]*engine
}

var _ Backend = (*JavaScript)(nil)

// Language returns "js".
func (*JavaScript) Language() string { return "js" }

// Guide tells the writer model how to write a JavaScript tool.
func (*JavaScript) Guide() string {
	return `Write the tool in JavaScript (ECMAScript 2020 and later: let/const, arrow functions, classes, destructuring, spread, optional chaining, template literals, Map/Set, regular expressions, async/await).
The script must define a top-level function run(args): args is the call's arguments, an object matching input_schema; return the result as a JSON value (object, array, string, number, boolean or null), or a promise of one. Throw an Error to report a failure; its message is what the caller sees.
The script runs in a sandbox: there is no require, no import, no file system, no network, no environment, no timers and no process. Date reads the real clock, and Math.random draws new numbers in every call. console.log output is only shown when the tool fails.
Example:
function run(args) {
  const words = args.text.split(/\s+/).filter(Boolean);
  return { words: words.length };
}`
}

// runRE finds a top-level definition of run.
var runRE = regexp.MustCompile(`(?m)(^|[\s;}])(async\s+)?function\s*\*?\s*run\s*\(|(^|[\s;}])(const|let|var)\s+run\s*=`)

// Screen checks the script's size and that it defines run.
func (j *JavaScript) Screen(source string) error {
	if err := screenText(source, j.maxSource()); err != nil {
		return err
	}
	if !runRE.MatchString(source) {
		return reject(StageScreen, "the script must define a top-level function run(args)")
	}
	return nil
}

func (j *JavaScript) maxSource() int {
	if j.MaxSource > 0 {
		return j.MaxSource
	}
	return DefaultMaxSource
}

// screenText applies the checks every language shares.
func screenText(source string, max int) error {
	switch {
	case strings.TrimSpace(source) == "":
		return reject(StageScreen, "the source is empty")
	case len(source) > max:
		return reject(StageScreen, "the source is %d bytes, more than the %d allowed; write a smaller tool", len(source), max)
	case !utf8.ValidString(source):
		return reject(StageScreen, "the source is not valid UTF-8")
	case strings.ContainsRune(source, 0):
		return reject(StageScreen, "the source contains a NUL byte")
	}
	return nil
}

// Build packages the script: the engine module (the code-mode engine when
// the spec asks for a tools: grant) and a describe sidecar carrying the
// script under "config". The host hands a sidecar's config to the guest
// (host/ABI.md §1.3), so the quarantined tool gets its script the way the
// promoted one will, from the sidecar alone.
func (j *JavaScript) Build(ctx context.Context, spec Spec, source string) (*Package, error) {
	e, err := j.engine(usesBridge(spec.Capabilities))
	if err != nil {
		return nil, err
	}
	cfg := map[string]string{"script": source}
	return &Package{
		Module:    e.bytes,
		Sidecar:   describeDoc(spec, cfg, false),
		Probe:     describeDoc(spec, cfg, true),
		ProbeTool: checkTool,
		sha:       e.sha,
	}, nil
}

// engine reads an engine variant, once it exists: a missing engine is
// looked for again next time, so building it does not need a restart.
func (j *JavaScript) engine(bridge bool) (*engine, error) {
	i, file, path := 0, EngineFile, j.Engine
	if bridge {
		i, file, path = 1, BridgeEngineFile, j.BridgeEngine
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if e := j.engines[i]; e != nil {
		return e, nil
	}
	if path == "" {
		p, err := FindEngine(file)
		if err != nil {
			return nil, err
		}
		path = p
	}
	e, err := readEngine(path)
	if err != nil {
		return nil, err
	}
	j.engines[i] = e
	return e, nil
}

// usesBridge reports whether a tool asking for capabilities needs the
// code-mode engine.
func usesBridge(capabilities []string) bool {
	for _, c := range capabilities {
		if g, err := manifest.ParseGrant(c); err == nil && g.Kind == manifest.KindTools {
			return true
		}
	}
	return false
}

// describeDoc is the describe document of a tool: the tool, the
// capabilities it asks for, the configuration it runs with and, for the
// quarantine probe, the engine's check tool.
func describeDoc(spec Spec, config map[string]string, probe bool) []byte {
	type toolDoc struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		InputSchema any    `json:"inputSchema"`
	}
	tools := []toolDoc{{spec.Name, spec.Description, rawOrObject(spec.InputSchema)}}
	if probe {
		tools = append(tools, toolDoc{checkTool, "checks that the script loads", map[string]any{"type": "object"}})
	}
	doc := struct {
		Tools        []toolDoc         `json:"tools"`
		Capabilities []string          `json:"capabilities,omitempty"`
		Config       map[string]string `json:"config,omitempty"`
	}{tools, spec.Capabilities, config}
	return mustJSON(doc)
}
