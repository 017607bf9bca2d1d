package host

import (
	"context"
	"fmt"
	"slices"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
	"github.com/autoagent-go/autoagent/host/internal/kernel"
	"github.com/autoagent-go/autoagent/host/internal/kvcap"
	"github.com/autoagent-go/autoagent/host/internal/netcap"
	"github.com/autoagent-go/autoagent/host/internal/rewrite"
)

// The host modules a guest may import from (host/ABI.md).
const (
	envModule  = "extism:host/env"
	userModule = "extism:host/user"
	// goModule holds the Go functions the kernel imports; guests may not
	// import it (the rewrite's import of yield is from it).
	goModule = rewrite.KernelModule
	// wasiModule is WASI's, which wazero provides.
	wasiModule = "wasi_snapshot_preview1"
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
	kr := &kernelRuntime{
		mod: mod,
		// The kernel never reads randomness: a fixed source spares wazero
		// seeding a generator for every instance.
		config: wazero.NewModuleConfig().WithName("").WithStartFunctions().WithRandSource(zeroReader{}),
		funcs:  map[string]api.FunctionDefinition{},
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

// kernelFail turns a failure the kernel reports into the call's error.
func (inst *instance) kernelFail(code uint32, arg uint64) {
	switch kernel.Failure(code) {
	case kernel.FailLoad:
		inst.Crash(fmt.Sprintf("load: offset %d out of bounds of Extism memory", arg))
	case kernel.FailStore:
		inst.Crash(fmt.Sprintf("store: offset %d out of bounds of Extism memory", arg))
	case kernel.FailInput:
		inst.Crash(fmt.Sprintf("input_load: index %d past the input's %d bytes", arg, inst.k.InputLen()))
	case kernel.FailOutput:
		inst.Exceed(LimitOutput)
	case kernel.FailNoMemory:
		inst.Exceed(LimitMemory)
	case kernel.FailInputSet:
		inst.Crash(fmt.Sprintf("input_set: offset %d out of bounds of Extism memory", arg))
	case kernel.FailOutputSet:
		inst.Crash(fmt.Sprintf("output_set: offset %d out of bounds of Extism memory", arg))
	}
	inst.Crash(fmt.Sprintf("the Extism kernel failed (code %d)", code))
}

// hostFunc is a function the host serves to guests, written against the
// running instance: the kernel's own Go imports and the host's functions
// that are not a capability's.
type hostFunc = hostcall.Func[*instance]

var (
	i32 = hostcall.I32
	i64 = hostcall.I64
	sig = hostcall.Sig
)

// kernelImports are the kernel's Go imports: its failure report and the
// functions of extism:host/env that need the host (config, variables,
// logs); the network's (netcap.Funcs) join them.
var kernelImports = []hostFunc{
	{Name: "fail", Params: sig(i32, i64), Fn: func(inst *instance, s []uint64) { inst.kernelFail(uint32(s[0]), s[1]) }},
	{Name: "config_get", Params: sig(i64), Results: sig(i64), Fn: func(inst *instance, s []uint64) {
		key := string(inst.Read(s[0], "config_get", maxNameBytes))
		v, ok := inst.config(key)
		if !ok {
			s[0] = 0
			return
		}
		s[0] = inst.Write([]byte(v))
	}},
	{Name: "var_get", Params: sig(i64), Results: sig(i64), Fn: func(inst *instance, s []uint64) {
		v, ok := inst.vars.Get(string(inst.Read(s[0], "var_get", maxNameBytes)))
		if !ok {
			s[0] = 0
			return
		}
		s[0] = inst.Write(v)
	}},
	{Name: "var_set", Params: sig(i64, i64), Fn: func(inst *instance, s []uint64) { varSet(inst, s[0], s[1]) }},
	{Name: "get_log_level", Results: sig(i32), Fn: func(inst *instance, s []uint64) { s[0] = uint64(inst.logLevel()) }},
	{Name: "log_trace", Params: sig(i64), Fn: func(inst *instance, s []uint64) { inst.log(levelTrace, s[0]) }},
	{Name: "log_debug", Params: sig(i64), Fn: func(inst *instance, s []uint64) { inst.log(levelDebug, s[0]) }},
	{Name: "log_info", Params: sig(i64), Fn: func(inst *instance, s []uint64) { inst.log(levelInfo, s[0]) }},
	{Name: "log_warn", Params: sig(i64), Fn: func(inst *instance, s []uint64) { inst.log(levelWarn, s[0]) }},
	{Name: "log_error", Params: sig(i64), Fn: func(inst *instance, s []uint64) { inst.log(levelError, s[0]) }},
}

// userFuncs are the host's own functions of extism:host/user that are
// not a capability package's.
var userFuncs = []hostFunc{
	{Name: "tool_call", Params: sig(i64), Results: sig(i64), Grant: "tools", Fn: func(inst *instance, s []uint64) { s[0] = inst.toolCall(s[0]) }},
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
		return grantOf(userFuncs, name)
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
	return slices.ContainsFunc(names(userFuncs), own) || slices.ContainsFunc(names(kvcap.Funcs), own) ||
		slices.ContainsFunc(names(notifyFuncs), own)
}

func names[C any](funcs []hostcall.Func[C]) []string {
	out := make([]string, len(funcs))
	for i, f := range funcs {
		out[i] = f.Name
	}
	return out
}

// maxNameBytes bounds a config key or variable name.
const maxNameBytes = 4 << 10

func varSet(inst *instance, nameOff, valueOff uint64) {
	name := string(inst.Read(nameOff, "var_set", maxNameBytes))
	if valueOff == 0 {
		inst.vars.Delete(name)
		return
	}
	v := inst.Read(valueOff, "var_set", kernel.MaxVarBytes)
	if err := inst.vars.Set(name, v); err != nil {
		inst.Crash(err.Error())
	}
}

// instantiateHostModules registers the kernel's Go imports and
// extism:host/user (the host's own functions and the application's of that
// namespace) on the runtime. The functions find their instance in the
// call's context.
func instantiateHostModules(ctx context.Context, rt wazero.Runtime, fs functions) error {
	b := rt.NewHostModuleBuilder(goModule)
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(yield), []api.ValueType{i32}, nil).Export(rewrite.YieldImport)
	addHostFuncs(b, kernelImports, asInstance)
	addHostFuncs(b, netcap.Funcs, asNet)
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("host: instantiating %s: %w", goModule, err)
	}
	b = rt.NewHostModuleBuilder(userModule)
	addOwnUserFunctions(b)
	fs.register(b, userModule)
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("host: instantiating %s: %w", userModule, err)
	}
	return fs.instantiate(ctx, rt)
}

// addOwnUserFunctions adds the host's own functions of extism:host/user.
func addOwnUserFunctions(b wazero.HostModuleBuilder) {
	addHostFuncs(b, userFuncs, asInstance)
	addHostFuncs(b, kvcap.Funcs, asKV)
	addHostFuncs(b, notifyFuncs, asInstance)
}

// The views of the running instance each table is written against.
func asInstance(inst *instance) *instance { return inst }
func asNet(inst *instance) netcap.Call    { return inst }
func asKV(inst *instance) kvcap.Call      { return inst }

// addHostFuncs adds funcs to b, each finding its instance in the call's
// context, checking for a stop before it runs and telling the watchdog
// the guest is in the host while it does.
func addHostFuncs[C any](b wazero.HostModuleBuilder, funcs []hostcall.Func[C], view func(*instance) C) {
	for _, f := range funcs {
		fn := f.Fn
		b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
				inst, ok := ctx.Value(instanceKey{}).(*instance)
				if !ok {
					panic(&TrapError{Reason: "host function called outside a tool call"})
				}
				// A guest calling the host in a loop must not outlast
				// its deadline because each call is quick: every host
				// function is a place to stop it, as yield is.
				inst.checkStop()
				inst.inHost.Store(true)
				fn(view(inst), stack)
				inst.inHost.Store(false)
			}), f.Params, f.Results).
			Export(f.Name)
	}
}

// zeroReader reads zeros.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
