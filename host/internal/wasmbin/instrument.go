package wasmbin

import "bytes"

// Instrumentation describes what the host's rewrite adds to a module, so
// [Verify] can check that the rewritten module has it, everywhere, and
// that guest code cannot reach it:
//
//   - the fuel: a mutable i32 global, starting at YieldEvery, in units of
//     instructions. A FuelCheck lowers it by the cost of the code it
//     covers and calls the yield import with reason 0 when it falls below
//     one (where the host stops a guest whose time is up). One follows
//     every loop's block type, covering the loop's body (nested loops
//     have their own); one starts every function but those its callers
//     pay for, covering the function outside its loops. Callers pay for a
//     function whose code outside loops calls nothing and is at most
//     MaxUnchecked instructions (a small leaf, or a recursion whose calls
//     sit in a loop). A region's cost is its instructions, plus the code
//     outside loops of each such function it calls directly, plus
//     MaxUnchecked for each call_indirect and each call of an import (the
//     host's: the Extism kernel's loads and stores are unchecked leaves of
//     its own module). Code between two checks thus runs at most as many
//     instructions as the first one charged.
//   - the stack budget: a mutable i32 global the host sets after
//     instantiation. Every call sits in a charged block: a block, loop or
//     if that a StackCharge precedes (it lowers the budget by the
//     function's frame cost and calls yield with reason 1 when it falls
//     below zero) and a StackExit follows (it raises the budget by the
//     same cost). No branch leaves a charged block but to its own label,
//     every return in it follows a StackExit, and charged blocks do not
//     nest, so each charge is given back exactly once, whichever way the
//     block is left, and a frame that can call is always paid for. The
//     rewrite charges the smallest block that holds all of a function's
//     calls and that no branch leaves, or else a block it wraps around the
//     whole body (StackEntry); paths that never reach a call (a
//     recursion's base case) then pay nothing;
//   - a Charge before every bulk memory and table instruction: its length
//     operand, kept in a scratch local, lowers the fuel in proportion;
//   - a GoEnter before every ref.func and table.grow, and a GoLeave right
//     after it: the runtime runs those in Go, outside the guest's machine
//     code, and the yield calls tell the host's watchdog so (time spent
//     there is time in the host, not a guest that stopped returning);
//   - the yield import itself, autoagent:kernel.yield of type (i32) -> ().
//
// Guest code may not read or write the two globals, call yield, or touch
// a scratch local; only the patterns may, and they must match byte for
// byte (but for the costs they carry, which must be at least what the
// verifier counts; a FuelCheck's or StackCharge's leading global index and
// cost are read as numbers, so a longer encoding of the same values
// matches too, and StackExit, which raises the budget, only byte for byte).
type Instrumentation struct {
	Fuel, Stack uint32 // global indices
	Yield       uint32 // function index
	YieldEvery  int32
	// MaxUnchecked is the largest cost of a function without a check.
	MaxUnchecked int32
	// YieldModule and YieldName are the import's names.
	YieldModule, YieldName string
	// MemShift and TableShift scale a bulk instruction's length to fuel:
	// one unit per 2^MemShift bytes or 2^TableShift table entries.
	MemShift, TableShift byte

	fuelTail []byte // what follows a FuelCheck's cost, computed by Verify
}

// Yield reasons, the i32 the patterns pass to the yield import.
const (
	YieldFuel    = 0 // the fuel ran out: the host checks the deadline
	YieldStack   = 1 // the stack budget ran out: the host ends the call
	YieldEnterGo = 2 // a ref.func or table.grow follows, which runs in Go
	YieldLeaveGo = 3 // the ref.func or table.grow before it returned
)

// GoEnter returns what precedes a ref.func or table.grow (after a
// ref.func's RefFuncCharge): yield(YieldEnterGo).
func (in *Instrumentation) GoEnter() []byte {
	return appendU32([]byte{0x41, YieldEnterGo, 0x10}, in.Yield)
}

// GoLeave returns what follows a ref.func or table.grow:
// yield(YieldLeaveGo).
func (in *Instrumentation) GoLeave() []byte {
	return appendU32([]byte{0x41, YieldLeaveGo, 0x10}, in.Yield)
}

// goOpEnd returns where the ref.func or table.grow at p ends, or -1 when
// none starts there.
func goOpEnd(b []byte, p int) int {
	skip := func(p int) int { // past one LEB128 number of at most 5 bytes
		for i := 0; i < 5 && p < len(b); i++ {
			if b[p]&0x80 == 0 {
				return p + 1
			}
			p++
		}
		return -1
	}
	switch {
	case p < len(b) && b[p] == 0xd2:
		return skip(p + 1)
	case p+1 < len(b) && b[p] == 0xfc && b[p+1] == 15: // table.grow
		return skip(p + 2)
	}
	return -1
}

// FrameCost is the stack budget one call of a function costs: a bound on
// the machine stack its frame takes, from its locals (parameters
// included), its operand stack height and the values its instructions
// produce. The last term is there because wazero gives every value kept
// across a call a spill slot of its own, never shared: a function of 20 000
// calls, each with two values live across it, took a 320 KB frame with
// one local and a stack three high. Generous on purpose: it only has to
// be at least the real frame.
func FrameCost(locals, maxStack, values int) int32 {
	return int32(min(16*int64(locals+maxStack+values)+96, 1<<30))
}

// FuelCheck returns the check of a region that costs cost:
//
//	fuel -= cost; if fuel < 1 { yield(0); fuel = YieldEvery }
func (in *Instrumentation) FuelCheck(cost int32) []byte {
	b := appendU32([]byte{0x23}, in.Fuel)
	b = appendS32(append(b, 0x41), cost)
	return append(b, in.fuelCheckTail()...)
}

// fuelCheckTail is FuelCheck after its cost.
func (in *Instrumentation) fuelCheckTail() []byte {
	b := appendU32([]byte{0x6b, 0x24}, in.Fuel)
	b = appendU32(append(b, 0x23), in.Fuel)
	b = append(b, 0x41, 0x01, 0x48, 0x04, 0x40, 0x41, YieldFuel, 0x10)
	b = appendU32(b, in.Yield)
	b = appendS32(append(b, 0x41), in.YieldEvery)
	b = appendU32(append(b, 0x24), in.Fuel)
	return append(b, 0x0b)
}

// StackEntry returns what starts a function whose whole body the rewrite
// charges to the stack budget, before the block it wraps the body in: its
// fuel check, then the StackCharge.
func (in *Instrumentation) StackEntry(fuel, cost int32) []byte {
	return append(in.FuelCheck(fuel), in.StackCharge(cost)...)
}

// StackCharge returns what precedes a charged block (see
// [Instrumentation]), lowering the stack budget by cost:
//
//	stack -= cost; if stack < 0 { yield(1) }
func (in *Instrumentation) StackCharge(cost int32) []byte {
	b := appendU32([]byte{0x23}, in.Stack)
	b = appendS32(append(b, 0x41), cost)
	return append(b, in.stackEntryTail()...)
}

// stackEntryTail is StackEntry after its stack cost.
func (in *Instrumentation) stackEntryTail() []byte {
	b := appendU32([]byte{0x6b, 0x24}, in.Stack)
	b = appendU32(append(b, 0x23), in.Stack)
	b = append(b, 0x41, 0x00, 0x48, 0x04, 0x40, 0x41, YieldStack, 0x10)
	b = appendU32(b, in.Yield)
	return append(b, 0x0b)
}

// RefFuncCost is what a ref.func in a function body costs the stack
// budget, never given back: wazero keeps a record (24 bytes, and its
// share of the list that holds them) for every ref.func an instance runs,
// until the instance closes. A loop of them grew the host by 1.1 GB in one
// 10 s call, outside every limit.
const RefFuncCost = 64

// RefFuncCharge returns what precedes a ref.func in a function body,
// with cost at least RefFuncCost:
//
//	stack -= cost; if stack < 0 { yield(1) }
func (in *Instrumentation) RefFuncCharge(cost int32) []byte { return in.StackCharge(cost) }

// StackExit returns what follows a charged block, and precedes every
// return inside it: stack += cost.
func (in *Instrumentation) StackExit(cost int32) []byte {
	b := appendU32([]byte{0x23}, in.Stack)
	b = appendS32(append(b, 0x41), cost)
	b = append(b, 0x6a, 0x24)
	return appendU32(b, in.Stack)
}

// Charge returns what precedes a bulk instruction, its length n on top
// of the stack:
//
//	scratch = n; fuel -= n >> shift; if fuel < 1 { yield(0); fuel = YieldEvery }
func (in *Instrumentation) Charge(scratch uint32, shift byte) []byte {
	b := appendU32([]byte{0x22}, scratch)
	b = appendU32(append(b, 0x23), in.Fuel)
	b = appendU32(append(b, 0x20), scratch)
	b = append(b, 0x41, shift, 0x76)
	return append(b, in.fuelCheckTail()...)
}

// Verify validates the rewritten module b under lim, as [Validate] does,
// and checks that it carries in everywhere.
func Verify(b []byte, lim Limits, in Instrumentation) (*Module, error) {
	in.prepare()
	return validate(b, lim.WithDefaults(), &in)
}

func (in *Instrumentation) prepare() { in.fuelTail = in.fuelCheckTail() }

// matchFuelCheck reads a FuelCheck at the start of b: its cost and length.
func (in *Instrumentation) matchFuelCheck(b []byte) (cost int32, n int, ok bool) {
	cost, p, ok := matchPrefix(b, in.Fuel)
	if !ok || !bytes.HasPrefix(b[p:], in.fuelTail) {
		return 0, 0, false
	}
	return cost, p + len(in.fuelTail), true
}

// matchStackCharge reads a StackCharge at the start of b: its cost and
// length.
func (in *Instrumentation) matchStackCharge(b []byte) (cost int32, n int, ok bool) {
	cost, p, ok := matchPrefix(b, in.Stack)
	tail := in.stackEntryTail()
	if !ok || !bytes.HasPrefix(b[p:], tail) {
		return 0, 0, false
	}
	return cost, p + len(tail), true
}

// matchPrefix reads `global.get g; i32.const v` at the start of b.
func matchPrefix(b []byte, g uint32) (v int32, n int, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	r := &reader{b: b, fn: -1}
	if r.byte() != 0x23 || r.u32() != g || r.byte() != 0x41 {
		return 0, 0, false
	}
	v = r.s32()
	return v, r.p, true
}

// region is a stretch of code one fuel check pays for: a function
// outside its loops, or a loop's body outside the loops it holds.
type region struct {
	fn       int
	checked  bool  // it starts with a fuel check (a function may not)
	declared int64 // the check's cost
	count    int64 // instructions, as the verifier counts them
	callees  []uint32
	indirect int64
}

// funcInstrumentation is the verification state of one function body.
type funcInstrumentation struct {
	in *Instrumentation
	fn int
	pc int // the current instruction's
	// patternEnd: instructions before it belong to a matched pattern,
	// where the instrumentation's own state may be used.
	patternEnd int
	// The charged block: scope is its frame's index in ctrls (-1 when
	// none is open), scopeCost what its StackCharge took. scopeAt is
	// where the block must start after a StackCharge (-1: none pending),
	// exitAt where the StackExit must follow its end (-1: none due),
	// retAt where a return may follow an in-block StackExit.
	scope, scopeAt, exitAt, retAt int
	scopeCost, exitCost           int32
	// charges: the StackCharge costs of the charged blocks, each checked
	// against the frame's cost once the function is known.
	scopeCosts []int32
	// scratch is the local Charge patterns use (the last local); the
	// counts say how often it was seen inside and outside them.
	scratch      int
	chargeEnd    int // a bulk instruction must start right here
	refChargeEnd int // a ref.func must start right here, charged refCost
	// goOp is where the ref.func or table.grow a GoEnter precedes starts,
	// goLeaveAt where the GoLeave after it must (-1: none due).
	goOp, goLeaveAt int
	refCost         int32
	chargeShift     byte
	charges         int
	scratchOutside  int
	curIn           bool // the current instruction is part of a pattern
	// regions: the function's own (first) and the loops open around the
	// current instruction.
	regions []*region
	// loops marks, per open control frame, whether it is a loop with a
	// region of its own.
	loops    []bool
	verifier *validator
}

// begin starts verifying the function body at pc (after its locals).
func (in *Instrumentation) begin(f *funcValidator, pc int) *funcInstrumentation {
	fi := &funcInstrumentation{in: in, fn: f.r.fn, scratch: len(f.locals) - 1, chargeEnd: -1, refChargeEnd: -1,
		goOp: -1, goLeaveAt: -1, scope: -1, scopeAt: -1, exitAt: -1, retAt: -1, verifier: f.v}
	entry := &region{fn: f.r.fn}
	fi.regions = []*region{entry}
	// A function its callers pay for has no fuel check of its own.
	if fuel, n, ok := in.matchFuelCheck(f.r.b[pc:]); ok {
		entry.checked, entry.declared = true, int64(fuel)
		fi.patternEnd = pc + n
	}
	return fi
}

func (fi *funcInstrumentation) fail(f *funcValidator, format string, args ...any) {
	f.r.invalid("instrumentation: "+format, args...)
}

// at runs before each instruction at pc.
func (fi *funcInstrumentation) at(f *funcValidator, pc int) {
	fi.pc = pc
	fi.curIn = pc < fi.patternEnd
	if fi.curIn {
		return
	}
	b := f.r.b
	if fi.scopeAt >= 0 && pc != fi.scopeAt {
		fi.fail(f, "a stack budget charge before a block that does not follow it")
	}
	if pc == fi.goLeaveAt {
		leave := fi.in.GoLeave()
		if !bytes.HasPrefix(b[pc:], leave) {
			fi.fail(f, "a ref.func or table.grow not followed by the host's leave of Go")
		}
		fi.patternEnd, fi.goLeaveAt, fi.curIn = pc+len(leave), -1, true
		return
	}
	if b[pc] == 0x41 {
		// A GoEnter, before a ref.func or table.grow (and after a
		// ref.func's charge, whose end it then carries).
		if enter := fi.in.GoEnter(); bytes.HasPrefix(b[pc:], enter) {
			if op := pc + len(enter); goOpEnd(b, op) >= 0 {
				fi.patternEnd, fi.curIn = op, true
				fi.goOp, fi.goLeaveAt = op, goOpEnd(b, op)
				if fi.refChargeEnd == pc {
					fi.refChargeEnd = op
				}
				return
			}
		}
	}
	if pc == fi.exitAt {
		exit := fi.in.StackExit(fi.exitCost)
		if !bytes.HasPrefix(b[pc:], exit) {
			fi.fail(f, "a charged block is not followed by the stack budget's restore")
		}
		fi.patternEnd, fi.exitAt, fi.curIn = pc+len(exit), -1, true
		return
	}
	if b[pc] == 0x23 {
		// A StackCharge: before a charged block, or a ref.func's (the
		// budget lowered, never restored).
		if cost, n, ok := fi.in.matchStackCharge(b[pc:]); ok {
			fi.patternEnd, fi.curIn = pc+n, true
			if next := pc + n; next < len(b) && (b[next] == 0x02 || b[next] == 0x03 || b[next] == 0x04) {
				if fi.scope >= 0 {
					fi.fail(f, "a stack budget charge inside a charged block")
				}
				fi.scopeAt, fi.scopeCost = next, cost
				fi.scopeCosts = append(fi.scopeCosts, cost)
				return
			}
			if cost < RefFuncCost {
				// One that raised the budget would undo the stack bound.
				fi.fail(f, "a stack budget charge of %d, below %d", cost, RefFuncCost)
			}
			fi.refChargeEnd, fi.refCost = fi.patternEnd, cost
			return
		}
		// A return from inside the charged block gives the charge back.
		if fi.scope >= 0 {
			if exit := fi.in.StackExit(fi.scopeCost); bytes.HasPrefix(b[pc:], exit) && pc+len(exit) < len(b) && b[pc+len(exit)] == 0x0f {
				fi.patternEnd, fi.curIn = pc+len(exit), true
				fi.retAt = fi.patternEnd
				return
			}
		}
	}
	// A charge starts with local.tee of the scratch local.
	if fi.scratch >= 0 && b[pc] == 0x22 {
		for _, shift := range [...]byte{fi.in.MemShift, fi.in.TableShift} {
			c := fi.in.Charge(uint32(fi.scratch), shift)
			if bytes.HasPrefix(b[pc:], c) {
				fi.patternEnd = pc + len(c)
				fi.chargeEnd, fi.chargeShift = fi.patternEnd, shift
				fi.charges++
				fi.curIn = true
				return
			}
		}
	}
	// Guest code: one instruction of the innermost region.
	fi.regions[len(fi.regions)-1].count++
}

// inPattern reports whether the instruction being decoded belongs to a
// matched pattern.
func (fi *funcInstrumentation) inPattern(*funcValidator) bool { return fi.curIn }

// opened runs after a block, loop or if pushed its frame.
func (fi *funcInstrumentation) opened(f *funcValidator, op byte) {
	if fi.scopeAt >= 0 && fi.pc == fi.scopeAt {
		// The block a StackCharge precedes: charged until it ends.
		fi.scope, fi.scopeAt = len(f.ctrls)-1, -1
	}
	if op != 0x03 {
		fi.loops = append(fi.loops, false)
		return
	}
	// A loop: its fuel check must follow, and it starts a region.
	pc := f.r.p
	cost, n, ok := fi.in.matchFuelCheck(f.r.b[pc:])
	if !ok {
		fi.fail(f, "a loop without a fuel check")
	}
	fi.patternEnd = max(fi.patternEnd, pc+n)
	fi.loops = append(fi.loops, true)
	fi.regions = append(fi.regions, &region{fn: fi.fn, checked: true, declared: int64(cost)})
}

// closed runs after a frame closed (with end); closing the charged block
// must be followed by its StackExit.
func (fi *funcInstrumentation) closed(f *funcValidator, c frame) {
	if len(f.ctrls) > 0 {
		if last := len(fi.loops) - 1; last >= 0 {
			if fi.loops[last] {
				fi.finish(fi.regions[len(fi.regions)-1])
				fi.regions = fi.regions[:len(fi.regions)-1]
			}
			fi.loops = fi.loops[:last]
		}
	}
	if fi.scope >= 0 && len(f.ctrls) == fi.scope && !fi.curIn {
		fi.exitAt, fi.exitCost, fi.scope = f.r.p, fi.scopeCost, -1
	}
}

// finish hands a region to the module-level check.
func (fi *funcInstrumentation) finish(r *region) {
	v := fi.verifier
	v.regions = append(v.regions, r)
}

// branch checks a branch of depth l: from inside the charged block, none
// may leave it but to its own label, which its StackExit follows (or, a
// loop's, starts it again).
func (fi *funcInstrumentation) branch(f *funcValidator, l int) {
	if fi.scope >= 0 && len(f.ctrls)-1-l < fi.scope {
		fi.fail(f, "a branch out of a charged block, past the stack budget's restore")
	}
}

// ret checks a return: inside the charged block, it must follow the
// StackExit.
func (fi *funcInstrumentation) ret(f *funcValidator) {
	if fi.scope >= 0 && fi.pc != fi.retAt {
		fi.fail(f, "a return from a charged block without the stack budget's restore")
	}
}

// call records a call, which must be inside the charged block; calling
// yield is for the patterns only.
func (fi *funcInstrumentation) call(f *funcValidator, idx uint32) {
	if idx == fi.in.Yield {
		if !fi.inPattern(f) {
			fi.fail(f, "guest code calls the yield import")
		}
		return
	}
	f.calls = true
	fi.charged(f)
	r := fi.regions[len(fi.regions)-1]
	r.callees = append(r.callees, idx)
}

func (fi *funcInstrumentation) indirect(f *funcValidator) {
	fi.charged(f)
	fi.regions[len(fi.regions)-1].indirect++
}

// charged checks that a call is inside a charged block.
func (fi *funcInstrumentation) charged(f *funcValidator) {
	if fi.scope < 0 {
		fi.fail(f, "a call outside a block charged to the stack budget")
	}
}

// refFunc checks a ref.func at pc: not of yield, and right after its
// charge of the stack budget.
func (fi *funcInstrumentation) refFunc(f *funcValidator, pc int, idx uint32) {
	if idx == fi.in.Yield {
		fi.fail(f, "ref.func of the yield import")
	}
	if pc != fi.refChargeEnd || fi.refCost < RefFuncCost {
		fi.fail(f, "a ref.func without its stack budget charge")
	}
	fi.enteredGo(f, pc)
}

// enteredGo checks that a GoEnter precedes the ref.func or table.grow at
// pc (the verifier then expects its GoLeave).
func (fi *funcInstrumentation) enteredGo(f *funcValidator, pc int) {
	if pc != fi.goOp {
		fi.fail(f, "a ref.func or table.grow without the host's enter of Go")
	}
}

func (fi *funcInstrumentation) globalUse(f *funcValidator, g uint32) {
	if (g == fi.in.Fuel || g == fi.in.Stack) && !fi.inPattern(f) {
		fi.fail(f, "guest code uses the host's global %d", g)
	}
}

func (fi *funcInstrumentation) localUse(f *funcValidator, l uint32) {
	if int(l) == fi.scratch && !fi.inPattern(f) {
		fi.scratchOutside++
	}
}

// bulk checks that a bulk instruction at pc follows its charge.
func (fi *funcInstrumentation) bulk(f *funcValidator, pc int, sub uint32) {
	var shift byte
	switch sub {
	case 15: // table.grow
		fi.enteredGo(f, pc)
		return
	case 8, 10, 11: // memory.init, memory.copy, memory.fill
		shift = fi.in.MemShift
	case 12, 14, 17: // table.init, table.copy, table.fill
		shift = fi.in.TableShift
	default:
		return
	}
	if pc != fi.chargeEnd || fi.chargeShift != shift {
		fi.fail(f, "a bulk instruction without its fuel charge")
	}
}

// end finishes the function.
func (fi *funcInstrumentation) end(f *funcValidator) {
	if len(fi.scopeCosts) > 0 {
		need := FrameCost(len(f.locals), f.max, f.values)
		for _, cost := range fi.scopeCosts {
			if cost < need {
				fi.fail(f, "stack cost %d below the frame's %d", cost, need)
			}
		}
	}
	if fi.charges > 0 {
		if fi.scratch < len(f.v.m.FuncType(uint32(fi.fn)).Params) || f.locals[fi.scratch] != I32 {
			fi.fail(f, "the charge's scratch local is not a local of type i32")
		}
		if fi.scratchOutside > 0 {
			fi.fail(f, "guest code uses the charge's scratch local")
		}
	}
	entry := fi.regions[0]
	if !entry.checked {
		// Its callers pay for it (a call_indirect or the host MaxUnchecked),
		// so what it runs before its next check must be that small.
		switch {
		case entry.count > int64(fi.in.MaxUnchecked):
			fi.fail(f, "a function of %d instructions without a fuel check", entry.count)
		case len(entry.callees) > 0 || entry.indirect > 0:
			fi.fail(f, "a function that calls outside its loops has no fuel check")
		}
	}
	fi.finish(entry)
}

// checkRegions checks, once every function is known, that each fuel check
// charges at least its region's instructions and the small leaves it
// calls.
func (v *validator) checkRegions() {
	in, m, r := v.inst, v.m, v.r
	leaf := make(map[int]int64) // functions without a check: their cost
	for _, g := range v.regions {
		if !g.checked {
			leaf[g.fn] = g.count
		}
	}
	for _, g := range v.regions {
		if !g.checked {
			continue
		}
		need := g.count + g.indirect*int64(in.MaxUnchecked)
		for _, c := range g.callees {
			if int(c) >= m.ImportedFuncs {
				need += leaf[int(c)]
			} else {
				need += int64(in.MaxUnchecked)
			}
		}
		if g.declared < need {
			r.fn = g.fn
			r.invalid("instrumentation: a fuel check charges %d for code of %d", g.declared, need)
		}
	}
}

// checkInstrumentedModule checks the module-level rules: the globals and
// the import are the host's, and nothing but the patterns refers to them.
func (v *validator) checkInstrumentedModule() {
	in, m, r := v.inst, v.m, v.r
	bad := func(format string, args ...any) { r.invalid("instrumentation: "+format, args...) }
	if int(in.Yield) >= m.ImportedFuncs {
		bad("the yield function %d is not an import", in.Yield)
	}
	n := 0
	for _, imp := range m.Imports {
		if imp.Kind != KindFunc {
			continue
		}
		if uint32(n) == in.Yield {
			if imp.Module != in.YieldModule || imp.Name != in.YieldName {
				bad("function %d imports %s.%s, not the yield import", n, imp.Module, imp.Name)
			}
			if t := m.Types[imp.Type]; !sameTypes(t.Params, []ValType{I32}) || len(t.Results) != 0 {
				bad("the yield import has type %v", t)
			}
		} else if imp.Module == in.YieldModule && imp.Name == in.YieldName {
			bad("function %d imports yield a second time", n)
		}
		n++
	}
	for _, g := range []uint32{in.Fuel, in.Stack} {
		if int(g) < m.ImportedGlobals || int(g) >= len(m.Globals) {
			bad("global %d is not a defined global", g)
		}
		if gl := m.Globals[g]; gl.Type != I32 || !gl.Mutable {
			bad("global %d is not a mutable i32", g)
		}
	}
	if in.Fuel == in.Stack {
		bad("the fuel and the stack budget share a global")
	}
	want := appendS32([]byte{0x41}, in.YieldEvery)
	if !bytes.Equal(m.Globals[in.Fuel].Init, want) {
		bad("the fuel does not start at %d", in.YieldEvery)
	}
	if !bytes.Equal(m.Globals[in.Stack].Init, []byte{0x41, 0x00}) {
		bad("the stack budget does not start at 0")
	}
	if m.refs != nil && m.refs[in.Yield] {
		bad("the yield import is exported or in an element segment")
	}
	if m.Start >= 0 {
		bad("a start function runs before the host sets the stack budget")
	}
	v.checkRegions()
}

func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
