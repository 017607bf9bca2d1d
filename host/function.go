package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"unicode/utf8"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host/internal/appfn"
	"github.com/autoagent-go/autoagent/host/internal/hostcall"
	"github.com/autoagent-go/autoagent/host/internal/hostmod"
	"github.com/autoagent-go/autoagent/manifest"
)

// Function is a Go function the embedding application offers to modules:
// Extism's host functions. A module may call it only when granted
// host:NAMESPACE.NAME: a module without that grant loads, and each of its
// calls is refused before the function runs (a *DeniedError), as is a
// call under describe, which runs with no capabilities.
//
// Extism's convention for values that are not numbers holds: the guest
// passes and receives offsets of Extism memory blocks (i64), which
// [Caller.Read] and [Caller.Write] turn into bytes, so a function written
// for extism/go-sdk's NewHostFunctionWithStack ports line for line.
type Function struct {
	// Namespace is the import module; "" means extism:host/user, the one
	// Extism's PDKs import host functions from.
	Namespace string
	// Name is the function's import name.
	Name string
	// Params and Results are its WebAssembly signature; a module that
	// imports it with another is refused at load.
	Params, Results []api.ValueType
	// Description says what it does, for the person approving a module
	// that imports it.
	Description string
	// Func does the work. stack holds the parameters on entry and
	// receives the results, as in wazero's api.GoModuleFunc. ctx carries
	// the call's deadline (the module's time limit or the caller's, the
	// sooner): a function that blocks must return when it is done. A
	// returned error ends the call with it as the tool's failure; so does
	// a panic, which the host recovers.
	Func func(ctx context.Context, c *Caller, stack []uint64) error

	// What the function does beyond the call, which sets the flags of the
	// tools of a module granted it, as a grant's kind does for the host's
	// own capabilities. The zero value claims nothing: the function may
	// send data out of the process, return content others wrote, and
	// change state, so such a module's tools are marked egress, untrusted
	// and not idempotent.
	//
	// Local: it sends nothing out of the process.
	Local bool
	// Trusted: what it returns carries no content from outside the
	// application (no web pages, mail, files others wrote).
	Trusted bool
	// Idempotent: calling it again changes nothing outside the call.
	Idempotent bool

	grant string // Grant().String(), set when the host registers it
}

// Grant is the grant a module needs to import f.
func (f Function) Grant() manifest.Grant {
	return manifest.Grant{Kind: manifest.KindHost, Name: f.namespace() + "." + f.Name}
}

func (f Function) namespace() string {
	if f.Namespace == "" {
		return userModule
	}
	return f.Namespace
}

// Caller is the guest that called a [Function], valid only while the
// function runs.
type Caller struct {
	inst *instance
}

// errCallerDone is returned by a Caller's methods after its function
// returned.
var errCallerDone = errors.New("host: the Caller is used after its host function returned")

// Module returns the calling module's name.
func (c *Caller) Module() string {
	if c.inst == nil {
		return ""
	}
	return c.inst.l.name
}

// Tool returns the name of the tool being called.
func (c *Caller) Tool() string {
	if c.inst == nil {
		return ""
	}
	return c.inst.call.tool
}

// Read returns a copy of the Extism memory block at offset (offset 0 reads
// as empty), or an error when offset is not a block.
func (c *Caller) Read(offset uint64) ([]byte, error) {
	if c.inst == nil {
		return nil, errCallerDone
	}
	if offset == 0 {
		return []byte{}, nil
	}
	if c.inst.k.Module() == nil {
		return nil, errors.New("host: the module has no Extism memory")
	}
	b, ok := c.inst.k.Find(offset)
	if !ok {
		return nil, fmt.Errorf("host: %d is not an Extism memory block", offset)
	}
	return slices.Clone(b), nil
}

// ReadString is Read as a string.
func (c *Caller) ReadString(offset uint64) (string, error) {
	b, err := c.Read(offset)
	return string(b), err
}

// Write copies b into a new Extism memory block and returns its offset,
// for the guest to read (and free). A block that would take the module
// past its memory limit is refused with the limit's error, which also ends
// the call when the function returns.
func (c *Caller) Write(b []byte) (uint64, error) {
	if c.inst == nil {
		return 0, errCallerDone
	}
	if c.inst.k.Module() == nil {
		return 0, errors.New("host: the module has no Extism memory")
	}
	var off uint64
	err := c.inst.guard(func() { off = c.inst.Write(b) })
	return off, err
}

// WriteString is Write of a string.
func (c *Caller) WriteString(s string) (uint64, error) { return c.Write([]byte(s)) }

// Free releases the block at offset; an offset that is not a block is
// ignored.
func (c *Caller) Free(offset uint64) {
	if c.inst != nil && c.inst.k.Module() != nil {
		c.inst.k.Free(offset)
	}
}

// Memory returns the module's linear memory, for functions that pass
// pointers into it instead of Extism blocks.
func (c *Caller) Memory() api.Memory {
	if c.inst == nil || c.inst.mod == nil {
		return nil
	}
	return c.inst.mod.Memory()
}

// Log writes msg to the host's logger (Options.Logger) with the module and
// tool, as a guest's own log_* calls do.
func (c *Caller) Log(level slog.Level, msg string) {
	if c.inst == nil {
		return
	}
	if lg := c.inst.l.h.opts.Logger; lg != nil {
		lg.Log(context.Background(), level, msg, "module", c.inst.l.name, "tool", c.inst.call.tool)
	}
}

// FunctionError is the failure of a host function: the error it returned
// or the panic it raised. The call ends with it.
type FunctionError struct {
	Function string // NAMESPACE.NAME
	Err      error
}

func (e *FunctionError) Error() string { return fmt.Sprintf("host function %s: %v", e.Function, e.Err) }

func (e *FunctionError) Unwrap() error { return e.Err }

// functions are the embedding application's host functions, by namespace
// and name.
type functions map[string]map[string]*Function

// newFunctions checks the functions of Options and indexes them.
func newFunctions(fs []Function) (functions, error) {
	out := functions{}
	for i := range fs {
		f := &fs[i]
		g := f.Grant()
		if _, err := manifest.ParseGrant(g.String()); err != nil {
			return nil, fmt.Errorf("host: Options.Functions[%d] (%s): %w", i, g.Name, err)
		}
		if f.Name == "" || !utf8.ValidString(f.Name) || !utf8.ValidString(f.namespace()) {
			return nil, fmt.Errorf("host: Options.Functions[%d]: a function needs a valid UTF-8 name", i)
		}
		if f.Func == nil {
			return nil, fmt.Errorf("host: Options.Functions[%d] (%s): Func is nil", i, g.Name)
		}
		for _, t := range slices.Concat(f.Params, f.Results) {
			switch t {
			case api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeF32, api.ValueTypeF64:
			default:
				return nil, fmt.Errorf("host: Options.Functions[%d] (%s): value type %#x is not i32, i64, f32 or f64", i, g.Name, t)
			}
		}
		f.grant = g.String()
		ns := f.namespace()
		if out[ns] == nil {
			out[ns] = map[string]*Function{}
		}
		if out[ns][f.Name] != nil {
			return nil, fmt.Errorf("host: Options.Functions: %s is registered twice", g.Name)
		}
		out[ns][f.Name] = f
	}
	return out, nil
}

// lookup returns the function namespace.name, or nil.
func (fs functions) lookup(namespace, name string) *Function {
	return fs[namespace][name]
}

// register adds the functions of namespace to m, the builder of that host
// module.
func (fs functions) register(m *hostmod.Module, namespace string) {
	table := make([]hostcall.Func[*instance], 0, len(fs[namespace]))
	for _, f := range fs[namespace] {
		table = append(table, appfn.Entry(appfn.Func[*instance]{
			Name:  f.grant[len("host:"):], // NAMESPACE.NAME
			Grant: f.grant,
			Run:   f.run,
		}, f.Name, f.Params, f.Results))
	}
	hostmod.Add(m, table, view(func(inst *instance) *instance { return inst }))
}

// instantiate registers every namespace but extism:host/user (which
// instantiateHostModules builds with the host's own functions) on rt.
func (fs functions) instantiate(ctx context.Context, rt wazero.Runtime) error {
	for ns := range fs {
		if ns == userModule {
			continue
		}
		m := hostmod.New(rt, ns)
		fs.register(m, ns)
		if _, err := m.Instantiate(ctx); err != nil {
			return fmt.Errorf("host: instantiating the host functions of %s: %w", ns, err)
		}
	}
	return nil
}

// run calls f.Func for inst's guest with a Caller valid while it runs.
func (f *Function) run(inst *instance, stack []uint64) error {
	c := &Caller{inst: inst}
	defer func() { c.inst = nil }()
	return f.Func(inst.Context(), c, stack)
}

// stubFunctions builds, for a describing instance of a module under
// Inspect, the host modules of the namespaces the module imports
// application functions from that this host does not provide: each such
// function refuses the call, as every capability is refused under
// describe. A stand-in module also carries the functions the host does
// have in that namespace (its own, in extism:host/user). The
// modules are anonymous, found through the instance's import resolver, and
// closed with it.
func (h *Host) stubFunctions(ctx context.Context, e *compiledEntry) (map[string]api.Module, error) {
	missing := map[string][]api.FunctionDefinition{}
	for _, def := range e.mod.ImportedFunctions() {
		m, n, _ := def.Import()
		if !embedderImport(m, n) || h.functions.lookup(m, n) != nil {
			continue
		}
		missing[m] = append(missing[m], def)
	}
	if len(missing) == 0 {
		return nil, nil
	}
	out := map[string]api.Module{}
	for ns, defs := range missing {
		m := hostmod.New(e.gen.rt, ns)
		if ns == userModule {
			addOwnUserFunctions(m)
		}
		h.functions.register(m, ns)
		stubs := make([]hostcall.Func[*instance], 0, len(defs))
		for _, def := range defs {
			_, name, _ := def.Import()
			stubs = append(stubs, appfn.Stub[*instance](ns+"."+name, name, def.ParamTypes(), def.ResultTypes()))
		}
		hostmod.Add(m, stubs, view(func(inst *instance) *instance { return inst }))
		// Instantiated without a name: a stand-in is found through the
		// instance's resolver only.
		mod, err := m.InstantiateAnonymous(ctx)
		if err != nil {
			for _, m := range out {
				_ = m.Close(ctx)
			}
			return nil, fmt.Errorf("host: standing in for the host functions of %s: %w", ns, err)
		}
		out[ns] = mod
	}
	return out, nil
}

// embedderImport reports whether a module importing namespace.name
// would need a host: grant: it is not one of the host's own functions.
func embedderImport(namespace, name string) bool {
	switch namespace {
	case envModule, goModule, wasiModule:
		return false
	case userModule:
		return !ownUserFunction(name)
	}
	return true
}
