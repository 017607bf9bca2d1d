package host

import (
	"context"

	"github.com/tetratelabs/wazero"

	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
)

// runtimeGen is one wazero runtime and what the host instantiates in it
// (WASI, its host modules, the Extism kernel). wazero keeps every
// distinct function type a runtime has seen for the runtime's life,
// never freed; so once a runtime has seen genTypeValues worth of them,
// it is retired: new modules compile into a new one, and the old one is
// closed when the last module compiled in it is released.
type runtimeGen struct {
	rt     wazero.Runtime
	kernel *kernelRuntime
	// hostMods are the runtime's host modules, as the import check and
	// instantiation see them.
	hostMods hostModules
	// types are the keys of the function types the runtime has seen,
	// values their parameters and results plus one each (under h.mu).
	types  map[string]bool
	values int
	// users counts the compiled modules of the runtime; a retired one
	// is closed when it reaches 0 (under h.mu).
	users   int
	retired bool
}

// genTypeValues bounds the function types a runtime sees before it is
// retired: about 8 MiB of wazero's registry at its worst. The largest
// module known has 7 727 values in 1 719 types; one module may declare
// at most ModuleLimits.TypeValues (100 000).
const genTypeValues = 1 << 20

// newGen makes a runtime, with WASI, the host modules and the kernel.
func (h *Host) newGen(ctx context.Context) (*runtimeGen, error) {
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(h.cache).
		WithCloseOnContextDone(h.opts.deadlines == deadlineRuntime).
		// The wasm stack traces debug information feeds are not shown (a
		// trap's first line is) and function names are gone after the
		// rewrite; without it, compiled code carries no source map, which
		// a new process would read back entry by entry.
		WithDebugInfoEnabled(false)
	g := &runtimeGen{rt: wazero.NewRuntimeWithConfig(ctx, cfg), types: map[string]bool{}}
	fail := func(err error) (*runtimeGen, error) {
		_ = g.rt.Close(ctx)
		return nil, err
	}
	wasi, err := instantiateWASI(g.rt)
	if err != nil {
		return fail(err)
	}
	if err := instantiateHostModules(ctx, g.rt, h.functions); err != nil {
		return fail(err)
	}
	h.readHostModules(g, wasi)
	kr, err := h.newKernelRuntime(ctx, g)
	if err != nil {
		return fail(err)
	}
	g.kernel = kr
	return g, nil
}

// currentGen returns the runtime new modules compile into, with a use
// counted for the caller (see leaveGen), making a new one when the
// current one is retired.
func (h *Host) currentGen(ctx context.Context) (*runtimeGen, error) {
	h.genMu.Lock()
	defer h.genMu.Unlock()
	h.mu.Lock()
	g := h.gen
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	if !g.retired {
		g.users++
		h.mu.Unlock()
		return g, nil
	}
	h.mu.Unlock()
	g, err := h.newGen(ctx)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		_ = g.rt.Close(ctx)
		return nil, ErrClosed
	}
	h.gen = g
	h.gens[g] = true
	g.users++
	return g, nil
}

// leaveGen gives back a use of g, closing it when it is retired and
// unused.
func (h *Host) leaveGen(g *runtimeGen) {
	h.mu.Lock()
	g.users--
	done := g.retired && g.users == 0 && h.gens[g]
	if done {
		delete(h.gens, g)
	}
	h.mu.Unlock()
	if done {
		_ = g.kernel.mod.Close(context.Background())
		_ = g.rt.Close(context.Background())
	}
}

// noteTypes records the function types of a module compiled in g (its
// prepared bytes), retiring g once it has seen genTypeValues of them.
func (h *Host) noteTypes(g *runtimeGen, prepared []byte) {
	keys, err := wasmbin.TypeKeys(prepared)
	if err != nil {
		return // verified bytes: cannot happen
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range keys {
		if !g.types[k] {
			g.types[k] = true
			g.values += len(k) - 2 // the form and two counts, about
		}
	}
	if g.values > genTypeValues {
		g.retired = true
	}
}
