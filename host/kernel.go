package host

import (
	"context"
	"fmt"
	"slices"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
	"github.com/autoagent-go/autoagent/host/internal/hostmod"
	"github.com/autoagent-go/autoagent/host/internal/kernel"
	"github.com/autoagent-go/autoagent/host/internal/kernelfn"
	"github.com/autoagent-go/autoagent/host/internal/kvcap"
	"github.com/autoagent-go/autoagent/host/internal/netcap"
	"github.com/autoagent-go/autoagent/host/internal/notify"
	"github.com/autoagent-go/autoagent/host/internal/rewrite"
	"github.com/autoagent-go/autoagent/host/internal/toolcall"
	"github.com/autoagent-go/autoagent/host/internal/wasiguard"
)

// The host modules a guest may import from (host/ABI.md).
const (
	envModule  = "extism:host/env"
	userModule = "extism:host/user"
	// goModule holds the Go functions the kernel imports; guests may not
	// import it (the rewrite's import of yield is from it).
	goModule = rewrite.KernelModule
	// wasiModule is WASI's, which wazero provides.
	wasiModule = wasiguard.Module
)

// kernelRuntime is the compiled kernel and what every instance of it
// shares.
type kernelRuntime struct {
	mod    wazero.CompiledModule
	config wazero.ModuleConfig // instantiates mod
	layout kernel.Layout       // where every instance keeps its state
	// initial is an instance's memory at start, which the module's memory
	// limit does not count: it is the host's fixed cost.
	initial int64
	// funcs are the kernel's exports a guest may import, by name.
	funcs map[string]api.FunctionDefinition
	// globals and snapSafe are the kernel's compiledEntry.snapGlobals and
	// .snapSafe: a snapshot holds the kernel's state too.
	globals  []string
	snapSafe bool
	// resetSafe is the kernel's compiledEntry.resetSafe.
	resetSafe bool
}

// newKernelRuntime compiles the kernel and reads the address of its state
// from a first instance.
func (h *Host) newKernelRuntime(ctx context.Context, g *runtimeGen) (*kernelRuntime, error) {
	rt := g.rt
	opts := h.rewriteOptions(0)
	opts.Defect = "" // the tests' defects are for guests
	prepared, err := h.prepare(kernel.Wasm, opts, true)
	if err != nil {
		return nil, fmt.Errorf("host: preparing the Extism kernel: %w", err)
	}
	mod, err := h.compileCached(ctx, g, prepared)
	if err != nil {
		return nil, fmt.Errorf("host: compiling the Extism kernel: %w", err)
	}
	globals, safe, reset, err := rewrite.SnapshotInfo(prepared)
	if err != nil {
		return nil, fmt.Errorf("host: the Extism kernel: %w", err)
	}
	kr := &kernelRuntime{
		mod: mod,
		// The kernel never reads randomness: a fixed source spares wazero
		// seeding a generator for every instance.
		config:    wazero.NewModuleConfig().WithName("").WithStartFunctions().WithRandSource(zeroReader{}),
		funcs:     map[string]api.FunctionDefinition{},
		globals:   globals,
		snapSafe:  safe,
		resetSafe: reset,
	}
	for name, def := range mod.ExportedFunctions() {
		if kernel.Serves(name) {
			kr.funcs[name] = def
		}
	}
	inst, err := rt.InstantiateModule(ctx, mod, kr.config)
	if err != nil {
		return nil, fmt.Errorf("host: instantiating the Extism kernel: %w", err)
	}
	defer inst.Close(ctx)
	if h.opts.deadlines == deadlineInterrupt {
		if err := setStack(inst, kernelStack); err != nil {
			return nil, fmt.Errorf("host: the Extism kernel: %w", err)
		}
	}
	if kr.layout, err = kernel.ReadLayout(ctx, inst); err != nil {
		return nil, fmt.Errorf("host: the Extism kernel: %w", err)
	}
	kr.initial = int64(inst.Memory().Size())
	return kr, nil
}

// capabilityOf returns the grant kind importing module.name needs, or ""
// when it needs none.
func capabilityOf(module, name string) string {
	switch module {
	case envModule:
		return grantOf(netcap.Funcs, name)
	case userModule:
		if g := grantOf(kvcap.Funcs, name); g != "" {
			return g
		}
		return grantOf(toolcall.Funcs, name)
	}
	return ""
}

// grantOf returns the grant the function name of funcs needs, "" when it
// needs none or is not one of them.
func grantOf[C any](funcs []hostcall.Func[C], name string) string {
	for _, f := range funcs {
		if f.Name == name {
			return f.Grant
		}
	}
	return ""
}

// ownUserFunction reports whether name is one of the host's own functions
// of extism:host/user.
func ownUserFunction(name string) bool {
	own := func(n string) bool { return n == name }
	return slices.ContainsFunc(names(toolcall.Funcs), own) || slices.ContainsFunc(names(kvcap.Funcs), own) ||
		slices.ContainsFunc(names(notify.Funcs), own)
}

func names[C any](funcs []hostcall.Func[C]) []string {
	out := make([]string, len(funcs))
	for i, f := range funcs {
		out[i] = f.Name
	}
	return out
}

// instantiateHostModules registers the kernel's Go imports and
// extism:host/user (the host's own functions and the application's of that
// namespace) on the runtime. The functions find their instance in the
// call's context.
func instantiateHostModules(ctx context.Context, rt wazero.Runtime, fs functions) error {
	m := hostmod.New(rt, goModule)
	hostmod.AddUngated(m, kernelfn.Yield, asYielder)
	hostmod.Add(m, kernelfn.Funcs, view(func(inst *instance) kernelfn.Call { return inst }))
	hostmod.AddAs(m, envModule, netcap.Funcs, view(func(inst *instance) netcap.Call { return inst }))
	if _, err := m.Instantiate(ctx); err != nil {
		return fmt.Errorf("host: instantiating %s: %w", goModule, err)
	}
	m = hostmod.New(rt, userModule)
	addOwnUserFunctions(m)
	fs.register(m, userModule)
	if _, err := m.Instantiate(ctx); err != nil {
		return fmt.Errorf("host: instantiating %s: %w", userModule, err)
	}
	return fs.instantiate(ctx, rt)
}

// addOwnUserFunctions adds the host's own functions of extism:host/user.
func addOwnUserFunctions(m *hostmod.Module) {
	hostmod.Add(m, toolcall.Funcs, view(func(inst *instance) toolcall.Call { return inst }))
	hostmod.Add(m, kvcap.Funcs, view(func(inst *instance) kvcap.Call { return inst }))
	hostmod.Add(m, notify.Funcs, view(func(inst *instance) notify.Call { return inst }))
}

// findInstance returns the instance a host function runs for, from its
// context; with none (a host function called outside a tool call) it
// ends the guest.
func findInstance(ctx context.Context) *instance {
	inst, ok := ctx.Value(instanceKey{}).(*instance)
	if !ok {
		panic(&TrapError{Reason: "host function called outside a tool call"})
	}
	return inst
}

// view makes the finder of a table written against as's view of the
// running instance.
func view[C any](as func(*instance) C) func(context.Context) (hostmod.Gate, C) {
	return func(ctx context.Context) (hostmod.Gate, C) {
		inst := findInstance(ctx)
		return inst, as(inst)
	}
}

// asYielder finds yield's instance; the kernel's own start-up runs
// outside a tool call, where only its stack budget can end it.
func asYielder(ctx context.Context) kernelfn.Yielder {
	if inst, ok := ctx.Value(instanceKey{}).(*instance); ok {
		return inst
	}
	return noInstance{}
}

// noInstance is yield's view outside a tool call.
type noInstance struct{}

func (noInstance) CheckStop()          {}
func (noInstance) StackExhausted()     { panic(limitErr(LimitStack, kernelStack)) }
func (noInstance) EnterGo(string) bool { return false }
func (noInstance) LeaveGo(bool)        {}

// findWASI finds the instance a WASI function runs for; the host's own
// instantiations run outside any.
func findWASI(ctx context.Context) (wasiguard.Call, bool) {
	inst, ok := ctx.Value(instanceKey{}).(*instance)
	return inst, ok
}

// zeroReader reads zeros.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
