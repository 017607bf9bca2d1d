package main

// Each shape adds its bomb to a tool module and registers under the name
// build.sh builds it as.

func init() {
	shapes["aritybomb"] = shape{params{funcs: 1, arity: 1000, n: 11_000}, arityBomb}
	shapes["brtablebomb"] = shape{params{funcs: 1, arity: 1000, n: 11_000}, brTableBomb}
	shapes["passbomb"] = shape{params{funcs: 1, arity: 1000, n: 2_000}, passBomb}
	shapes["loopbomb"] = shape{params{funcs: 1, arity: 1000, n: 2_000}, loopBomb}
	shapes["loopnest"] = shape{params{funcs: 1, arity: 500, n: 500}, loopNest}
	shapes["diamonds"] = shape{params{funcs: 1, arity: 20_000, n: 50}, diamonds}
	shapes["entrybomb"] = shape{params{funcs: 1, arity: 50_000, n: 1}, diamonds}
	shapes["callbomb"] = shape{params{funcs: 1, arity: 1000, n: 2_000}, callBomb}
	shapes["elemsegs"] = shape{params{arity: 1, n: 20_000}, elemSegs}
	shapes["datasegs"] = shape{params{arity: 1, n: 20_000}, dataSegs}
	shapes["overlapdata"] = shape{params{arity: 1, n: 20_000}, overlapData}
}

// i32s is n i32 value types.
func i32s(n int) []byte { return repeat([]byte{i32}, n) }

// pushZeros pushes n i32 zeros; dropN drops n values.
func pushZeros(n int) []byte { return repeat([]byte{opI32Const, 0}, n) }
func dropN(n int) []byte     { return repeat([]byte{opDrop}, n) }

// arityBomb: functions of one block of `arity` results left by `n`
// br_ifs, each of which passes the arity values to the block's end.
func arityBomb(m *module, p params) {
	t := m.typeIndex(funcType{nil, i32s(p.arity)})
	var b []byte
	b = append(b, opBlock)
	b = appendS64(b, int64(t))
	b = append(b, pushZeros(p.arity)...)
	b = append(b, repeat([]byte{opI32Const, 0, opBrIf, 0}, p.n)...)
	b = append(b, opEnd)
	b = append(b, dropN(p.arity)...)
	for range p.funcs {
		m.defineFunc(funcType{}, []byte{0}, b)
	}
}

// brTableBomb: one br_table of `n` labels, each to a block of `arity`
// results.
func brTableBomb(m *module, p params) {
	t := m.typeIndex(funcType{nil, i32s(p.arity)})
	var b []byte
	b = append(b, opBlock)
	b = appendS64(b, int64(t))
	b = append(b, pushZeros(p.arity)...)
	b = append(b, opI32Const, 0, opBrTable)
	b = appendU32(b, uint32(p.n))
	b = append(b, repeat([]byte{0}, p.n+1)...)
	b = append(b, opEnd)
	b = append(b, dropN(p.arity)...)
	for range p.funcs {
		m.defineFunc(funcType{}, []byte{0}, b)
	}
}

// passBomb: `n` ifs without else whose type takes and returns `arity`
// values: each passes them through a merge without any branch.
func passBomb(m *module, p params) {
	t := m.typeIndex(funcType{i32s(p.arity), i32s(p.arity)})
	var b []byte
	b = append(b, pushZeros(p.arity)...)
	one := []byte{opI32Const, 0, 0x04}
	one = appendS64(one, int64(t))
	one = append(one, opEnd)
	b = append(b, repeat(one, p.n)...)
	b = append(b, dropN(p.arity)...)
	for range p.funcs {
		m.defineFunc(funcType{}, []byte{0}, b)
	}
}

// callBomb: `n` calls of a function of `arity` parameters and results,
// each call's results the next one's arguments.
func callBomb(m *module, p params) {
	t := funcType{i32s(p.arity), i32s(p.arity)}
	var id []byte
	for i := range p.arity {
		id = appendU32(append(id, opLocalGet), uint32(i))
	}
	callee := m.defineFunc(t, []byte{0}, id)
	var b []byte
	b = append(b, pushZeros(p.arity)...)
	b = append(b, repeat(appendU32([]byte{opCall}, callee), p.n)...)
	b = append(b, dropN(p.arity)...)
	for range p.funcs {
		m.defineFunc(funcType{}, []byte{0}, b)
	}
}

// loopBomb: a loop taking `arity` values, left back to its header by `n`
// br_ifs each carrying them (on local 0: nothing calls the function).
func loopBomb(m *module, p params) {
	t := m.typeIndex(funcType{i32s(p.arity), i32s(p.arity)})
	var b []byte
	b = append(b, pushZeros(p.arity)...)
	b = append(b, opLoop)
	b = appendS64(b, int64(t))
	b = append(b, repeat([]byte{opLocalGet, 0, opBrIf, 0}, p.n)...)
	b = append(b, opEnd)
	b = append(b, dropN(p.arity)...)
	for range p.funcs {
		m.defineFunc(funcType{}, []byte{1, 1, i32}, b)
	}
}

// loopNest: `n` nested loops, each left back to its header by a br_if
// after the loop inside it, reading `arity` locals in the innermost: every
// header has a phi per local, and wazero's redundant-phi elimination
// removes one level of them per pass over all of them.
func loopNest(m *module, p params) {
	var b []byte
	b = append(b, repeat([]byte{opLoop, blockEmpty}, p.n)...)
	for i := range p.arity {
		b = append(appendU32(append(b, opLocalGet), uint32(i)), opDrop)
	}
	b = append(b, repeat([]byte{opLocalGet, 0, opBrIf, 0, opEnd}, p.n)...)
	for range p.funcs {
		m.defineFunc(funcType{}, append(appendU32([]byte{1}, uint32(p.arity)), i32), b)
	}
}

// diamonds: `n` if/else diamonds, then a read of each of `arity` locals:
// wazero puts a phi per local at every diamond's merge, and at the merge
// of each check the host's rewrite starts the function with (entrybomb:
// one diamond, the rest the rewrite's).
func diamonds(m *module, p params) {
	var b []byte
	b = append(b, repeat([]byte{opLocalGet, 0, 0x04, blockEmpty, 0x01, 0x05, 0x01, opEnd}, p.n)...)
	for i := range p.arity {
		b = append(appendU32(append(b, opLocalGet), uint32(i)), opDrop)
	}
	for range p.funcs {
		m.defineFunc(funcType{}, append(appendU32([]byte{1}, uint32(p.arity)), i32), b)
	}
}

// elemSegs: `n` active element segments of `arity` entries each, into a
// table of them all: wazero initialises each in every instance.
func elemSegs(m *module, p params) {
	size := p.n * p.arity
	m.tables = append(m.tables, appendU32([]byte{0x70, 0x00}, uint32(size)))
	for i := range p.n {
		seg := appendS64([]byte{0x00, opI32Const}, int64(i*p.arity))
		seg = append(appendU32(append(seg, opEnd), uint32(p.arity)), repeat([]byte{4}, p.arity)...)
		m.elements = append(m.elements, seg)
	}
}

// dataSegs: `n` passive data segments of `arity` bytes each, which the
// host's rewrite cannot merge; wazero keeps each in every instance.
func dataSegs(m *module, p params) {
	m.dataCount = true
	for range p.n {
		m.data = append(m.data, append(appendU32([]byte{0x01}, uint32(p.arity)), repeat([]byte{'x'}, p.arity)...))
	}
}

// overlapData: `n` active data segments of `arity` bytes, all at offset
// 4096: overlapping, the host's rewrite cannot merge them, and every
// instance copies each.
func overlapData(m *module, p params) {
	for range p.n {
		m.data = append(m.data, activeData(4096, repeat([]byte{'x'}, p.arity)))
	}
}
