package wasmbin

import (
	"testing"
)

// TestVerifyScopeAttacks: bodies written to break the charged-block rules
// (a restore without its charge or twice, a call no charge covers, a
// branch or return that skips the restore, non-minimal encodings, nesting,
// else arms, dead code). Each case says whether Verify must refuse it; the
// accepted ones are controls whose budget stays sound on every path.
func TestVerifyScopeAttacks(t *testing.T) {
	t.Parallel()
	in := scopeInst
	const cost = 1000
	charge, exit := in.StackCharge(cost), in.StackExit(cost)
	fuel := in.FuelCheck(400)
	call := bs(0x20, 0x00, 0x10, 0x01, 0x1a) // local.get 0; call 1; drop
	ret := bs(0x0f)
	lget := bs(0x20, 0x00)
	block := bs(0x02, 0x40)
	ifb := bs(0x04, 0x40)
	els := bs(0x05)
	loop := cat(bs(0x03, 0x40), in.FuelCheck(100))
	end := bs(0x0b)
	tail := bs(0x20, 0x00, 0x0b)
	// non-minimal encodings of the patterns
	chargeNM := cat(bs(0x23, 0x81, 0x00, 0x41, 0xe8, 0x87, 0x80, 0x80, 0x00), in.stackEntryTail()) // stack=1 in 2 bytes, 1000 in 5
	exitNM := bs(0x23, 0x81, 0x00, 0x41, 0xe8, 0x07, 0x6a, 0x24, 0x01)
	exitNM2 := bs(0x23, 0x01, 0x41, 0xe8, 0x87, 0x80, 0x80, 0x00, 0x6a, 0x24, 0x01)
	cases := []struct {
		name   string
		code   []byte
		refuse bool
	}{
		// restores without or beyond a charge
		{"exit twice after the block", cat(fuel, charge, block, call, end, exit, exit, tail), true},
		{"exit without any charge", cat(fuel, block, end, exit, tail), true},
		{"exit+return without any charge", cat(fuel, lget, exit, ret, end), true},
		{"exit+return after the block (scope closed)", cat(fuel, charge, block, call, end, exit, lget, exit, ret, end), true},
		{"exit+return in an uncharged block", cat(fuel, block, lget, exit, ret, end, tail), true},
		{"two exits then return in scope", cat(fuel, charge, block, call, lget, exit, exit, ret, end, exit, tail), true},
		{"exit then br to function label in scope", cat(fuel, charge, block, call, lget, exit, bs(0x0c, 0x01), end, exit, tail), true},
		{"in-scope exit of another cost before return", cat(fuel, charge, block, call, lget, in.StackExit(cost+1), ret, end, exit, tail), true},
		{"exit of second block with first block's cost", cat(fuel, charge, block, call, end, exit, in.StackCharge(2000), block, call, end, exit, tail), true},
		{"ref.func-style charge (64) then exit(64)", cat(fuel, in.StackCharge(64), bs(0x01), in.StackExit(64), tail), true},
		{"ref.func charge, nop, block, call, exit", cat(fuel, in.StackCharge(cost), bs(0x01), block, call, end, exit, tail), true},
		{"exit in dead code after br in scope", cat(fuel, charge, block, call, bs(0x0c, 0x00), exit, end, exit, tail), true},
		{"exit in dead code after unreachable, outside", cat(fuel, bs(0x00), exit, tail), true},
		// calls without charge
		{"call in dead code, no scope", cat(fuel, bs(0x00), call, tail), true},
		{"call between charge and block", cat(fuel, in.StackCharge(cost), call, block, end, exit, tail), true},
		{"call after in-scope exit+return (dead)", cat(fuel, charge, block, lget, exit, ret, call, end, exit, tail), false}, // dead code, still inside scope: harmless
		{"call in else of an if holding the charged block", cat(fuel, lget, ifb, charge, block, call, end, exit, els, call, end, tail), true},
		{"call in the exit slot", cat(fuel, charge, block, call, end, call, exit, tail), true},
		{"call yield directly in scope", cat(fuel, charge, block, bs(0x41, 0x01, 0x10, 0x00), end, exit, tail), true},
		{"charged block closed, second block uncharged with call", cat(fuel, charge, block, end, exit, block, call, end, tail), true},
		// branches
		{"br_table in=0, default out", cat(fuel, block, charge, block, call, lget, bs(0x0e, 0x01, 0x00, 0x01), end, exit, end, tail), true},
		{"br_table target out, default in", cat(fuel, block, charge, block, call, lget, bs(0x0e, 0x01, 0x01, 0x00), end, exit, end, tail), true},
		{"br_table all to own label", cat(fuel, block, charge, block, call, lget, bs(0x0e, 0x02, 0x00, 0x00, 0x00), end, exit, end, tail), false},
		{"br_if to function label", cat(fuel, charge, block, call, lget, lget, bs(0x0d, 0x01, 0x1a), end, exit, tail), true},
		{"br out of a nested loop in a charged if", cat(fuel, lget, charge, ifb, bs(0x03, 0x40), in.FuelCheck(50), call, bs(0x0c, 0x02), end, end, exit, tail), true},
		// else handling
		{"charged if/else, calls in both arms", cat(fuel, lget, charge, ifb, call, els, call, end, exit, tail), false},
		{"charged if/else, br out from else", cat(fuel, block, lget, charge, ifb, call, els, bs(0x0c, 0x01), end, exit, end, tail), true},
		{"charged if/else, return without exit in else", cat(fuel, lget, charge, ifb, call, els, lget, ret, end, exit, tail), true},
		{"exit before else in charged if", cat(fuel, lget, charge, ifb, call, exit, els, end, exit, tail), true},
		// nesting and overlap
		{"charge inside scope before loop", cat(fuel, charge, block, in.StackCharge(cost), loop, call, end, exit, end, exit, tail), true},
		{"charge inside scope before if", cat(fuel, charge, block, lget, in.StackCharge(cost), ifb, call, end, exit, end, exit, tail), true},
		{"charge directly after charge (first is a ref.func-style charge: lowers only)", cat(fuel, charge, charge, block, call, end, exit, tail), false},
		{"exit right after charge, before block", cat(fuel, charge, exit, block, call, end, exit, tail), true},
		{"charge between block end and exit", cat(fuel, charge, block, call, end, charge, exit, tail), true},
		{"charged block's exit begins next charge", cat(fuel, charge, block, call, end, charge, block, end, exit, exit, tail), true},
		// encodings
		{"non-minimal exit after block", cat(fuel, charge, block, call, end, exitNM, tail), true},
		{"non-minimal cost in exit after block", cat(fuel, charge, block, call, end, exitNM2, tail), true},
		{"non-minimal exit before return", cat(fuel, charge, block, call, lget, exitNM, ret, end, exit, tail), true},
		{"non-minimal charge, canonical exit (same values)", cat(fuel, chargeNM, block, call, end, exit, tail), false},
		{"non-minimal charge, ref.func style", cat(fuel, chargeNM, bs(0x01), tail), false},
		// costs
		{"charge of 0 before block", cat(fuel, in.StackCharge(0), block, call, end, in.StackExit(0), tail), true},
		{"charge negative ref.func style", cat(fuel, in.StackCharge(-64), tail), true},
		{"charge huge, exit huge", cat(fuel, in.StackCharge(1<<31-1), block, call, end, in.StackExit(1<<31-1), tail), false}, // lowers then gives back the same
		// misc
		{"body starting with a charge, no fuel", cat(in.StackCharge(cost), block, call, end, exit, tail), true}, // fuel rule
		{"tail call return_call", cat(fuel, charge, block, lget, bs(0x12, 0x01), end, exit, tail), true},
		{"global.set stack in guest", cat(fuel, lget, bs(0x24, 0x01), tail), true},
		{"global.get stack in guest", cat(fuel, bs(0x23, 0x01, 0x1a), tail), true},
		{"charge in unreachable then if (polymorphic)", cat(fuel, block, bs(0x00), charge, ifb, call, end, exit, end, tail), false}, // dead
		{"charged loop re-entered by br 0", cat(fuel, charge, loop, call, lget, bs(0x0d, 0x00), end, exit, tail), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Verify(scopeModule(c.code), Limits{}, in)
			if c.refuse && err == nil {
				t.Fatal("accepted")
			}
			if !c.refuse && err != nil {
				t.Fatalf("control refused: %v", err)
			}
		})
	}
}

// TestVerifyScopeTables: call_indirect and ref.func against the charged
// blocks, in a module with a table (and a control with the budget global
// exported, as the rewrite exports it for the host).
func TestVerifyScopeTables(t *testing.T) {
	t.Parallel()
	in := scopeInst
	const cost = 1000
	charge, exit := in.StackCharge(cost), in.StackExit(cost)
	fuel := in.FuelCheck(400)
	icall := bs(0x20, 0x00, 0x41, 0x00, 0x11, 0x01, 0x00, 0x1a)       // local.get 0; i32.const 0; call_indirect type 1 table 0; drop
	reff := cat(in.GoEnter(), bs(0xd2, 0x01), in.GoLeave(), bs(0x1a)) // ref.func 1, in Go; drop
	bare := bs(0xd2, 0x01, 0x1a)                                      // ref.func 1; drop
	grow := bs(0xd0, 0x70, 0x41, 0x01, 0xfc, 0x0f, 0x00, 0x1a)        // table.grow 0 by 1 (null); drop
	block := bs(0x02, 0x40)
	end := bs(0x0b)
	tail := bs(0x20, 0x00, 0x0b)
	cases := []struct {
		name   string
		code   []byte
		export bool
		refuse bool
	}{
		{"call_indirect in a charged block", cat(fuel, charge, block, icall, end, exit, tail), false, false},
		{"call_indirect outside", cat(fuel, icall, tail), false, true},
		{"call_indirect after the charged block", cat(fuel, charge, block, end, exit, icall, tail), false, true},
		{"ref.func after its charge", cat(fuel, in.StackCharge(64), reff, tail), false, false},
		{"ref.func without charge", cat(fuel, reff, tail), false, true},
		{"ref.func charge below 64", cat(fuel, in.StackCharge(63), reff, tail), false, true},
		{"ref.func as first in a charged block (charge taken by block)", cat(fuel, charge, block, reff, end, exit, tail), false, true},
		{"ref.func charge then exit of it", cat(fuel, in.StackCharge(64), reff, in.StackExit(64), tail), false, true},
		{"ref.func charged, without its enter and leave of Go", cat(fuel, in.StackCharge(64), bare, tail), false, true},
		{"ref.func charged, entered, not left", cat(fuel, in.StackCharge(64), in.GoEnter(), bs(0xd2, 0x01, 0x1a), tail), false, true},
		{"ref.func charged, left, not entered", cat(fuel, in.StackCharge(64), bs(0xd2, 0x01), in.GoLeave(), bs(0x1a), tail), false, true},
		{"enter of Go before its charge", cat(fuel, in.GoEnter(), in.StackCharge(64), bare, tail), false, true},
		{"enter of Go alone", cat(fuel, in.GoEnter(), tail), false, true},
		{"table.grow in Go (control)", cat(fuel, bs(0xd0, 0x70, 0x41, 0x01), in.GoEnter(), bs(0xfc, 0x0f, 0x00), in.GoLeave(), bs(0x1a), tail), false, false},
		{"table.grow without its enter and leave of Go", cat(fuel, grow, tail), false, true},
		{"table.get then call_indirect outside", cat(fuel, bs(0x41, 0x00, 0x25, 0x00, 0x1a), icall, tail), false, true},
		{"stack global exported (the rewrite exports it for the host: control)", cat(fuel, charge, block, icall, end, exit, tail), true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Verify(scopeModuleWith(c.code, true, c.export), Limits{}, in)
			if c.refuse && err == nil {
				t.Fatal("accepted")
			}
			if !c.refuse && err != nil {
				t.Fatalf("control refused: %v", err)
			}
		})
	}
}
