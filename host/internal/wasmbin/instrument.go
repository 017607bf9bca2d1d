package wasmbin

import "bytes"

// Instrumentation describes what the host's rewrite adds to a module, so
// [Verify] can check that the rewritten module has it, everywhere, and
// that guest code cannot reach it:
//
//   - the fuel: a mutable i32 global, starting at YieldEvery, that a
//     FuelCheck right after every loop's block type decrements, calling
//     the yield import with reason 0 when it reaches zero (where the host
//     stops a guest whose time is up);
//   - the stack budget: a mutable i32 global the host sets after
//     instantiation, that every function which calls starts by lowering
//     by its frame's cost (StackEntry: FuelCheck, the decrement, and a call
//     of yield with reason 1 when it falls below zero), raising it again
//     after the body, which it wraps in a block so no branch or return
//     skips the raise (StackExit);
//   - a Charge before every bulk memory and table instruction: its length
//     operand, kept in a scratch local, lowers the fuel in proportion;
//   - the yield import itself, autoagent:kernel.yield of type (i32) -> ().
//
// Guest code may not read or write the two globals, call yield, or touch
// a scratch local; only the patterns may, and they must match byte for
// byte.
type Instrumentation struct {
	Fuel, Stack uint32 // global indices
	Yield       uint32 // function index
	YieldEvery  int32
	// YieldModule and YieldName are the import's names.
	YieldModule, YieldName string
	// MemShift and TableShift scale a bulk instruction's length to fuel:
	// one unit per 2^MemShift bytes or 2^TableShift table entries.
	MemShift, TableShift byte

	fuelCheck []byte // FuelCheck(), computed once by Verify
}

// Yield reasons, the i32 the patterns pass to the yield import.
const (
	YieldFuel  = 0 // the fuel ran out: the host checks the deadline
	YieldStack = 1 // the stack budget ran out: the host ends the call
)

// FrameCost is the stack budget one call of a function costs: a bound on
// the machine stack its frame takes, from its locals (parameters
// included) and its operand stack height. Generous on purpose: it only
// has to be at least the real frame.
func FrameCost(locals, maxStack int) int32 {
	return int32(16*(locals+maxStack) + 96)
}

// FuelCheck returns the check that follows every loop's block type:
//
//	fuel -= 1; if fuel == 0 { yield(0); fuel = YieldEvery }
func (in *Instrumentation) FuelCheck() []byte {
	b := appendU32([]byte{0x23}, in.Fuel)
	b = append(b, 0x41, 0x01, 0x6b, 0x24)
	b = appendU32(b, in.Fuel)
	b = appendU32(append(b, 0x23), in.Fuel)
	b = append(b, 0x45, 0x04, 0x40, 0x41, YieldFuel, 0x10)
	b = appendU32(b, in.Yield)
	b = appendS32(append(b, 0x41), in.YieldEvery)
	b = appendU32(append(b, 0x24), in.Fuel)
	return append(b, 0x0b)
}

// StackEntry returns what starts a function that calls, before the block
// that wraps its body: the fuel check, then
//
//	stack -= cost; if stack < 0 { yield(1) }
func (in *Instrumentation) StackEntry(cost int32) []byte {
	b := in.FuelCheck()
	b = appendU32(append(b, 0x23), in.Stack)
	b = appendS32(append(b, 0x41), cost)
	b = append(b, 0x6b, 0x24)
	b = appendU32(b, in.Stack)
	b = appendU32(append(b, 0x23), in.Stack)
	b = append(b, 0x41, 0x00, 0x48, 0x04, 0x40, 0x41, YieldStack, 0x10)
	b = appendU32(b, in.Yield)
	return append(b, 0x0b)
}

// StackExit returns what follows the wrapped body: stack += cost.
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
	b = append(b, 0x41, shift, 0x76, 0x6b, 0x24)
	b = appendU32(b, in.Fuel)
	b = appendU32(append(b, 0x23), in.Fuel)
	b = append(b, 0x41, 0x01, 0x48, 0x04, 0x40, 0x41, YieldFuel, 0x10)
	b = appendU32(b, in.Yield)
	b = appendS32(append(b, 0x41), in.YieldEvery)
	b = appendU32(append(b, 0x24), in.Fuel)
	return append(b, 0x0b)
}

// Verify validates the rewritten module b under lim, as [Validate] does,
// and checks that it carries in everywhere.
func Verify(b []byte, lim Limits, in Instrumentation) (*Module, error) {
	in.prepare()
	return validate(b, lim.WithDefaults(), &in)
}

func (in *Instrumentation) prepare() { in.fuelCheck = in.FuelCheck() }

// funcInstrumentation is the verification state of one function body.
type funcInstrumentation struct {
	in *Instrumentation
	fn int
	// patternEnd: instructions before it belong to a matched pattern,
	// where the instrumentation's own state may be used.
	patternEnd int
	// wrapped: the function starts with StackEntry and its body is in a
	// block (ctrls[1]) closed by StackExit.
	wrapped bool
	cost    int32
	exitAt  int // where StackExit must start, once the wrapper closed
	exitEnd int // the function's final end must be here
	// scratch is the local Charge patterns use (the last local); the
	// counts say how often it was seen inside and outside them.
	scratch        int
	chargeEnd      int // a bulk instruction must start right here
	chargeShift    byte
	charges        int
	scratchOutside int
	calls          bool
	curIn          bool // the current instruction is part of a pattern
}

// begin starts verifying the function body at pc (after its locals).
func (in *Instrumentation) begin(f *funcValidator, pc int) *funcInstrumentation {
	fi := &funcInstrumentation{in: in, fn: f.r.fn, scratch: len(f.locals) - 1, chargeEnd: -1, exitAt: -1, exitEnd: -1}
	b := f.r.b[pc:]
	if !bytes.HasPrefix(b, in.fuelCheck) {
		return fi
	}
	fi.patternEnd = pc + len(in.fuelCheck)
	// A function that calls: StackEntry with its cost, then the body.
	if cost, ok := stackCost(b[len(in.fuelCheck):], in.Stack); ok {
		if entry := in.StackEntry(cost); bytes.HasPrefix(b, entry) {
			fi.wrapped, fi.cost = true, cost
			fi.patternEnd = pc + len(entry)
		}
	}
	return fi
}

// stackCost reads the cost of a StackEntry from its start after the fuel
// check: global.get stack; i32.const cost.
func stackCost(b []byte, stack uint32) (cost int32, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	r := &reader{b: b, fn: -1}
	if r.byte() != 0x23 || r.u32() != stack || r.byte() != 0x41 {
		return 0, false
	}
	return r.s32(), true
}

func (fi *funcInstrumentation) fail(f *funcValidator, format string, args ...any) {
	f.r.invalid("instrumentation: "+format, args...)
}

// at runs before each instruction at pc.
func (fi *funcInstrumentation) at(f *funcValidator, pc int) {
	fi.curIn = pc < fi.patternEnd
	if fi.curIn {
		return
	}
	b := f.r.b
	if pc == fi.exitAt {
		exit := fi.in.StackExit(fi.cost)
		if !bytes.HasPrefix(b[pc:], exit) {
			fi.fail(f, "the wrapped body is not followed by the stack budget's restore")
		}
		fi.patternEnd = pc + len(exit)
		fi.exitEnd = fi.patternEnd
		fi.curIn = true
		return
	}
	if fi.exitEnd >= 0 && (pc != fi.exitEnd || b[pc] != 0x0b) {
		fi.fail(f, "code after the stack budget's restore")
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
}

// inPattern reports whether the instruction being decoded belongs to a
// matched pattern.
func (fi *funcInstrumentation) inPattern(*funcValidator) bool { return fi.curIn }

// loop runs after a loop's block type: the fuel check must follow.
func (fi *funcInstrumentation) loop(f *funcValidator) {
	pc := f.r.p
	if !bytes.HasPrefix(f.r.b[pc:], fi.in.fuelCheck) {
		fi.fail(f, "a loop without a fuel check")
	}
	fi.patternEnd = max(fi.patternEnd, pc+len(fi.in.fuelCheck))
}

// closed runs after a frame closed; closing the wrapper must be followed
// by StackExit and the function's end.
func (fi *funcInstrumentation) closed(f *funcValidator, c frame) {
	if fi.wrapped && len(f.ctrls) == 1 && !fi.curIn && fi.exitAt < 0 {
		fi.exitAt = f.r.p
	}
	if len(f.ctrls) == 0 && fi.wrapped && fi.exitEnd < 0 {
		fi.fail(f, "the function's body is not wrapped")
	}
}

// branch checks a branch of depth l: in a wrapped function, none may skip
// the wrapper to the function's own label.
func (fi *funcInstrumentation) branch(f *funcValidator, l int) {
	if fi.wrapped && l == len(f.ctrls)-1 {
		fi.fail(f, "a branch past the stack budget's restore")
	}
}

func (fi *funcInstrumentation) ret(f *funcValidator) {
	if fi.wrapped {
		fi.fail(f, "a return in a function whose stack cost is restored at its end")
	}
}

// call records a call; calling yield is for the patterns only.
func (fi *funcInstrumentation) call(f *funcValidator, idx uint32) {
	if idx == fi.in.Yield {
		if !fi.inPattern(f) {
			fi.fail(f, "guest code calls the yield import")
		}
		return
	}
	fi.calls = true
	f.calls = true
}

func (fi *funcInstrumentation) indirect(f *funcValidator) { fi.calls = true }

func (fi *funcInstrumentation) refFunc(f *funcValidator, idx uint32) {
	if idx == fi.in.Yield {
		fi.fail(f, "ref.func of the yield import")
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
	if fi.calls && !fi.wrapped {
		fi.fail(f, "a function that calls lacks the stack budget's check")
	}
	if fi.wrapped {
		need := FrameCost(len(f.locals), f.max)
		if fi.cost < need {
			fi.fail(f, "stack cost %d below the frame's %d", fi.cost, need)
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
