package loop_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// refusalKinds are the kinds package refusal declares, read from its
// source so that a kind added there is checked here too.
func refusalKinds(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("refusal", "refusal.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, v := range s.(*ast.ValueSpec).Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					k, _ := strconv.Unquote(lit.Value)
					kinds = append(kinds, k)
				}
			}
		}
	}
	if len(kinds) < 10 {
		t.Fatalf("found %d kinds in refusal.go: the parse is wrong", len(kinds))
	}
	return kinds
}

// sourceFiles parses the non-test Go files of dirs.
func sourceFiles(t *testing.T, dirs ...string) map[string]*ast.File {
	t.Helper()
	out := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(fset, name, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			out[name] = f
		}
	}
	if len(out) < 20 {
		t.Fatalf("parsed %d files: the walk is wrong", len(out))
	}
	return out
}

// Every refusal the loop and durable write is built by refusal.New (so it
// carries its kind), and none is recognised by its text: no string literal
// spells a kind's prefix, and no strings or bytes function is applied to a
// result's text. The two text checks that remain read the loop's own
// markers, never a refusal: the untrusted frame (taint.go's framed, for
// histories that carry taint nowhere else) and a system prompt's taint
// sentinel, and the prune note's opening.
func TestRefusalsAreBuiltAndReadByKind(t *testing.T) {
	kinds := refusalKinds(t)
	// inView (retrieval) asks whether a passage is already in what the
	// model is sent, to leave it out of the block: it tells neither a
	// refusal nor taint.
	allowed := map[string]bool{"framed": true, "IsTainted": true, "pruneNote": true, "inView": true}
	matchers := map[string]bool{}
	for _, m := range strings.Fields("Contains ContainsAny HasPrefix HasSuffix Index IndexByte IndexAny LastIndex TrimPrefix TrimSuffix CutPrefix CutSuffix Cut EqualFold Count Equal Compare") {
		matchers[m] = true
	}
	for name, f := range sourceFiles(t, ".", "refusal", filepath.Join("..", "durable")) {
		var fn string
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				fn = n.Name.Name
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					break
				}
				s, err := strconv.Unquote(n.Value)
				if err != nil {
					break
				}
				for _, k := range kinds {
					if strings.HasPrefix(s, k+":") {
						t.Errorf("%s (%s): the literal %.40q spells refusal kind %s: build it with refusal.New", name, fn, s, k)
					}
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					break
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok || pkg.Name != "strings" && pkg.Name != "bytes" || !matchers[sel.Sel.Name] {
					break
				}
				for _, arg := range n.Args {
					if readsResultText(arg) && !allowed[fn] {
						t.Errorf("%s (%s): %s.%s on a result's text: recognise a refusal by refusal.Of, taint by the result's Untrusted", name, fn, pkg.Name, sel.Sel.Name)
					}
				}
			}
			return true
		})
	}
}

// readsResultText reports whether e mentions a result's or a message's
// text (a Content or Text field or method) or a refusal kind.
func readsResultText(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			switch sel.Sel.Name {
			case "Content", "Text", "Refusal":
				found = true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "refusal" {
				found = true
			}
		}
		return !found
	})
	return found
}
