package wasmbin

import (
	"math/rand/v2"
)

// genModule writes a random valid module: a memory, a table, globals of
// every type, and functions whose bodies are random well-typed sequences
// of nearly every instruction validation knows (numeric, SIMD, memory,
// locals, globals, blocks, loops, ifs, branches, calls, references, bulk
// operations). It exercises the validator far from the shapes compilers
// emit; TestGeneratedAgreeWithWazero and the fuzzer compare the verdicts.
func genModule(r *rand.Rand) []byte {
	g := &gen{r: r}
	return g.module()
}

type gen struct {
	r     *rand.Rand
	types []FuncType
	funcs []uint32 // type of each function
	nfunc int
}

var genValTypes = []ValType{I32, I64, F32, F64, V128}

func (g *gen) valType() ValType { return genValTypes[g.r.IntN(len(genValTypes))] }

func (g *gen) module() []byte {
	// Types: () -> (), and a few random ones.
	g.types = []FuncType{{}}
	for range 3 {
		var t FuncType
		for range g.r.IntN(3) {
			t.Params = append(t.Params, g.valType())
		}
		for range g.r.IntN(3) {
			t.Results = append(t.Results, g.valType())
		}
		g.types = append(g.types, t)
	}
	g.nfunc = 1 + g.r.IntN(4)
	for i := range g.nfunc {
		if i == 0 {
			g.funcs = append(g.funcs, 0)
			continue
		}
		g.funcs = append(g.funcs, uint32(g.r.IntN(len(g.types))))
	}
	var b []byte
	b = append(b, "\x00asm\x01\x00\x00\x00"...)
	// type section
	var ts []byte
	ts = appendU32(ts, uint32(len(g.types)))
	for _, t := range g.types {
		ts = append(ts, 0x60)
		ts = appendU32(ts, uint32(len(t.Params)))
		ts = append(ts, valBytes(t.Params)...)
		ts = appendU32(ts, uint32(len(t.Results)))
		ts = append(ts, valBytes(t.Results)...)
	}
	b = genSection(b, SecType, ts)
	fs := appendU32(nil, uint32(g.nfunc))
	for _, t := range g.funcs {
		fs = appendU32(fs, t)
	}
	b = genSection(b, SecFunction, fs)
	b = genSection(b, SecTable, []byte{1, 0x70, 0x00, 4})
	b = genSection(b, SecMemory, []byte{1, 0x00, 1})
	// globals: one mutable of each scalar type, one immutable i32
	gs := []byte{6,
		0x7f, 1, 0x41, 0x05, 0x0b,
		0x7e, 1, 0x42, 0x05, 0x0b,
		0x7d, 1, 0x43, 0, 0, 0, 0, 0x0b,
		0x7c, 1, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b,
		0x7b, 1, 0xfd, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b,
		0x7f, 0, 0x41, 0x01, 0x0b}
	b = genSection(b, SecGlobal, gs)
	b = genSection(b, SecExport, []byte{1, 1, 'f', 0, 0})
	// element: declare every function for ref.func, active in the table
	es := []byte{1, 0x00, 0x41, 0x00, 0x0b}
	es = appendU32(es, uint32(g.nfunc))
	for i := range g.nfunc {
		es = appendU32(es, uint32(i))
	}
	b = genSection(b, SecElement, es)
	b = genSection(b, SecDataCount, []byte{1})
	var code []byte
	code = appendU32(code, uint32(g.nfunc))
	for i := range g.nfunc {
		body := g.function(g.types[g.funcs[i]])
		code = appendU32(code, uint32(len(body)))
		code = append(code, body...)
	}
	b = genSection(b, SecCode, code)
	b = genSection(b, SecData, []byte{1, 0x01, 2, 'h', 'i'})
	return b
}

var genGlobalTypes = []ValType{I32, I64, F32, F64, V128}

func genSection(b []byte, id byte, body []byte) []byte {
	b = append(b, id)
	b = appendU32(b, uint32(len(body)))
	return append(b, body...)
}

func valBytes(ts []ValType) []byte {
	out := make([]byte, len(ts))
	for i, t := range ts {
		out[i] = byte(t)
	}
	return out
}

// function writes locals and a body of type t.
func (g *gen) function(t FuncType) []byte {
	locals := append([]ValType(nil), t.Params...)
	var decl []ValType
	for range g.r.IntN(4) {
		v := g.valType()
		decl = append(decl, v)
		locals = append(locals, v)
	}
	out := appendU32(nil, uint32(len(decl)))
	for _, v := range decl {
		out = append(out, 1, byte(v))
	}
	f := &genFunc{g: g, locals: locals}
	f.seq(2 + g.r.IntN(30))
	f.dropAll()
	for _, v := range t.Results {
		f.push(v)
	}
	return append(append(out, f.code...), 0x0b)
}

type genFunc struct {
	g      *gen
	locals []ValType
	stack  []ValType
	code   []byte
	depth  int
}

func (f *genFunc) emit(b ...byte) { f.code = append(f.code, b...) }

// push emits a constant (or a local or global) of type t.
func (f *genFunc) push(t ValType) {
	r := f.g.r
	if r.IntN(3) == 0 {
		for i, l := range f.locals {
			if l == t {
				f.emit(0x20)
				f.code = appendU32(f.code, uint32(i))
				f.stack = append(f.stack, t)
				return
			}
		}
	}
	switch t {
	case I32:
		f.emit(0x41)
		f.code = appendS32(f.code, int32(r.Uint32()))
	case I64:
		f.emit(0x42)
		f.code = appendS64(f.code, int64(r.Uint64()))
	case F32:
		f.emit(0x43, 0, 0, 0x80, 0x3f)
	case F64:
		f.emit(0x44, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f)
	case V128:
		f.emit(0xfd, 12)
		for range 16 {
			f.emit(byte(r.IntN(256)))
		}
	case FuncRef:
		f.emit(0xd2, 0)
	}
	f.stack = append(f.stack, t)
}

func appendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// need makes the top of the stack hold ts (pushing what is missing).
func (f *genFunc) need(ts ...ValType) {
	f.dropAll()
	for _, t := range ts {
		f.push(t)
	}
}

func (f *genFunc) dropAll() {
	for range f.stack {
		f.emit(0x1a)
	}
	f.stack = f.stack[:0]
}

func (f *genFunc) result(t ValType) {
	f.stack = f.stack[:0]
	if t != 0 {
		f.stack = append(f.stack, t)
	}
}

// seq emits n random instructions.
func (f *genFunc) seq(n int) {
	r := f.g.r
	for range n {
		switch k := r.IntN(14); {
		case k < 4: // numeric
			op := byte(0x45 + r.IntN(0xc4-0x45+1))
			s := numeric[op]
			if s.b != 0 {
				f.need(s.a, s.b)
			} else {
				f.need(s.a)
			}
			f.emit(op)
			f.result(s.res)
		case k == 4: // saturating truncation
			sub := r.IntN(8)
			f.need(truncSat[sub].a)
			f.emit(0xfc, byte(sub))
			f.result(truncSat[sub].res)
		case k == 5: // memory
			f.memory()
		case k == 6: // SIMD
			f.simd()
		case k == 7: // locals and globals
			f.variable()
		case k == 8 && f.depth < 4: // block, loop, if
			f.dropAll()
			op := []byte{0x02, 0x03, 0x04}[r.IntN(3)]
			if op == 0x04 {
				f.push(I32)
			}
			f.emit(op, 0x40)
			f.stack = f.stack[:0]
			f.depth++
			f.seq(r.IntN(6))
			if r.IntN(3) == 0 {
				f.dropAll()
				f.push(I32)
				f.emit(0x0d)
				f.code = appendU32(f.code, uint32(r.IntN(f.depth))) // a block, not the function
				f.stack = f.stack[:0]
			}
			f.dropAll()
			if op == 0x04 && r.IntN(2) == 0 {
				f.emit(0x05)
				f.seq(r.IntN(4))
				f.dropAll()
			}
			f.emit(0x0b)
			f.depth--
		case k == 9: // call
			callee := r.IntN(f.g.nfunc)
			t := f.g.types[f.g.funcs[callee]]
			f.need(t.Params...)
			f.emit(0x10)
			f.code = appendU32(f.code, uint32(callee))
			f.stack = append(f.stack[:0], t.Results...)
		case k == 10: // call_indirect of () -> ()
			f.need(I32)
			f.emit(0x11, 0, 0)
			f.stack = f.stack[:0]
		case k == 11: // references and tables
			switch r.IntN(4) {
			case 0:
				f.dropAll()
				f.emit(0xd2, byte(r.IntN(f.g.nfunc)), 0xd1)
				f.stack = append(f.stack, I32)
			case 1:
				f.need(I32)
				f.emit(0x25, 0)
				f.result(FuncRef)
			case 2:
				f.dropAll()
				f.emit(0xfc, 16, 0)
				f.stack = append(f.stack, I32)
			default:
				f.dropAll()
				f.emit(0xd0, 0x70)
				f.stack = append(f.stack, FuncRef)
				f.push(I32)
				f.emit(0xfc, 15, 0)
				f.result(I32)
			}
		case k == 12: // bulk memory and tables
			f.need(I32, I32, I32)
			switch r.IntN(5) {
			case 0:
				f.emit(0xfc, 11, 0)
			case 1:
				f.emit(0xfc, 10, 0, 0)
			case 2:
				f.emit(0xfc, 8, 0, 0)
			case 3:
				f.emit(0xfc, 14, 0, 0)
			default:
				f.emit(0xfc, 12, 0, 0)
			}
			f.stack = f.stack[:0]
		default: // select, drop, nop
			t := genValTypes[r.IntN(4)]
			f.need(t, t, I32)
			f.emit(0x1b)
			f.result(t)
		}
	}
}

func (f *genFunc) memory() {
	r := f.g.r
	ops := make([]byte, 0, 32)
	for op := 0x28; op <= 0x3e; op++ {
		ops = append(ops, byte(op))
	}
	op := ops[r.IntN(len(ops))]
	mo := memOps[op]
	align := uint32(0)
	for 1<<(align+1) <= mo.size && r.IntN(2) == 0 {
		align++
	}
	if mo.store {
		f.need(I32, mo.t)
	} else {
		f.need(I32)
	}
	f.emit(op)
	f.code = appendU32(f.code, align)
	f.code = appendU32(f.code, uint32(r.IntN(64)))
	if mo.store {
		f.result(0)
	} else {
		f.result(mo.t)
	}
	if r.IntN(4) == 0 {
		f.dropAll()
		f.emit(0x3f, 0)
		f.stack = append(f.stack, I32)
	}
}

func (f *genFunc) simd() {
	r := f.g.r
	var sub int
	for {
		sub = r.IntN(256)
		if simd[sub].kind != simdNone {
			break
		}
	}
	op := simd[sub]
	imm := func() {
		f.code = appendU32(f.code, uint32(sub))
	}
	memarg := func() {
		align := uint32(0)
		for 1<<(align+1) <= op.size && r.IntN(2) == 0 {
			align++
		}
		f.code = appendU32(f.code, align)
		f.code = appendU32(f.code, uint32(r.IntN(32)))
	}
	switch op.kind {
	case simdUnary, simdTest:
		f.need(V128)
	case simdBinary, simdShuffle:
		f.need(V128, V128)
	case simdTernary:
		f.need(V128, V128, V128)
	case simdShift:
		f.need(V128, I32)
	case simdSplat:
		f.need(op.t)
	case simdExtract:
		f.need(V128)
	case simdReplace:
		f.need(V128, op.t)
	case simdLoad:
		f.need(I32)
	case simdStore, simdLoadLane, simdStoreLane:
		f.need(I32, V128)
	case simdConst:
		f.dropAll()
	}
	f.emit(0xfd)
	imm()
	switch op.kind {
	case simdExtract, simdReplace:
		f.emit(byte(r.IntN(int(op.lanes))))
	case simdLoad, simdStore:
		memarg()
	case simdLoadLane, simdStoreLane:
		memarg()
		f.emit(byte(r.IntN(int(op.lanes))))
	case simdConst:
		for range 16 {
			f.emit(byte(r.IntN(256)))
		}
	case simdShuffle:
		for range 16 {
			f.emit(byte(r.IntN(32)))
		}
	}
	switch op.kind {
	case simdTest:
		f.result(I32)
	case simdExtract:
		f.result(op.t)
	case simdStore, simdStoreLane:
		f.result(0)
	default:
		f.result(V128)
	}
}

func (f *genFunc) variable() {
	r := f.g.r
	switch r.IntN(4) {
	case 0:
		if len(f.locals) == 0 {
			return
		}
		i := r.IntN(len(f.locals))
		f.dropAll()
		f.emit(0x20)
		f.code = appendU32(f.code, uint32(i))
		f.stack = append(f.stack, f.locals[i])
	case 1:
		if len(f.locals) == 0 {
			return
		}
		i := r.IntN(len(f.locals))
		op := []byte{0x21, 0x22}[r.IntN(2)]
		f.need(f.locals[i])
		f.emit(op)
		f.code = appendU32(f.code, uint32(i))
		if op == 0x22 {
			f.stack = append(f.stack[:0], f.locals[i])
		} else {
			f.stack = f.stack[:0]
		}
	case 2:
		i := r.IntN(len(genGlobalTypes))
		f.dropAll()
		f.emit(0x23, byte(i))
		f.stack = append(f.stack, genGlobalTypes[i])
	default:
		i := r.IntN(len(genGlobalTypes))
		f.need(genGlobalTypes[i])
		f.emit(0x24, byte(i))
		f.stack = f.stack[:0]
	}
}
