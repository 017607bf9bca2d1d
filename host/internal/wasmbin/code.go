package wasmbin

import (
	"fmt"
)

// frame is a control frame of function validation.
type frame struct {
	op          byte // 0 for the function itself, else block, loop, if or else
	params      []ValType
	results     []ValType
	height      int // operand stack height at entry
	unreachable bool
	id          int32 // the frame's id in phiModel
	brs         int   // branches to the frame's label
}

func (f *frame) labelTypes() []ValType {
	if f.op == 0x03 {
		return f.params
	}
	return f.results
}

// funcValidator validates function bodies; its buffers are reused from one
// function to the next.
type funcValidator struct {
	v        *validator
	r        *reader
	vals     []ValType
	ctrls    []frame
	locals   []ValType
	max      int
	calls    bool
	bulk     bool
	branches int
	values   int                  // values pushed by guest instructions (not the patterns')
	ins      *funcInstrumentation // nil unless verifying
	// callValues, loops and maxLoops feed Code's CallValues and
	// LoopDepth; phi its PhiWork.
	callValues int64
	loops      int
	maxLoops   int
	phi        phiModel
}

func (f *funcValidator) push(t ValType) {
	if f.ins == nil || !f.ins.curIn {
		f.values++
	}
	f.vals = append(f.vals, t)
	if len(f.vals) > f.max {
		f.max = len(f.vals)
		if f.max > f.r.lim.StackHeight {
			f.r.limit("StackHeight", fmt.Sprintf("function %d has an operand stack of more than %d values", f.r.fn, f.r.lim.StackHeight), f.r.lim.StackHeight, f.max)
		}
	}
}

func (f *funcValidator) pop() ValType {
	c := &f.ctrls[len(f.ctrls)-1]
	if len(f.vals) == c.height {
		if c.unreachable {
			return vtUnknown
		}
		f.r.invalid("type mismatch: an operand is missing")
	}
	t := f.vals[len(f.vals)-1]
	f.vals = f.vals[:len(f.vals)-1]
	return t
}

func (f *funcValidator) popExpect(want ValType) ValType {
	got := f.pop()
	if got != want && got != vtUnknown && want != vtUnknown {
		f.r.invalid("type mismatch: %v where %v is expected", got, want)
	}
	if got == vtUnknown {
		return want
	}
	return got
}

func (f *funcValidator) popVals(ts []ValType) {
	for i := len(ts) - 1; i >= 0; i-- {
		f.popExpect(ts[i])
	}
}

func (f *funcValidator) pushVals(ts []ValType) {
	for _, t := range ts {
		f.push(t)
	}
}

// checkVals checks that the top of the stack holds ts, without popping.
func (f *funcValidator) checkVals(ts []ValType) {
	c := &f.ctrls[len(f.ctrls)-1]
	for i := range ts {
		pos := len(f.vals) - len(ts) + i
		if pos < c.height {
			if c.unreachable {
				continue
			}
			f.r.invalid("type mismatch: an operand is missing")
		}
		if got, want := f.vals[pos], ts[i]; got != want && got != vtUnknown {
			f.r.invalid("type mismatch: %v where %v is expected", got, want)
		}
	}
}

// branch counts one control instruction or branch target against the
// Branches limit.
func (f *funcValidator) branch() {
	f.branches++
	if f.branches > f.r.lim.Branches {
		f.r.limit("Branches", fmt.Sprintf("function %d has more than %d control instructions and branch targets", f.r.fn, f.r.lim.Branches), f.r.lim.Branches, f.branches)
	}
}

// check counts one of the checks the rewrite adds (an if that calls
// yield): n branches, the call's values and the if's merge point.
func (f *funcValidator) check(n int) {
	for range n {
		f.branch()
	}
	f.callValues += callValueOverhead + 1
	f.phi.check()
}

func (f *funcValidator) pushCtrl(op byte, params, results []ValType) {
	f.branch()
	if op == 0x03 {
		f.loops++
		f.maxLoops = max(f.maxLoops, f.loops)
	}
	if len(f.ctrls) > f.r.lim.Nesting {
		f.r.limit("Nesting", fmt.Sprintf("function %d nests blocks more than %d deep", f.r.fn, f.r.lim.Nesting), f.r.lim.Nesting, len(f.ctrls))
	}
	id := f.phi.enter(f.ctrls[len(f.ctrls)-1].id, op == 0x03, len(params))
	f.ctrls = append(f.ctrls, frame{op: op, params: params, results: results, height: len(f.vals), id: id})
	f.v.m.maxNesting = max(f.v.m.maxNesting, len(f.ctrls))
	f.pushVals(params)
}

func (f *funcValidator) popCtrl() frame {
	c := f.ctrls[len(f.ctrls)-1]
	f.popVals(c.results)
	if len(f.vals) != c.height {
		f.r.invalid("type mismatch: %d values left on the stack at the end of a block", len(f.vals)-c.height)
	}
	f.ctrls = f.ctrls[:len(f.ctrls)-1]
	if c.op == 0x03 {
		f.loops--
	}
	return c
}

func (f *funcValidator) setUnreachable() {
	c := &f.ctrls[len(f.ctrls)-1]
	f.vals = f.vals[:c.height]
	c.unreachable = true
}

// label returns the frame branch depth l targets.
func (f *funcValidator) label(l uint32) *frame {
	f.branch()
	if int(l) >= len(f.ctrls) {
		f.r.invalid("branch depth %d out of range (%d labels)", l, len(f.ctrls))
	}
	if f.ins != nil {
		f.ins.branch(f, int(l))
	}
	c := &f.ctrls[len(f.ctrls)-1-int(l)]
	c.brs++
	return c
}

func (f *funcValidator) blockType() (params, results []ValType) {
	r := f.r
	c := r.peek()
	switch {
	case c == 0x40:
		r.byte()
		return nil, nil
	case ValType(c) == I32 || ValType(c) == I64 || ValType(c) == F32 || ValType(c) == F64 ||
		ValType(c) == V128 || ValType(c) == FuncRef || ValType(c) == ExternRef:
		r.byte()
		return nil, one[c]
	}
	idx := r.s33()
	if idx < 0 {
		r.malformed("block type %d", idx)
	}
	if idx >= int64(len(f.v.m.Types)) {
		r.invalid("block type index %d out of range (the module has %d types)", idx, len(f.v.m.Types))
	}
	t := f.v.m.Types[idx]
	return t.Params, t.Results
}

func (f *funcValidator) local(i uint32) ValType {
	if int(i) >= len(f.locals) {
		f.r.invalid("local index %d out of range (the function has %d locals)", i, len(f.locals))
	}
	if f.ins != nil {
		f.ins.localUse(f, i)
	}
	return f.locals[i]
}

// localGet notes a read of local i, which may need a phi at every merge
// point above it; localSet a write.
func (f *funcValidator) localGet(i uint32) ValType {
	t := f.local(i)
	f.phi.read(int32(i), f.ctrls[len(f.ctrls)-1].id)
	f.phisOver()
	return t
}

// phisOver refuses the function once its phis alone cost more than
// FunctionWork allows.
func (f *funcValidator) phisOver() {
	if f.phi.over {
		f.r.limit64("FunctionWork", fmt.Sprintf("function %d has a compile work of more than %d: by this point its reads of locals already make %d phis", f.r.fn, f.r.lim.FunctionWork, f.phi.total), f.r.lim.FunctionWork, f.r.lim.FunctionWork+1)
	}
}

func (f *funcValidator) localSet(i uint32) ValType {
	t := f.local(i)
	f.phi.write(int32(i), f.ctrls[len(f.ctrls)-1].id)
	return t
}

func (f *funcValidator) global(i uint32) Global {
	if int(i) >= len(f.v.m.Globals) {
		f.r.invalid("global index %d out of range (the module has %d globals)", i, len(f.v.m.Globals))
	}
	if f.ins != nil {
		f.ins.globalUse(f, i)
	}
	return f.v.m.Globals[i]
}

func (f *funcValidator) memory() {
	if len(f.v.m.Memories) == 0 {
		f.r.invalid("memory instruction without a memory")
	}
}

// memArg reads a memory immediate for an access of size bytes.
func (f *funcValidator) memArg(size uint32) {
	align := f.r.u32()
	f.r.u32() // offset
	if align >= 32 || 1<<align > size {
		f.r.invalid("alignment 2^%d is larger than the access of %d bytes", align, size)
	}
	f.memory()
}

func (f *funcValidator) zero() {
	if c := f.r.byte(); c != 0 {
		f.r.p--
		f.r.malformed("zero byte expected, found 0x%02x", c)
	}
}

func (f *funcValidator) table(i uint32) Table { return f.v.table(i) }

func (f *funcValidator) funcIndex(i uint32) FuncType {
	m := f.v.m
	if int(i) >= len(m.Funcs) {
		f.r.invalid("function index %d out of range (the module has %d functions)", i, len(m.Funcs))
	}
	return m.Types[m.Funcs[i]]
}

// validate validates the function whose code entry spans b[start:end]
// (locals and body) and returns what it learned.
func (f *funcValidator) validate(v *validator, fi, start, end int) Code {
	r := &reader{b: v.r.b[:end], p: start, fn: fi, lim: v.r.lim}
	f.v, f.r = v, r
	f.vals, f.ctrls, f.max, f.calls, f.bulk, f.branches, f.values = f.vals[:0], f.ctrls[:0], 0, false, false, 0, 0
	f.callValues, f.loops, f.maxLoops = 0, 0, 0
	t := v.m.FuncType(uint32(fi))
	f.locals = append(f.locals[:0], t.Params...)
	groups := r.count(2)
	total := uint64(len(t.Params))
	for range groups {
		n := r.u32()
		typ := r.valType()
		total += uint64(n)
		if total > uint64(r.lim.Locals) {
			r.limit("Locals", fmt.Sprintf("function %d has more than %d locals", fi, r.lim.Locals), r.lim.Locals, int(min(total, 1<<31)))
		}
		for range n {
			f.locals = append(f.locals, typ)
		}
	}
	code := Code{Offset: start, Size: end - start, Locals: len(f.locals) - len(t.Params)}
	f.phi.reset(len(f.locals), r.lim.FunctionWork)
	f.ins = nil
	if v.inst != nil {
		f.ins = v.inst.begin(f, r.p)
	}
	f.ctrls = append(f.ctrls, frame{op: 0, results: t.Results})
	// The rewrite's fuel check and stack charge at the start (see
	// phiModel.reset): their calls.
	f.callValues += 2 * (callValueOverhead + 1)
	f.body()
	if !r.eof() {
		r.malformed("%d bytes after the end of the function", len(r.b)-r.p)
	}
	code.MaxStack, code.Calls, code.Bulk, code.Branches, code.Values = f.max, f.calls, f.bulk, f.branches, f.values
	code.CallValues, code.LoopDepth, code.PhiWork = f.callValues, f.maxLoops, f.phi.work(f.maxLoops)
	if f.ins != nil {
		f.ins.end(f)
	}
	return code
}

// body validates instructions up to the function's final end.
func (f *funcValidator) body() {
	r, m := f.r, f.v.m
	for {
		pc := r.p
		if f.ins != nil {
			f.ins.at(f, pc)
		}
		op := r.byte()
		switch op {
		case 0x00: // unreachable
			f.setUnreachable()
		case 0x01: // nop
		case 0x02, 0x03, 0x04: // block, loop, if
			params, results := f.blockType()
			if op == 0x04 {
				f.popExpect(I32)
			}
			f.popVals(params)
			f.pushCtrl(op, params, results)
			if op == 0x03 {
				// The fuel check's if, and its call: compiling one costs
				// about what two more branches do.
				f.check(2)
			}
			if f.ins != nil {
				f.ins.opened(f, op)
			}
		case 0x05: // else
			c := f.popCtrl()
			if c.op != 0x04 {
				r.p = pc
				r.invalid("else without if")
			}
			f.phi.close(c.id)
			f.pushCtrl(0x05, c.params, c.results)
			f.ctrls[len(f.ctrls)-1].brs = c.brs
		case 0x0b: // end
			c := f.popCtrl()
			if c.op == 0x04 && !sameTypes(c.params, c.results) {
				r.p = pc
				r.invalid("if without else must leave its parameters as its results")
			}
			if c.op != 0 {
				f.phi.leave(c.id, c.op == 0x03, c.brs, len(c.results), c.op == 0x04 || c.op == 0x05)
				f.phisOver()
			}
			if f.ins != nil {
				f.ins.closed(f, c)
			}
			f.pushVals(c.results)
			if len(f.ctrls) == 0 {
				return
			}
		case 0x0c: // br
			l := f.label(r.u32())
			f.popVals(l.labelTypes())
			f.setUnreachable()
		case 0x0d: // br_if
			l := f.label(r.u32())
			f.popExpect(I32)
			f.popVals(l.labelTypes())
			f.pushVals(l.labelTypes())
		case 0x0e: // br_table
			n := r.count(1)
			if n > r.lim.BrTableTargets {
				r.limit("BrTableTargets", fmt.Sprintf("function %d has a br_table of %d labels", r.fn, n), r.lim.BrTableTargets, n)
			}
			f.popExpect(I32)
			// Every label must take the default's arity and the values
			// on the stack; the default is read after the others.
			targets := r.p
			for range n {
				r.u32()
			}
			def := f.label(r.u32())
			arity := len(def.labelTypes())
			after := r.p
			r.p = targets
			for range n {
				l := f.label(r.u32())
				if len(l.labelTypes()) != arity {
					r.invalid("br_table labels of different arities (%d and %d)", len(l.labelTypes()), arity)
				}
				f.checkVals(l.labelTypes())
			}
			r.p = after
			f.popVals(def.labelTypes())
			f.setUnreachable()
		case 0x0f: // return
			if f.ins != nil {
				f.ins.ret(f)
			}
			f.popVals(f.ctrls[0].results)
			f.setUnreachable()
		case 0x10: // call
			idx := r.u32()
			t := f.funcIndex(idx)
			if f.ins != nil {
				f.ins.call(f, idx)
			} else {
				f.calls = true
			}
			f.callValues += int64(callValueOverhead + len(t.Params) + len(t.Results))
			f.popVals(t.Params)
			f.pushVals(t.Results)
		case 0x11: // call_indirect
			ti := r.u32()
			t := f.v.funcType(ti)
			tab := r.u32()
			if f.table(tab).Elem != FuncRef {
				r.invalid("call_indirect through table %d, which does not hold functions", tab)
			}
			f.calls = true
			f.callValues += int64(callValueOverhead + len(t.Params) + len(t.Results))
			if f.ins != nil {
				f.ins.indirect(f)
			}
			f.popExpect(I32)
			f.popVals(t.Params)
			f.pushVals(t.Results)
		case 0x1a: // drop
			f.pop()
		case 0x1b: // select
			f.popExpect(I32)
			t1, t2 := f.pop(), f.pop()
			if t1.isRef() || t2.isRef() {
				r.invalid("select of references needs a type annotation")
			}
			if t1 != t2 && t1 != vtUnknown && t2 != vtUnknown {
				r.invalid("type mismatch: select of %v and %v", t2, t1)
			}
			if t1 == vtUnknown {
				t1 = t2
			}
			f.push(t1)
		case 0x1c: // select t
			if n := r.u32(); n != 1 {
				r.invalid("select with %d types; it takes one", n)
			}
			t := r.valType()
			f.popExpect(I32)
			f.popExpect(t)
			f.popExpect(t)
			f.push(t)
		case 0x20: // local.get
			f.push(f.localGet(r.u32()))
		case 0x21: // local.set
			f.popExpect(f.localSet(r.u32()))
		case 0x22: // local.tee
			t := f.localSet(r.u32())
			f.popExpect(t)
			f.push(t)
		case 0x23: // global.get
			f.push(f.global(r.u32()).Type)
		case 0x24: // global.set
			g := f.global(r.u32())
			if !g.Mutable {
				r.invalid("global.set of an immutable global")
			}
			f.popExpect(g.Type)
		case 0x25: // table.get
			t := f.table(r.u32())
			f.popExpect(I32)
			f.push(t.Elem)
		case 0x26: // table.set
			t := f.table(r.u32())
			f.popExpect(t.Elem)
			f.popExpect(I32)
		case 0x3f, 0x40: // memory.size, memory.grow
			f.zero()
			f.memory()
			if op == 0x40 {
				f.popExpect(I32)
			}
			f.push(I32)
		case 0x41:
			r.s32()
			f.push(I32)
		case 0x42:
			r.s64()
			f.push(I64)
		case 0x43:
			r.bytes(4)
			f.push(F32)
		case 0x44:
			r.bytes(8)
			f.push(F64)
		case 0xd0: // ref.null
			f.push(r.refType())
		case 0xd1: // ref.is_null
			if t := f.pop(); t != vtUnknown && !t.isRef() {
				r.invalid("type mismatch: ref.is_null of %v", t)
			}
			f.push(I32)
		case 0xd2: // ref.func
			// Its stack charge is an if and a call, as a bulk
			// instruction's charge is.
			f.check(3)
			idx := r.u32()
			f.funcIndex(idx)
			if m.refs == nil || !m.refs[idx] {
				r.invalid("ref.func %d names a function not declared by an element segment, export or global", idx)
			}
			if f.ins != nil {
				f.ins.refFunc(f, pc, idx)
			}
			f.push(FuncRef)
		case 0xfc:
			f.misc(pc)
		case 0xfd:
			f.simd()
		default:
			if mo := memOps[op]; mo.t != 0 {
				f.memArg(mo.size)
				if mo.store {
					f.popExpect(mo.t)
					f.popExpect(I32)
				} else {
					f.popExpect(I32)
					f.push(mo.t)
				}
				continue
			}
			if s := numeric[op]; s.res != 0 {
				if s.b != 0 {
					f.popExpect(s.b)
				}
				f.popExpect(s.a)
				f.push(s.res)
				continue
			}
			r.p = pc
			r.malformed("unknown instruction 0x%02x", op)
		}
	}
}

func sameTypes(a, b []ValType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// misc validates a 0xfc instruction.
func (f *funcValidator) misc(pc int) {
	r, m := f.r, f.v.m
	sub := r.u32()
	switch sub {
	case 8, 10, 11, 12, 14, 17:
		// The fuel charge's if and call: compiling one costs about what
		// three branches do (measured: a function of 4 000 charged fills
		// compiles in 1.5 s, one of 4 000 plain ifs in 0.3 s).
		f.bulk = true
		f.check(3)
	}
	if f.ins != nil {
		f.ins.bulk(f, pc, sub)
	}
	switch {
	case sub <= 7: // trunc_sat
		s := truncSat[sub]
		f.popExpect(s.a)
		f.push(s.res)
	case sub == 8: // memory.init
		d := r.u32()
		f.zero()
		f.memory()
		f.dataIndex(d)
		f.popExpect(I32)
		f.popExpect(I32)
		f.popExpect(I32)
	case sub == 9: // data.drop
		f.dataIndex(r.u32())
	case sub == 10: // memory.copy
		f.zero()
		f.zero()
		f.memory()
		f.popExpect(I32)
		f.popExpect(I32)
		f.popExpect(I32)
	case sub == 11: // memory.fill
		f.zero()
		f.memory()
		f.popExpect(I32)
		f.popExpect(I32)
		f.popExpect(I32)
	case sub == 12: // table.init elem table
		e := r.u32()
		t := f.table(r.u32())
		if int(e) >= len(m.Elements) {
			r.invalid("element segment %d out of range (the module has %d)", e, len(m.Elements))
		}
		if m.Elements[e] != t.Elem {
			r.invalid("table.init of %v elements into a table of %v", m.Elements[e], t.Elem)
		}
		f.popExpect(I32)
		f.popExpect(I32)
		f.popExpect(I32)
	case sub == 13: // elem.drop
		if e := r.u32(); int(e) >= len(m.Elements) {
			r.invalid("element segment %d out of range (the module has %d)", e, len(m.Elements))
		}
	case sub == 14: // table.copy dst src
		d, s := f.table(r.u32()), f.table(r.u32())
		if d.Elem != s.Elem {
			r.invalid("table.copy from a table of %v to one of %v", s.Elem, d.Elem)
		}
		f.popExpect(I32)
		f.popExpect(I32)
		f.popExpect(I32)
	case sub == 15: // table.grow
		t := f.table(r.u32())
		f.popExpect(I32)
		f.popExpect(t.Elem)
		f.push(I32)
	case sub == 16: // table.size
		f.table(r.u32())
		f.push(I32)
	case sub == 17: // table.fill
		t := f.table(r.u32())
		f.popExpect(I32)
		f.popExpect(t.Elem)
		f.popExpect(I32)
	default:
		r.p = pc
		r.malformed("unknown instruction 0xfc %d", sub)
	}
}

func (f *funcValidator) dataIndex(d uint32) {
	m := f.v.m
	if m.DataCount < 0 {
		f.r.malformed("memory.init and data.drop need a data count section")
	}
	if int(d) >= m.DataCount {
		f.r.invalid("data segment %d out of range (the module has %d)", d, m.DataCount)
	}
}

// simd validates a 0xfd instruction.
func (f *funcValidator) simd() {
	r := f.r
	pc := r.p
	sub := r.u32()
	if sub > 255 || simd[sub].kind == simdNone {
		r.p = pc
		r.malformed("unknown instruction 0xfd %d", sub)
	}
	// The sub-opcode is a LEB128 number, but wazero reads it as one byte
	// (an opcode of 128 or more is that byte followed by 0x01, which it
	// then decodes as a nop). Any other encoding would make the two
	// decoders see different instructions, so only those two are taken.
	if n := r.p - pc; (sub < 0x80 && n != 1) || (sub >= 0x80 && n != 2) {
		r.p = pc
		r.malformed("SIMD opcode %d not minimally encoded", sub)
	}
	op := simd[sub]
	lane := func() {
		if l := r.byte(); l >= op.lanes {
			r.invalid("lane index %d out of range (%d lanes)", l, op.lanes)
		}
	}
	switch op.kind {
	case simdUnary:
		f.popExpect(V128)
		f.push(V128)
	case simdBinary:
		f.popExpect(V128)
		f.popExpect(V128)
		f.push(V128)
	case simdTernary:
		f.popExpect(V128)
		f.popExpect(V128)
		f.popExpect(V128)
		f.push(V128)
	case simdTest:
		f.popExpect(V128)
		f.push(I32)
	case simdShift:
		f.popExpect(I32)
		f.popExpect(V128)
		f.push(V128)
	case simdSplat:
		f.popExpect(op.t)
		f.push(V128)
	case simdExtract:
		lane()
		f.popExpect(V128)
		f.push(op.t)
	case simdReplace:
		lane()
		f.popExpect(op.t)
		f.popExpect(V128)
		f.push(V128)
	case simdLoad:
		f.memArg(op.size)
		f.popExpect(I32)
		f.push(V128)
	case simdStore:
		f.memArg(op.size)
		f.popExpect(V128)
		f.popExpect(I32)
	case simdLoadLane:
		f.memArg(op.size)
		lane()
		f.popExpect(V128)
		f.popExpect(I32)
		f.push(V128)
	case simdStoreLane:
		f.memArg(op.size)
		lane()
		f.popExpect(V128)
		f.popExpect(I32)
	case simdConst:
		r.bytes(16)
		f.push(V128)
	case simdShuffle:
		for _, l := range r.bytes(16) {
			if l >= 32 {
				r.invalid("shuffle lane index %d out of range (32 lanes)", l)
			}
		}
		f.popExpect(V128)
		f.popExpect(V128)
		f.push(V128)
	}
}
