package host

import (
	"fmt"

	"github.com/tetratelabs/wazero"

	"github.com/autoagent-go/autoagent/host/internal/rewrite"
	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
)

// defectReexport (Options.defect) lets modules that export their imports
// load, for the tests of the defences behind checkReexports.
const defectReexport = "reexport"

// checkReexports refuses a module that exports a function it imports, or
// whose start function is one. The host calls a module's exports (call,
// describe, _start, the initialisers, an export tool's function) and its
// start function by name; when the name leads to an import, the host
// calls the host function itself, from outside every guest, and the
// runtime makes the function's own host module its caller. WASI's
// proc_exit then closed the host's WASI module for every module of the
// process. No toolchain exports an import by itself, so nothing real is
// refused (see RATIONALE.md "Why is a module that exports its imports
// refused?").
func checkReexports(m *wasmbin.Module) error {
	imported := func(fn uint32) (wasmbin.Import, bool) {
		if int(fn) >= m.ImportedFuncs {
			return wasmbin.Import{}, false
		}
		n := uint32(0)
		for _, imp := range m.Imports {
			if imp.Kind != wasmbin.KindFunc {
				continue
			}
			if n == fn {
				return imp, true
			}
			n++
		}
		return wasmbin.Import{}, false
	}
	for _, e := range m.Exports {
		if e.Kind != wasmbin.KindFunc {
			continue
		}
		if imp, ok := imported(e.Index); ok {
			return &ImportError{Import: imp.Module + "." + imp.Name, Exposed: fmt.Sprintf("the export %q", e.Name)}
		}
	}
	if m.Start >= 0 {
		if imp, ok := imported(uint32(m.Start)); ok {
			return &ImportError{Import: imp.Module + "." + imp.Name, Exposed: "its start function"}
		}
	}
	return nil
}

// checkCompiledReexports is checkReexports on the compiled module, for
// every load and inspection: a module prepared earlier and read back from
// the cache of prepared modules did not pass through prepare, and the
// rewrite turns a start function into an export.
func checkCompiledReexports(name string, mod wazero.CompiledModule) error {
	for export, def := range mod.ExportedFunctions() {
		if m, n, imported := def.Import(); imported {
			exposed := fmt.Sprintf("the export %q", export)
			if export == rewrite.StartExport {
				exposed = "its start function"
			}
			return &ImportError{Module: name, Import: m + "." + n, Exposed: exposed}
		}
	}
	return nil
}
