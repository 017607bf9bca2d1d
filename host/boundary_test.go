package host

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// guestFacing are the wazero calls that give a guest something to call
// (a host function, a host module, WASI, a listener around WASI's
// functions): made only in the packages under host/internal, each written
// against hostcall.Call.
var guestFacing = map[string]bool{
	"NewHostModuleBuilder":               true,
	"NewFunctionBuilder":                 true,
	"WithGoModuleFunction":               true,
	"WithGoFunction":                     true,
	"WithFunc":                           true,
	"WithFunctionListenerFactory":        true,
	"NewFunctionExporter":                true,
	"MustInstantiate":                    true,
	"wasi_snapshot_preview1.Instantiate": true,
}

// TestNoHostFunctionOutsideInternal: what a guest can reach lives in
// packages of its own under host/internal (RATIONALE: "Why is every host
// function in a package under host/internal?"); a file of host/ (or of
// another package under it, but internal) that builds a host module or a
// host function, or guards WASI itself, puts guest-reachable code back
// beside the machinery. Tests are exempt: they build runtimes of their own.
func TestNoHostFunctionOutsideInternal(t *testing.T) {
	t.Parallel()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "internal" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			name := sel.Sel.Name
			if x, ok := sel.X.(*ast.Ident); ok && guestFacing[x.Name+"."+name] {
				name = x.Name + "." + name
			}
			if guestFacing[name] {
				t.Errorf("%s uses %s: a function a guest can reach belongs in a package under host/internal, written against hostcall.Call (see hostmod)", path, name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("checked %d files of host/, want them all (is the test run from host/?)", checked)
	}
}
