// Package hostmod builds the host modules guests import from: the one
// place the host turns Go functions into functions a guest can call.
//
// Every function it adds is a table entry of one of the packages that
// hold what a guest can reach (kernelfn, toolcall, notify, appfn, netcap,
// kvcap), written against hostcall.Call; package host only says where
// each table goes and how a function finds its call. A test of package
// host fails when a file of host/ outside host/internal builds a host
// module itself.
//
// It is also where a call's grant is checked: a module loads with imports
// it was not granted (grants are asked at call time, as Extism does), and
// the gate around a function whose table entry names a grant refuses the
// call of a module without it, before the function's code runs.
package hostmod

import (
	"cmp"
	"context"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
)

// Gate is what the host does around every host function: a stop check
// before it runs (a guest calling the host in a loop must not outlast its
// deadline because each call is quick: every host function is a place to
// stop it, as yield is), the grant check of a function that needs one,
// and the watchdog told the guest is in the host while it does.
type Gate interface {
	CheckStop()
	InHost(in bool)
	// Granted reports whether the module holds grant: a grant kind
	// ("net", "kv", "tools") for any grant of that kind, or a whole
	// grant ("host:NAMESPACE.NAME").
	Granted(grant string) bool
	// Describing reports whether the call is a module's describe, which
	// runs with no capabilities.
	Describing() bool
	// Deny ends the call with a refusal; it does not return.
	Deny(kind, action, reason string)
}

// Module is a host module being built.
type Module struct {
	rt   wazero.Runtime
	b    wazero.HostModuleBuilder
	name string
}

// New starts the host module name on rt.
func New(rt wazero.Runtime, name string) *Module {
	return &Module{rt: rt, b: rt.NewHostModuleBuilder(name), name: name}
}

// refuse ends a call of function (NAMESPACE.NAME), which needs grant, by
// a module that does not hold it. A module loads with an import it was not
// granted (host/ABI.md: grants are asked at call time, as Extism does);
// this is where its calls stop, before the function's own code runs.
func refuse(g Gate, grant, function string) {
	kind, _, whole := strings.Cut(grant, ":")
	action := "call of " + function
	if kind == "host" {
		action = "call of host function " + function // as package appfn says it
	}
	if g.Describing() {
		g.Deny(kind, action, hostcall.NoCapabilities)
	}
	if !whole {
		grant = cmp.Or(grantForm[kind], kind+":")
	}
	g.Deny(kind, action, "the module was not granted "+grant+"; it loads without the grant, and each call of the function is refused until it is approved with one")
}

// grantForm is how a grant of each kind is spelled, for refusals.
var grantForm = map[string]string{"net": "net:HOST", "kv": "kv:NAMESPACE", "tools": "tools:NAME"}

// Add adds funcs to m. find returns, from a function's context, the gate
// and the table's view of the call; it panics when there is no call (a
// host function called outside a tool call).
func Add[C any](m *Module, funcs []hostcall.Func[C], find func(context.Context) (Gate, C)) {
	AddAs(m, m.name, funcs, find)
}

// AddAs is Add for functions a guest imports from another module,
// namespace, which forwards them to m (the Extism kernel forwards
// extism:host/env's http_request to the host's): refusals name them as the
// guest imports them.
func AddAs[C any](m *Module, namespace string, funcs []hostcall.Func[C], find func(context.Context) (Gate, C)) {
	for _, f := range funcs {
		fn, grant, function := f.Fn, f.Grant, namespace+"."+f.Name
		m.b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
				g, c := find(ctx)
				g.CheckStop()
				if grant != "" && !g.Granted(grant) {
					refuse(g, grant, function)
					return // Deny does not return; should it, nothing runs
				}
				g.InHost(true)
				fn(c, stack)
				g.InHost(false)
			}), f.Params, f.Results).
			Export(f.Name)
	}
}

// AddUngated adds funcs to m without the gate: for yield, which is the
// stop check itself and keeps the watchdog's mark on its own. A function
// that needs a grant has no place here: without the gate nothing would
// check it, so AddUngated panics on one (a defect of the host, found by
// every test that builds a host).
func AddUngated[C any](m *Module, funcs []hostcall.Func[C], find func(context.Context) C) {
	for _, f := range funcs {
		if f.Grant != "" {
			panic("hostmod: " + f.Name + " needs the grant " + f.Grant + " and so the gate: use Add")
		}
		fn := f.Fn
		m.b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
				fn(find(ctx), stack)
			}), f.Params, f.Results).
			Export(f.Name)
	}
}

// Instantiate instantiates m under its name.
func (m *Module) Instantiate(ctx context.Context) (api.Module, error) {
	return m.b.Instantiate(ctx)
}

// InstantiateAnonymous compiles m and instantiates it without a name: it
// is found through an instance's import resolver only.
func (m *Module) InstantiateAnonymous(ctx context.Context) (api.Module, error) {
	compiled, err := m.b.Compile(ctx)
	if err != nil {
		return nil, err
	}
	mod, err := m.rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName(""))
	_ = compiled.Close(ctx) // safe while mod lives
	return mod, err
}
