package host

import (
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host/internal/wasiguard"
)

// hostModules are the host modules of a runtime (see runtimeGen) that
// guests import from (WASI, extism:host/user, the application's
// namespaces): what the import check compares a module's imports with,
// read once when the runtime is made, and the WASI module, which the host
// makes again if it was ever closed.
//
// The runtime's own view of its modules is not read after New: a module
// closed there (WASI's proc_exit closes the module that calls it, and a
// guest once made WASI's host module its own caller) is gone from it,
// and every import check that looked it up then dereferenced nil.
type hostModules struct {
	// defs are every host module's function definitions, by module and
	// name.
	defs map[string]map[string]api.FunctionDefinition
	// wasi is the WASI host module every guest links to; wasiMu
	// serialises making it again.
	wasi   atomic.Pointer[api.Module]
	wasiMu sync.Mutex
}

// instantiateWASI instantiates the WASI host module, with the guard every
// WASI call passes (see package wasiguard).
func instantiateWASI(rt wazero.Runtime) (api.Module, error) {
	return wasiguard.Instantiate(rt, findWASI)
}

// readHostModules records the definitions of g's host modules once they
// are all instantiated.
func (h *Host) readHostModules(g *runtimeGen, wasi api.Module) {
	g.hostMods.wasi.Store(&wasi)
	g.hostMods.defs = map[string]map[string]api.FunctionDefinition{}
	names := []string{wasiModule, userModule}
	for ns := range h.functions {
		names = append(names, ns)
	}
	for _, name := range names {
		if m := g.rt.Module(name); m != nil {
			g.hostMods.defs[name] = m.ExportedFunctionDefinitions()
		}
	}
}

// definition returns the function name of host module module, as it was
// when g was made.
func (g *runtimeGen) definition(module, name string) (api.FunctionDefinition, bool) {
	def, ok := g.hostMods.defs[module][name]
	return def, ok
}

// ensureWASI makes g's WASI host module again when it was closed, so
// that one guest that managed to close it (see checkReexports and
// package wasiguard, which now stop every way known) does not fail every later
// instance of every WASI module of the process. The check costs an
// atomic load per instantiation.
func (h *Host) ensureWASI(g *runtimeGen) error {
	if !(*g.hostMods.wasi.Load()).IsClosed() {
		return nil
	}
	g.hostMods.wasiMu.Lock()
	defer g.hostMods.wasiMu.Unlock()
	if !(*g.hostMods.wasi.Load()).IsClosed() {
		return nil
	}
	if h.shut.Load() {
		return ErrClosed
	}
	m, err := instantiateWASI(g.rt)
	if err != nil {
		return err
	}
	g.hostMods.wasi.Store(&m)
	if lg := h.opts.Logger; lg != nil {
		lg.Error("host: the WASI host module had been closed (a defect of the host's defences); it was made again")
	}
	return nil
}
