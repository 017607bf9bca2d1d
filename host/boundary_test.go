package host

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
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
// host function, guards WASI itself, or writes a function table entry
// (hostcall.Func) for hostmod, puts guest-reachable code back beside the
// machinery. Tests are exempt: they build runtimes of their own.
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
			if lit, ok := n.(*ast.CompositeLit); ok && isHostcallFunc(lit.Type) {
				// A table entry written here would reach hostmod
				// with its body in package host.
				t.Errorf("%s writes a hostcall.Func: a function a guest can reach belongs in a package under host/internal", path)
			}
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

// isHostcallFunc reports whether typ is hostcall.Func, with or without
// its type argument.
func isHostcallFunc(typ ast.Expr) bool {
	if ix, ok := typ.(*ast.IndexExpr); ok {
		typ = ix.X
	}
	sel, ok := typ.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "hostcall" && sel.Sel.Name == "Func"
}

// TestInstanceKeepsNoContext: the instance keeps no context of its own;
// a host function takes the run's from Context, which ends with the run
// (a stored context outlived the call it was made for).
func TestInstanceKeepsNoContext(t *testing.T) {
	t.Parallel()
	ctxType := reflect.TypeFor[context.Context]()
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, path string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Type == ctxType || (f.Type.Kind() != reflect.Interface && f.Type.Implements(ctxType)) {
				t.Errorf("%s.%s holds a context (%s)", path, f.Name, f.Type)
			}
			if f.Type.Kind() == reflect.Struct && f.Anonymous {
				walk(f.Type, path+"."+f.Name)
			}
		}
	}
	walk(reflect.TypeFor[instance](), "instance")
	walk(reflect.TypeFor[callState](), "callState")
	walk(reflect.TypeFor[watchView](), "watchView")
	inst := &instance{}
	if err := inst.Context().Err(); err == nil {
		t.Error("an instance between runs has a live context")
	}
}

// TestBeginResetsTheCallState: a reused instance's call starts from a
// clean callState, whatever the last call left (a failure, refusals,
// grants used, logs, a kv quota spent).
func TestBeginResetsTheCallState(t *testing.T) {
	t.Parallel()
	inst := &instance{}
	inst.call = callState{
		tool: "last", abort: errors.New("last failure"), exceeded: &LimitError{Limit: LimitOutput},
		used: map[string]bool{"net": true}, denied: []string{"refused"}, peak: 1, logs: 7,
		clockUsed: true, randUsed: true, listChanged: true, kvWritten: 9,
	}
	v := reflect.ValueOf(inst.call)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test leaves callState.%s zero: set it, so begin's reset of it is checked", v.Type().Field(i).Name)
		}
	}
	inst.begin("next")
	if !reflect.DeepEqual(inst.call, callState{tool: "next"}) {
		t.Errorf("after begin the call state is %+v, want only the tool set", inst.call)
	}
}
