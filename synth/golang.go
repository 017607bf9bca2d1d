package synth

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/autoagent-go/autoagent/internal/toolbuild"
)

// Go is the back-end for tools written in Go: the model writes a file of
// package main defining func run(args map[string]any) (any, error), and
// the local go command compiles it with a generated entry point to an
// Extism plugin (GOOS=wasip1, -buildmode=c-shared) that describes itself.
// The build is internal/toolbuild's, the one behind `autoagent tools
// build`: only the standard library is available, the build runs offline
// (GOPROXY=off, GOTOOLCHAIN=local) in a temporary directory that is
// removed afterwards, and the entry reaches the host through the Go PDK's
// binding (pdk/go/extism, embedded in autoagent).
//
// The zero value uses the go command on PATH.
type Go struct {
	// Command is the go command; "" means "go" on PATH, then
	// $GOROOT/bin/go.
	Command string
	// TempDir is where build directories are made; "" means os.TempDir().
	TempDir string
	// MaxSource bounds the source in bytes; 0 means DefaultMaxSource.
	MaxSource int
	// Progress receives a line when a build is slow (the first build
	// compiles the standard library for wasip1). Nil means silence.
	Progress io.Writer
}

var _ Backend = (*Go)(nil)

// Language returns "go".
func (*Go) Language() string { return "go" }

// Guide tells the writer model how to write a Go tool.
func (*Go) Guide() string {
	return `Write the tool in Go, standard library only, as one file of package main that defines
func run(args map[string]any) (any, error)
args is the call's arguments decoded from JSON (numbers are float64, arrays []any, objects map[string]any); it matches input_schema. Return any value encoding/json can encode, or an error to report a failure (its text is what the caller sees). Do not define main: the entry point is generated.
The tool runs in a sandbox: no files, network, environment or processes. When the tool was granted tools:NAME, callTool(name string, args any) (any, error) calls that host tool.
Example:
package main

import "strings"

func run(args map[string]any) (any, error) {
	text, _ := args["text"].(string)
	return map[string]any{"words": len(strings.Fields(text))}, nil
}`
}

// forbiddenImports cannot work in the sandbox or would bypass the
// generated entry point.
var forbiddenImports = map[string]string{
	"C":        "cgo is not available",
	"unsafe":   "unsafe is not allowed",
	"os/exec":  "there are no processes in the sandbox",
	"plugin":   "plugins are not available",
	"syscall":  "use the standard library's portable packages",
	"embed":    "there is nothing to embed",
	"net/http": "there is no network in the sandbox",
}

// Screen parses the file and checks its shape: package main, a run
// function of the right signature, no main, standard-library imports that
// work in the sandbox, no compiler directives.
func (g *Go) Screen(source string) error {
	max := g.MaxSource
	if max <= 0 {
		max = DefaultMaxSource
	}
	if err := screenText(source, max); err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "tool.go", source, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return reject(StageScreen, "the source does not parse: %v", err)
	}
	if f.Name.Name != "main" {
		return reject(StageScreen, "the file must be package main, not package %s", f.Name.Name)
	}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if why, bad := forbiddenImports[path]; bad {
			return reject(StageScreen, "import %q: %s", path, why)
		}
		if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
			return reject(StageScreen, "import %q: only the standard library is available", path)
		}
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:") || strings.HasPrefix(c.Text, "//export") {
				return reject(StageScreen, "compiler directive %q is not allowed", strings.Fields(c.Text)[0])
			}
		}
	}
	for _, name := range packageNames(f) {
		if strings.HasPrefix(name, "autoagent") {
			return reject(StageScreen, "names starting with autoagent are reserved for the generated entry point")
		}
	}
	var haveRun bool
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil {
			continue
		}
		switch fn.Name.Name {
		case "main":
			return reject(StageScreen, "do not define main: the entry point is generated")
		case "callTool":
			return reject(StageScreen, "do not define callTool: it is provided")
		case "run":
			if fn.Type.Params.NumFields() != 1 || fn.Type.Results.NumFields() != 2 {
				return reject(StageScreen, "run must have the signature func run(args map[string]any) (any, error)")
			}
			haveRun = true
		}
	}
	if !haveRun {
		return reject(StageScreen, "the file must define func run(args map[string]any) (any, error)")
	}
	return nil
}

// packageNames lists the names f declares in the package block:
// functions (not methods), types, variables and constants.
func packageNames(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					names = append(names, spec.Name.Name)
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	return names
}

// Build compiles the source with the generated entry point through
// internal/toolbuild, the build behind `autoagent tools build`: in a
// temporary module under TempDir that requires the Go PDK (for the entry's
// host bindings, package extism), offline, with the environment's GOFLAGS
// left out.
func (g *Go) Build(ctx context.Context, spec Spec, source string) (*Package, error) {
	dir, err := os.MkdirTemp(g.TempDir, "autoagent-synth-*")
	if err != nil {
		return nil, fmt.Errorf("synth: build directory: %w", err)
	}
	defer os.RemoveAll(dir)
	files := map[string][]byte{
		"tool.go":      []byte(source),
		"autoagent.go": []byte(goEntry(describeDoc(spec, nil, false), usesBridge(spec.Capabilities))),
	}
	opts := toolbuild.Options{Output: filepath.Join(dir, "tool.wasm"), TempDir: dir, Offline: true}
	if g.Command != "" {
		opts.Toolchain = map[toolbuild.Language]string{toolbuild.Go: g.Command}
	}
	stop := reportProgress(g.Progress, "synth: compiling a Go tool (the first build also compiles the standard library for wasip1)")
	res, err := toolbuild.BuildGoFiles(ctx, files, opts)
	stop()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var missing *toolbuild.MissingToolchainError
	var failed *toolbuild.BuildError
	var exit *exec.ExitError
	switch {
	case errors.As(err, &missing):
		return nil, fmt.Errorf("%w: %s was not found (Go 1.26 or later, on PATH or in $GOROOT/bin); install it, or write tools in JavaScript (--lang js)", ErrNoToolchain, missing.Tool)
	case errors.As(err, &failed) && errors.As(err, &exit):
		return nil, reject(StageBuild, "the Go compiler refused the source:\n%s", compilerOutput(failed.Output, dir))
	case err != nil:
		return nil, fmt.Errorf("synth: building the Go tool: %w", err)
	}
	wasm, err := os.ReadFile(res.Output)
	if err != nil {
		return nil, fmt.Errorf("synth: the go command wrote no module: %w", err)
	}
	return &Package{Module: wasm}, nil
}

// compilerOutput keeps what the model needs from the compiler's output
// (toolbuild names the files tool.go and autoagent.go): any path under the
// build directory made relative, the "# package" header dropped, at most
// 4 KiB.
func compilerOutput(out, dir string) string {
	out = strings.ReplaceAll(out, dir+string(filepath.Separator), "")
	var keep []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "# ") {
			continue
		}
		keep = append(keep, line)
	}
	s := strings.Join(keep, "\n")
	if len(s) > 4096 {
		s = s[:4096] + "\n…"
	}
	return s
}
