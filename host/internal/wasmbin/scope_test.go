package wasmbin

import (
	"strings"
	"testing"
)

// scopeInst is the instrumentation of scopeModule: the yield import is
// function 0, the fuel global 0 and the stack budget global 1.
var scopeInst = Instrumentation{
	Fuel: 0, Stack: 1, Yield: 0, YieldEvery: 1000, MaxUnchecked: 64,
	YieldModule: "autoagent:kernel", YieldName: "yield", MemShift: 6, TableShift: 3,
}

// scopeModule assembles an instrumented module with one defined function,
// function 1 of type (i32) -> (i32), whose body (after its locals, of
// which it has none) is code.
func scopeModule(code []byte) []byte { return scopeModuleWith(code, false, false) }

// scopeModuleWith is scopeModule, with a funcref table holding function 1
// (an active element segment, which also declares it for ref.func) when
// table is set, and the stack budget global exported when export is.
func scopeModuleWith(code []byte, table, export bool) []byte {
	sec := func(id byte, body []byte) []byte {
		return append(appendU32([]byte{id}, uint32(len(body))), body...)
	}
	b := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	b = append(b, sec(1, []byte{2, 0x60, 1, 0x7f, 0, 0x60, 1, 0x7f, 1, 0x7f})...)
	imp := appendU32(nil, 1)
	imp = append(appendU32(imp, uint32(len(scopeInst.YieldModule))), scopeInst.YieldModule...)
	imp = append(appendU32(imp, uint32(len(scopeInst.YieldName))), scopeInst.YieldName...)
	b = append(b, sec(2, append(imp, 0x00, 0x00))...)
	b = append(b, sec(3, []byte{1, 1})...)
	if table {
		b = append(b, sec(4, []byte{1, 0x70, 0x00, 0x01})...)
	}
	globals := appendS32([]byte{2, 0x7f, 0x01, 0x41}, scopeInst.YieldEvery)
	globals = append(globals, 0x0b, 0x7f, 0x01, 0x41, 0x00, 0x0b)
	b = append(b, sec(6, globals)...)
	if export {
		b = append(b, sec(7, []byte{1, 1, 's', 0x03, 0x01})...)
	}
	if table {
		b = append(b, sec(9, []byte{1, 0x00, 0x41, 0x00, 0x0b, 1, 0x01})...)
	}
	body := append([]byte{0}, code...)
	return append(b, sec(10, append(appendU32([]byte{1}, uint32(len(body))), body...))...)
}

// cat joins byte strings, bs makes one: the bodies of the scope tests.
func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func bs(b ...byte) []byte { return b }

// TestVerifyScope: the rules of charged blocks (see Instrumentation), on
// hand-made bodies: each charge given back once whichever way its block
// is left, every call inside one.
func TestVerifyScope(t *testing.T) {
	in := scopeInst
	const cost = 1000
	charge, exit := in.StackCharge(cost), in.StackExit(cost)
	fuel := in.FuelCheck(100)
	call := []byte{0x20, 0x00, 0x10, 0x01, 0x1a} // local.get 0; call 1; drop
	ret := []byte{0x20, 0x00, 0x0f}              // local.get 0; return
	block := []byte{0x02, 0x40}
	loop := cat([]byte{0x03, 0x40}, in.FuelCheck(100))
	end := []byte{0x0b}
	tail := []byte{0x20, 0x00, 0x0b} // local.get 0; end (the function's)
	cases := []struct {
		name string
		code []byte
		want string // "" when the body is accepted
	}{
		{"a call in a charged block", cat(fuel, charge, block, call, end, exit, tail), ""},
		{"a return given back", cat(fuel, charge, block, call, []byte{0x20, 0x00}, exit, []byte{0x0f}, end, exit, tail), ""},
		{"a branch to the block's own label", cat(fuel, charge, block, call, []byte{0x0c, 0x00}, end, exit, tail), ""},
		{"a loop charged", cat(fuel, charge, loop, call, []byte{0x20, 0x00, 0x0d, 0x00}, end, exit, tail), ""},
		{"two charged blocks in turn", cat(fuel, charge, block, call, end, exit, charge, block, call, end, exit, tail), ""},
		{"a return after the block, not given back", cat(fuel, charge, block, call, end, exit, ret, end), ""},
		{"a call outside", cat(fuel, call, tail), "a call outside a block charged"},
		{"a call after the block", cat(fuel, charge, block, end, exit, call, tail), "a call outside a block charged"},
		{"a branch out", cat(fuel, block, charge, block, call, []byte{0x0c, 0x01}, end, exit, end, tail), "a branch out of a charged block"},
		{"a conditional branch out", cat(fuel, block, charge, block, call, []byte{0x20, 0x00, 0x0d, 0x01}, end, exit, end, tail), "a branch out of a charged block"},
		{"a branch to the function's label", cat(fuel, charge, block, call, []byte{0x20, 0x00, 0x0c, 0x01}, end, exit, tail), "a branch out of a charged block"},
		{"a return not given back", cat(fuel, charge, block, call, ret, end, exit, tail), "a return from a charged block without"},
		{"no restore", cat(fuel, charge, block, call, end, tail), "not followed by the stack budget's restore"},
		{"a smaller restore", cat(fuel, charge, block, call, end, in.StackExit(cost+16), tail), "not followed by the stack budget's restore"},
		{"a restore that is not before a return", cat(fuel, charge, block, call, exit, end, exit, tail), "guest code uses the host's global 1"},
		{"nested charges", cat(fuel, charge, block, charge, block, call, end, exit, end, exit, tail), "a stack budget charge inside a charged block"},
		{"a charge below the frame's cost", cat(fuel, in.StackCharge(100), block, call, end, in.StackExit(100), tail), "stack cost 100 below the frame's"},
		{"a negative charge", cat(fuel, in.StackCharge(-cost), block, call, end, in.StackExit(-cost), tail), "stack cost -1000 below"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Verify(scopeModule(c.code), Limits{}, in)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && err == nil:
				t.Fatalf("accepted, want %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("refused with %v, want %q", err, c.want)
			}
		})
	}
}
