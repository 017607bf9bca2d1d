// Package hostmod builds the host modules guests import from: the one
// place the host turns Go functions into functions a guest can call.
//
// Every function it adds is a table entry of one of the packages that
// hold what a guest can reach (kernelfn, toolcall, notify, appfn, netcap,
// kvcap), written against hostcall.Call; package host only says where
// each table goes and how a function finds its call. A test of package
// host fails when a file of host/ outside host/internal builds a host
// module itself.
package hostmod

import (
	"context"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
)

// Gate is what the host does around every host function: a stop check
// before it runs (a guest calling the host in a loop must not outlast its
// deadline because each call is quick: every host function is a place to
// stop it, as yield is), and the watchdog told the guest is in the host
// while it does.
type Gate interface {
	CheckStop()
	InHost(in bool)
}

// Module is a host module being built.
type Module struct {
	rt wazero.Runtime
	b  wazero.HostModuleBuilder
}

// New starts the host module name on rt.
func New(rt wazero.Runtime, name string) *Module {
	return &Module{rt: rt, b: rt.NewHostModuleBuilder(name)}
}

// Add adds funcs to m. find returns, from a function's context, the gate
// and the table's view of the call; it panics when there is no call (a
// host function called outside a tool call).
func Add[C any](m *Module, funcs []hostcall.Func[C], find func(context.Context) (Gate, C)) {
	for _, f := range funcs {
		fn := f.Fn
		m.b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
				g, c := find(ctx)
				g.CheckStop()
				g.InHost(true)
				fn(c, stack)
				g.InHost(false)
			}), f.Params, f.Results).
			Export(f.Name)
	}
}

// AddUngated adds funcs to m without the gate: for yield, which is the
// stop check itself and keeps the watchdog's mark on its own.
func AddUngated[C any](m *Module, funcs []hostcall.Func[C], find func(context.Context) C) {
	for _, f := range funcs {
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
