package loop_test

import (
	"go/ast"
	"testing"
)

// The loop's surface, counted from its source: the exported top-level
// names (each constant and variable of a group counts) and the exported
// fields of Agent. Issue 42 sets the targets at 120 names and 20 fields;
// the ceilings below are where the package stands, so that it can only
// shrink: lower them as names move out (to internal/, or to a package of
// their own like loop/refusal), never raise them. Retrieval (issue 45)
// joined Memory in Agent.Knowledge, whose type is the one name added
// (118 to 119), to keep the fields at 20.
const (
	maxExportedNames = 119
	maxAgentFields   = 20
)

func TestExportCeilings(t *testing.T) {
	names, fields := 0, -1
	for _, f := range sourceFiles(t, ".") {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names++
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names++
						}
						if st, ok := s.Type.(*ast.StructType); ok && s.Name.Name == "Agent" {
							fields = 0
							for _, fl := range st.Fields.List {
								for _, n := range fl.Names {
									if n.IsExported() {
										fields++
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names++
							}
						}
					}
				}
			}
		}
	}
	if names < 50 || fields < 5 {
		t.Fatalf("counted %d names and %d Agent fields: the parse is wrong", names, fields)
	}
	if names > maxExportedNames {
		t.Errorf("loop exports %d names, more than its ceiling of %d (target 120): move what only durable needs to internal/", names, maxExportedNames)
	}
	if fields > maxAgentFields {
		t.Errorf("loop.Agent has %d exported fields, more than its ceiling of %d (target 20): group related ones in an option struct", fields, maxAgentFields)
	}
	t.Logf("loop exports %d names; Agent has %d exported fields", names, fields)
}
