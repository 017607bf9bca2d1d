package hostmod

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
)

// fakeGate is a Gate whose Deny records the refusal and unwinds, as the
// host's does.
type fakeGate struct {
	granted    map[string]bool
	describing bool
	denied     []string
}

type denial struct{}

func (g *fakeGate) CheckStop()                {}
func (g *fakeGate) InHost(bool)               {}
func (g *fakeGate) Granted(grant string) bool { return g.granted[grant] }
func (g *fakeGate) Describing() bool          { return g.describing }
func (g *fakeGate) Deny(kind, action, reason string) {
	g.denied = append(g.denied, kind+": "+action+" refused: "+reason)
	panic(denial{})
}

// The gate refuses a call of a function that needs a grant the module
// does not hold, before the function runs, naming the function as the
// guest imports it; a granted call runs; a describing call is refused
// whatever the grants.
func TestGateRefusesUngrantedCalls(t *testing.T) {
	ctx := t.Context()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	ran := 0
	g := &fakeGate{granted: map[string]bool{}}
	find := func(context.Context) (Gate, *fakeGate) { return g, g }
	m := New(rt, "forwarder")
	AddAs(m, "guest:ns", []hostcall.Func[*fakeGate]{
		{Name: "net_fn", Grant: "net", Fn: func(*fakeGate, []uint64) { ran++ }},
		{Name: "host_fn", Grant: "host:guest:ns.host_fn", Fn: func(*fakeGate, []uint64) { ran++ }},
		{Name: "free_fn", Fn: func(*fakeGate, []uint64) { ran++ }},
	}, find)
	if _, err := m.Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, callerModule("forwarder", "net_fn", "host_fn", "free_fn"))
	if err != nil {
		t.Fatal(err)
	}
	// A refusal unwinds through wazero as the host's panic does.
	callFn := func(name string) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("unwound: %v", p)
			}
		}()
		_, err = mod.ExportedFunction(name).Call(ctx)
		return err
	}

	for _, c := range []struct{ fn, want string }{
		{"net_fn", "net: call of guest:ns.net_fn refused: the module was not granted net:HOST;"},
		{"host_fn", "host: call of host function guest:ns.host_fn refused: the module was not granted host:guest:ns.host_fn;"},
	} {
		g.denied = nil
		if err := callFn(c.fn); err == nil || ran != 0 || len(g.denied) != 1 || !strings.HasPrefix(g.denied[0], c.want) {
			t.Errorf("%s ungranted: err %v, ran %d, denied %q; want %q", c.fn, err, ran, g.denied, c.want)
		}
	}
	if err := callFn("free_fn"); err != nil || ran != 1 {
		t.Fatalf("a function needing no grant: %v, ran %d", err, ran)
	}
	g.granted = map[string]bool{"net": true, "host:guest:ns.host_fn": true}
	if err := callFn("net_fn"); err != nil || ran != 2 {
		t.Fatalf("net_fn granted: %v, ran %d", err, ran)
	}
	if err := callFn("host_fn"); err != nil || ran != 3 {
		t.Fatalf("host_fn granted: %v, ran %d", err, ran)
	}
	g.describing, g.granted, g.denied = true, map[string]bool{}, nil
	if err := callFn("net_fn"); err == nil || ran != 3 || len(g.denied) != 1 || !strings.HasSuffix(g.denied[0], hostcall.NoCapabilities) {
		t.Errorf("under describe: %v, ran %d, denied %q", err, ran, g.denied)
	}
}

// callerModule imports each of fns, () -> (), from module and exports a
// function of its own of the same name that calls it.
func callerModule(module string, fns ...string) []byte {
	vec := func(n int, items ...[]byte) []byte {
		out := []byte{byte(n)}
		for _, it := range items {
			out = append(out, it...)
		}
		return out
	}
	name := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	section := func(id byte, body []byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	var imports, funcs, exports, code [][]byte
	for i, f := range fns {
		imports = append(imports, append(append(name(module), name(f)...), 0, 0))
		funcs = append(funcs, []byte{0})
		exports = append(exports, append(name(f), 0, byte(len(fns)+i)))
		code = append(code, []byte{4, 0, 0x10, byte(i), 0x0b})
	}
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, section(1, []byte{1, 0x60, 0, 0})...)
	b = append(b, section(2, vec(len(fns), imports...))...)
	b = append(b, section(3, vec(len(fns), funcs...))...)
	b = append(b, section(7, vec(len(fns), exports...))...)
	return append(b, section(10, vec(len(fns), code...))...)
}

// AddUngated has no gate, so it takes no function that needs a grant.
func TestAddUngatedRefusesGrantedFunctions(t *testing.T) {
	ctx := t.Context()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "needs the grant net") {
			t.Errorf("AddUngated of a granted function: panic %v", p)
		}
	}()
	AddUngated(New(rt, "m"), []hostcall.Func[int]{{Name: "f", Grant: "net", Fn: func(int, []uint64) {}}}, func(context.Context) int { return 0 })
}
