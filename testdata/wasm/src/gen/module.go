package main

import (
	"fmt"
	"slices"
)

// Value types and instructions the shapes use.
const (
	i32 = 0x7f
	i64 = 0x7e

	opBlock      = 0x02
	opLoop       = 0x03
	opBr         = 0x0c
	opBrIf       = 0x0d
	opBrTable    = 0x0e
	opEnd        = 0x0b
	opCall       = 0x10
	opDrop       = 0x1a
	opLocalGet   = 0x20
	opLocalSet   = 0x21
	opI32Const   = 0x41
	opI64Const   = 0x42
	opI32Load8U  = 0x2d
	opI32GeU     = 0x4f
	opI32Add     = 0x6a
	opI64Add     = 0x7c
	opI64ExtendU = 0xad
	blockEmpty   = 0x40
)

// funcType is a function type, encoded as its parameters then results.
type funcType struct{ params, results []byte }

// function is a defined function: its type index, locals (already
// encoded as groups) and body (without the final end).
type function struct {
	typ    uint32
	locals []byte
	body   []byte
}

// module is a module under construction.
type module struct {
	types    []funcType
	imports  [][]byte
	nImports uint32 // imported functions
	funcs    []function
	tables   [][]byte
	memories [][]byte
	globals  [][]byte
	exports  [][]byte
	start    int64
	elements [][]byte
	data     [][]byte
	// dataCount writes the data count section.
	dataCount bool
}

// newModule starts a tool module named tool: the Extism imports, one page
// of memory holding the describe document at address 0, a describe export
// that outputs it, and a call export returning 0. Function indices 0-2 are
// the imports, 3 describe and 4 call.
func newModule(tool string) *module {
	m := &module{start: -1}
	m.importFunc("extism:host/env", "alloc", funcType{[]byte{i64}, []byte{i64}})
	m.importFunc("extism:host/env", "store_u8", funcType{[]byte{i64, i32}, nil})
	m.importFunc("extism:host/env", "output_set", funcType{[]byte{i64, i64}, nil})
	m.memories = append(m.memories, []byte{0x00, 1})
	doc := fmt.Sprintf(`{"tools":[{"name":%q,"description":"A hostile test tool.","inputSchema":{"type":"object"}}]}`, tool)
	m.data = append(m.data, activeData(0, []byte(doc)))
	n := int64(len(doc))
	// (local $off i64) (local $i i32)
	// $off = alloc(n); for $i < n { store_u8($off+$i, load8_u($i)) }; output_set($off, n)
	var b []byte
	b = append(b, opI64Const)
	b = appendS64(b, n)
	b = append(b, opCall, 0, opLocalSet, 0)
	b = append(b, opBlock, blockEmpty, opLoop, blockEmpty)
	b = append(b, opLocalGet, 1, opI32Const)
	b = appendS64(b, n)
	b = append(b, opI32GeU, opBrIf, 1)
	b = append(b, opLocalGet, 0, opLocalGet, 1, opI64ExtendU, opI64Add)
	b = append(b, opLocalGet, 1, opI32Load8U, 0, 0, opCall, 1)
	b = append(b, opLocalGet, 1, opI32Const, 1, opI32Add, opLocalSet, 1)
	b = append(b, opBr, 0, opEnd, opEnd)
	b = append(b, opLocalGet, 0, opI64Const)
	b = appendS64(b, n)
	b = append(b, opCall, 2, opI32Const, 0)
	ret := funcType{nil, []byte{i32}}
	m.export("describe", 0, m.defineFunc(ret, []byte{2, 1, i64, 1, i32}, b))
	m.export("call", 0, m.defineFunc(ret, []byte{0}, []byte{opI32Const, 0}))
	return m
}

// typeIndex returns t's index, adding it when new.
func (m *module) typeIndex(t funcType) uint32 {
	for i, u := range m.types {
		if slices.Equal(u.params, t.params) && slices.Equal(u.results, t.results) {
			return uint32(i)
		}
	}
	m.types = append(m.types, t)
	return uint32(len(m.types) - 1)
}

func (m *module) importFunc(mod, name string, t funcType) uint32 {
	if len(m.funcs) > 0 {
		panic("imports come before defined functions")
	}
	b := appendName(appendName(nil, mod), name)
	b = appendU32(append(b, 0x00), m.typeIndex(t))
	m.imports = append(m.imports, b)
	m.nImports++
	return m.nImports - 1
}

// defineFunc adds a function and returns its index.
func (m *module) defineFunc(t funcType, locals, body []byte) uint32 {
	return m.defineFuncOfType(m.typeIndex(t), locals, body)
}

func (m *module) defineFuncOfType(typ uint32, locals, body []byte) uint32 {
	m.funcs = append(m.funcs, function{typ: typ, locals: locals, body: body})
	return m.nImports + uint32(len(m.funcs)) - 1
}

func (m *module) export(name string, kind byte, index uint32) {
	m.exports = append(m.exports, appendU32(append(appendName(nil, name), kind), index))
}

// activeData is an active data segment of memory 0 at offset.
func activeData(offset int64, b []byte) []byte {
	seg := appendS64([]byte{0x00, opI32Const}, offset)
	seg = append(seg, opEnd)
	return append(appendU32(seg, uint32(len(b))), b...)
}

func (m *module) encode() []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	section := func(id byte, items [][]byte) {
		if len(items) == 0 {
			return
		}
		body := appendU32(nil, uint32(len(items)))
		for _, it := range items {
			body = append(body, it...)
		}
		out = append(appendU32(append(out, id), uint32(len(body))), body...)
	}
	var types [][]byte
	for _, t := range m.types {
		b := append(appendU32([]byte{0x60}, uint32(len(t.params))), t.params...)
		types = append(types, append(appendU32(b, uint32(len(t.results))), t.results...))
	}
	section(1, types)
	section(2, m.imports)
	var fns, code [][]byte
	for _, f := range m.funcs {
		fns = append(fns, appendU32(nil, f.typ))
		entry := append(append(append([]byte{}, f.locals...), f.body...), opEnd)
		code = append(code, append(appendU32(nil, uint32(len(entry))), entry...))
	}
	section(3, fns)
	section(4, m.tables)
	section(5, m.memories)
	section(6, m.globals)
	section(7, m.exports)
	if m.start >= 0 {
		b := appendU32(nil, uint32(m.start))
		out = append(appendU32(append(out, 8), uint32(len(b))), b...)
	}
	section(9, m.elements)
	if m.dataCount {
		b := appendU32(nil, uint32(len(m.data)))
		out = append(appendU32(append(out, 12), uint32(len(b))), b...)
	}
	section(10, code)
	section(11, m.data)
	return out
}

func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendName(b []byte, s string) []byte {
	return append(appendU32(b, uint32(len(s))), s...)
}

// repeat returns n copies of b, concatenated.
func repeat(b []byte, n int) []byte {
	out := make([]byte, 0, len(b)*n)
	for range n {
		out = append(out, b...)
	}
	return out
}
