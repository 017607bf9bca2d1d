package wasmbin

import (
	"errors"
	"fmt"
)

// FuncType is a function signature.
type FuncType struct {
	Params, Results []ValType
}

func (t FuncType) String() string {
	return fmt.Sprintf("%v -> %v", t.Params, t.Results)
}

// Import is one entry of the import section.
type Import struct {
	Module, Name string
	Kind         byte   // KindFunc, KindTable, KindMemory, KindGlobal
	Type         uint32 // the type index of an imported function
}

// The kinds of imports and exports.
const (
	KindFunc   byte = 0
	KindTable  byte = 1
	KindMemory byte = 2
	KindGlobal byte = 3
)

// Table is a table's type.
type Table struct {
	Elem     ValType
	Min, Max uint32
	HasMax   bool
	Imported bool
	// Offset is where the table's limits start in the binary, for a
	// rewrite that bounds them (defined tables only).
	Offset int
}

// Memory is a memory's type, in 64 KiB pages.
type Memory struct {
	Min, Max uint32
	HasMax   bool
	Imported bool
}

// Global is a global's type.
type Global struct {
	Type    ValType
	Mutable bool
	// Init is the constant initialiser of a defined global (without its
	// end), nil for an import.
	Init []byte
}

// Export is one entry of the export section.
type Export struct {
	Name  string
	Kind  byte
	Index uint32
}

// Code is what validation learned about one defined function.
type Code struct {
	// Offset and Size locate the entry in the code section (after its size
	// prefix): local declarations, then the body.
	Offset, Size int
	// Locals counts the declared locals (parameters excluded).
	Locals int
	// MaxStack is the operand stack's greatest height in the body.
	MaxStack int
	// Values counts the values the body's instructions push (block
	// results included).
	Values int
	// Calls is set when the body holds call or call_indirect.
	Calls bool
	// Bulk is set when the body holds a bulk memory or table instruction
	// with a length (memory.init, memory.copy, memory.fill, table.init,
	// table.copy, table.fill).
	Bulk bool
	// Branches counts the body's control instructions and branch
	// targets (block, loop, if, else, br, br_if, and each br_table
	// label), a compiler's basic blocks, which its cost is quadratic in.
	// A loop counts three times and a bulk instruction three: the host's
	// rewrite adds a check with a branch and a call to each, which cost
	// a compiler about as much.
	Branches int
	// CallValues sums, over the body's calls (the rewrite's calls of
	// yield included), the parameters and results of the callee's type
	// plus two for the call itself: wazero makes an instruction of each,
	// 400 to 550 bytes and about 1.4 µs while it compiles.
	CallValues int64
	// LoopDepth is the deepest nesting of loops in the body.
	LoopDepth int
	// PhiWork estimates the work of wazero's redundant-phi elimination
	// on the body (see phiModel).
	PhiWork int64
	// Work is the function's compile work, what FunctionWork and
	// CompileWork bound: Branches squared, plus PhiWork/8, plus
	// CallValues×128. A unit is what a branch squared costs, 11 to 17
	// ns of compilation; a phi resolved costs 0.2 to 1 ns, a call value
	// about 1.4 µs.
	Work int64
}

// Weights of Work's terms, in units of a branch squared.
const (
	phiWorkDivisor    = 8
	callValueWeight   = 128
	callValueOverhead = 2
)

func (c Code) work() int64 {
	b := int64(c.Branches)
	return b*b + c.PhiWork/phiWorkDivisor + c.CallValues*callValueWeight
}

// workTerms says what makes up the function's work, for an error.
func (c Code) workTerms() string {
	return fmt.Sprintf("%d branches squared, phis %d / %d, call values %d × %d",
		c.Branches, c.PhiWork, phiWorkDivisor, c.CallValues, callValueWeight)
}

// Section is the position of one section in the binary.
type Section struct {
	ID           byte
	Offset, Size int // of the contents, after the id and size
}

// Module is a validated module.
type Module struct {
	Types   []FuncType
	Imports []Import
	// Funcs holds the type index of every function, imported ones first.
	Funcs         []uint32
	ImportedFuncs int
	Tables        []Table
	Memories      []Memory
	Globals       []Global // imported ones first
	// ImportedGlobals counts the globals that are imports.
	ImportedGlobals int
	Exports         []Export
	// Start is the start function's index, or -1.
	Start    int64
	Elements []ValType // the reference type of each element segment
	// DataCount is the data count section's value, -1 without one.
	DataCount int
	Data      int // data segments
	Code      []Code
	Sections  []Section

	refs       []bool // functions a ref.func in code may name (C.refs)
	maxNesting int    // the deepest nesting of any function
	// elementEntries counts the entries of every element segment.
	elementEntries int
}

// FuncType returns the signature of function i.
func (m *Module) FuncType(i uint32) FuncType { return m.Types[m.Funcs[i]] }

// Section ids.
const (
	SecCustom    byte = 0
	SecType      byte = 1
	SecImport    byte = 2
	SecFunction  byte = 3
	SecTable     byte = 4
	SecMemory    byte = 5
	SecGlobal    byte = 6
	SecExport    byte = 7
	SecStart     byte = 8
	SecElement   byte = 9
	SecCode      byte = 10
	SecData      byte = 11
	SecDataCount byte = 12
)

// order is each section's place; datacount sits between element and code.
func order(id byte) int {
	switch id {
	case SecDataCount:
		return 95
	default:
		return int(id) * 10
	}
}

// Validate decodes and validates the module b under lim. It returns an
// *Error for a malformed or invalid module and a *LimitError for one past
// a limit.
func Validate(b []byte, lim Limits) (*Module, error) {
	return validate(b, lim.WithDefaults(), nil)
}

func validate(b []byte, lim Limits, inst *Instrumentation) (m *Module, err error) {
	r := &reader{b: b, fn: -1, lim: lim}
	defer func() {
		if p := recover(); p != nil {
			de, ok := p.(decodeError)
			if !ok {
				panic(p)
			}
			m, err = nil, de.err
		}
	}()
	if len(b) > lim.ModuleBytes {
		r.limit("ModuleBytes", fmt.Sprintf("the module has %d bytes", len(b)), lim.ModuleBytes, len(b))
	}
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		r.malformed("missing the \\0asm magic number")
	}
	if string(b[4:8]) != "\x01\x00\x00\x00" {
		r.p = 4
		r.malformed("unsupported binary version (only version 1 is)")
	}
	r.p = 8
	v := &validator{r: r, m: &Module{Start: -1, DataCount: -1}, inst: inst}
	v.module()
	return v.m, nil
}

// validator holds the module-level state of one validation.
type validator struct {
	r    *reader
	m    *Module
	inst *Instrumentation
	fv   funcValidator
	// declared counts the functions of the function section (their
	// bodies come later).
	declared  int
	codeCount int
	work      int64     // CompileWork so far
	regions   []*region // when verifying: every fuel region seen
}

func (v *validator) module() {
	r, m := v.r, v.m
	last := 0
	for !r.eof() {
		start := r.p
		id := r.byte()
		size := int(r.u32())
		if size > len(r.b)-r.p {
			r.p = start
			r.malformed("section %d of %d bytes runs past the end of the module", id, size)
		}
		body := r.p
		end := body + size
		if id > SecDataCount {
			r.p = start
			r.malformed("unknown section id %d", id)
		}
		if id != SecCustom {
			if order(id) <= last {
				r.p = start
				r.malformed("section %d is out of order or repeated", id)
			}
			last = order(id)
		}
		m.Sections = append(m.Sections, Section{ID: id, Offset: body, Size: size})
		sub := &reader{b: r.b[:end], p: body, fn: -1, lim: r.lim}
		v.r = sub
		switch id {
		case SecCustom:
			sub.name()
			sub.p = end
		case SecType:
			v.types()
		case SecImport:
			v.imports()
		case SecFunction:
			v.functions()
		case SecTable:
			v.tables()
		case SecMemory:
			v.memories()
		case SecGlobal:
			v.globals()
		case SecExport:
			v.exports()
		case SecStart:
			v.start()
		case SecElement:
			v.elements()
		case SecDataCount:
			m.DataCount = int(sub.u32())
		case SecCode:
			v.code()
		case SecData:
			v.data()
		}
		if sub.p != end {
			sub.malformed("section %d has %d bytes left over", id, end-sub.p)
		}
		v.r = r
		r.p = end
	}
	v.r = r
	if v.declared != v.codeCount {
		r.malformed("%d functions declared but %d bodies given", v.declared, v.codeCount)
	}
	if m.DataCount >= 0 && m.DataCount != m.Data {
		r.malformed("data count section says %d segments, the data section has %d", m.DataCount, m.Data)
	}
	if v.inst != nil {
		v.checkInstrumentedModule()
	}
}

func (v *validator) funcType(t uint32) FuncType {
	if int(t) >= len(v.m.Types) {
		v.r.invalid("type index %d out of range (the module has %d types)", t, len(v.m.Types))
	}
	return v.m.Types[t]
}

func (v *validator) types() {
	r, lim := v.r, v.r.lim
	n := r.count(3)
	if n > lim.Types {
		r.limit("Types", fmt.Sprintf("the module declares %d types", n), lim.Types, n)
	}
	v.m.Types = make([]FuncType, 0, n)
	values := 0
	for range n {
		if f := r.byte(); f != 0x60 {
			r.p--
			r.malformed("type form 0x%02x is not a function type", f)
		}
		var t FuncType
		for k, dst := range []*[]ValType{&t.Params, &t.Results} {
			c := r.count(1)
			if c > lim.TypeArity {
				r.limit("TypeArity", fmt.Sprintf("type %d has %d %s", len(v.m.Types), c, [...]string{"parameters", "results"}[k]), lim.TypeArity, c)
			}
			// wazero builds a key of each type in time quadratic in its
			// arity, keeps it for the runtime's life and compiles an
			// entry for it, none of which a deadline interrupts.
			if values += c; values > lim.TypeValues {
				r.limit("TypeValues", fmt.Sprintf("the types up to %d have %d parameters and results", len(v.m.Types), values), lim.TypeValues, values)
			}
			*dst = make([]ValType, c)
			for i := range *dst {
				(*dst)[i] = r.valType()
			}
		}
		v.m.Types = append(v.m.Types, t)
	}
}

func (v *validator) imports() {
	r, m, lim := v.r, v.m, v.r.lim
	n := r.count(4)
	if n > lim.Imports {
		r.limit("Imports", fmt.Sprintf("the module has %d imports", n), lim.Imports, n)
	}
	for range n {
		imp := Import{Module: r.name(), Name: r.name(), Kind: r.byte()}
		switch imp.Kind {
		case KindFunc:
			imp.Type = r.u32()
			v.funcType(imp.Type)
			m.Funcs = append(m.Funcs, imp.Type)
			m.ImportedFuncs++
		case KindTable:
			elem := r.refType()
			l := r.limits("table", maxTableSz)
			m.Tables = append(m.Tables, Table{Elem: elem, Min: l.Min, Max: l.Max, HasMax: l.HasMax, Imported: true})
		case KindMemory:
			l := r.limits("memory", maxPages)
			m.Memories = append(m.Memories, Memory{Min: l.Min, Max: l.Max, HasMax: l.HasMax, Imported: true})
		case KindGlobal:
			t := r.valType()
			m.Globals = append(m.Globals, Global{Type: t, Mutable: v.mutability()})
			m.ImportedGlobals++
		default:
			r.p--
			r.malformed("import kind 0x%02x", imp.Kind)
		}
		m.Imports = append(m.Imports, imp)
	}
	v.checkCounts()
}

func (v *validator) mutability() bool {
	switch c := v.r.byte(); c {
	case 0:
		return false
	case 1:
		return true
	default:
		v.r.p--
		v.r.malformed("global mutability 0x%02x", c)
	}
	return false
}

// checkCounts applies the limits and rules on index space sizes.
func (v *validator) checkCounts() {
	r, m, lim := v.r, v.m, v.r.lim
	if len(m.Funcs) > lim.Functions {
		r.limit("Functions", fmt.Sprintf("the module has %d functions", len(m.Funcs)), lim.Functions, len(m.Funcs))
	}
	if len(m.Tables) > lim.Tables {
		r.limit("Tables", fmt.Sprintf("the module has %d tables", len(m.Tables)), lim.Tables, len(m.Tables))
	}
	if len(m.Globals) > lim.Globals {
		r.limit("Globals", fmt.Sprintf("the module has %d globals", len(m.Globals)), lim.Globals, len(m.Globals))
	}
	if len(m.Memories) > 1 {
		r.invalid("multiple memories are not supported")
	}
}

func (v *validator) functions() {
	r, m := v.r, v.m
	n := r.count(1)
	if n+len(m.Funcs) > r.lim.Functions {
		r.limit("Functions", fmt.Sprintf("the module has %d functions", n+len(m.Funcs)), r.lim.Functions, n+len(m.Funcs))
	}
	for range n {
		t := r.u32()
		v.funcType(t)
		m.Funcs = append(m.Funcs, t)
	}
	v.declared = n
}

func (v *validator) tables() {
	r, m := v.r, v.m
	n := r.count(3)
	if n+len(m.Tables) > r.lim.Tables {
		r.limit("Tables", fmt.Sprintf("the module has %d tables", n+len(m.Tables)), r.lim.Tables, n+len(m.Tables))
	}
	for range n {
		elem := r.refType()
		off := r.p
		l := r.limits("table", maxTableSz)
		m.Tables = append(m.Tables, Table{Elem: elem, Min: l.Min, Max: l.Max, HasMax: l.HasMax, Offset: off})
	}
}

func (v *validator) memories() {
	r, m := v.r, v.m
	n := r.count(2)
	for range n {
		l := r.limits("memory", maxPages)
		m.Memories = append(m.Memories, Memory{Min: l.Min, Max: l.Max, HasMax: l.HasMax})
		v.checkCounts()
	}
}

func (v *validator) globals() {
	r, m := v.r, v.m
	n := r.count(3)
	if n+len(m.Globals) > r.lim.Globals {
		r.limit("Globals", fmt.Sprintf("the module has %d globals", n+len(m.Globals)), r.lim.Globals, n+len(m.Globals))
	}
	for range n {
		t := r.valType()
		mut := v.mutability()
		init := v.constExpr(t)
		m.Globals = append(m.Globals, Global{Type: t, Mutable: mut, Init: init})
	}
}

// constExpr validates a constant expression of type want and returns it
// without its end. In WebAssembly 2.0 it is a single instruction; a
// global.get names an immutable imported global.
func (v *validator) constExpr(want ValType) []byte {
	r, m := v.r, v.m
	start := r.p
	var got ValType
	switch op := r.byte(); op {
	case 0x41:
		r.s32()
		got = I32
	case 0x42:
		r.s64()
		got = I64
	case 0x43:
		r.bytes(4)
		got = F32
	case 0x44:
		r.bytes(8)
		got = F64
	case 0xfd:
		if sub := r.u32(); sub != 12 {
			r.invalid("constant expression: SIMD instruction %d is not constant", sub)
		}
		r.bytes(16)
		got = V128
	case 0x23:
		g := r.u32()
		if int(g) >= m.ImportedGlobals {
			r.invalid("constant expression: global.get %d must name an imported global (the module imports %d)", g, m.ImportedGlobals)
		}
		if m.Globals[g].Mutable {
			r.invalid("constant expression: global.get %d names a mutable global", g)
		}
		got = m.Globals[g].Type
	case 0xd0:
		got = r.refType()
	case 0xd2:
		f := r.u32()
		if int(f) >= len(m.Funcs) {
			r.invalid("constant expression: ref.func %d out of range (the module has %d functions)", f, len(m.Funcs))
		}
		v.declareRef(f)
		got = FuncRef
	default:
		r.p--
		r.invalid("constant expression: instruction 0x%02x is not constant", op)
	}
	expr := r.b[start:r.p]
	if r.byte() != 0x0b {
		r.p--
		r.invalid("constant expression: more than one instruction")
	}
	if got != want {
		r.invalid("constant expression: type mismatch: %v where %v is expected", got, want)
	}
	return expr
}

func (v *validator) declareRef(f uint32) {
	m := v.m
	if m.refs == nil {
		m.refs = make([]bool, len(m.Funcs))
	}
	if int(f) < len(m.refs) {
		m.refs[f] = true
	}
}

func (v *validator) exports() {
	r, m := v.r, v.m
	n := r.count(3)
	if n > r.lim.Exports {
		r.limit("Exports", fmt.Sprintf("the module has %d exports", n), r.lim.Exports, n)
	}
	seen := make(map[string]bool, n)
	for range n {
		e := Export{Name: r.name(), Kind: r.byte(), Index: r.u32()}
		if seen[e.Name] {
			r.invalid("duplicate export name %q", e.Name)
		}
		seen[e.Name] = true
		var have int
		switch e.Kind {
		case KindFunc:
			have = len(m.Funcs)
			if int(e.Index) < have {
				v.declareRef(e.Index)
			}
		case KindTable:
			have = len(m.Tables)
		case KindMemory:
			have = len(m.Memories)
		case KindGlobal:
			have = len(m.Globals)
		default:
			r.malformed("export kind 0x%02x", e.Kind)
		}
		if int(e.Index) >= have {
			r.invalid("export %q: index %d out of range (%d of its kind)", e.Name, e.Index, have)
		}
		m.Exports = append(m.Exports, e)
	}
}

func (v *validator) start() {
	r, m := v.r, v.m
	f := r.u32()
	if int(f) >= len(m.Funcs) {
		r.invalid("start function %d out of range (the module has %d functions)", f, len(m.Funcs))
	}
	if t := m.FuncType(f); len(t.Params) > 0 || len(t.Results) > 0 {
		r.invalid("start function %d has type %v; it must take and return nothing", f, t)
	}
	m.Start = int64(f)
}

func (v *validator) table(i uint32) Table {
	if int(i) >= len(v.m.Tables) {
		v.r.invalid("table index %d out of range (the module has %d tables)", i, len(v.m.Tables))
	}
	return v.m.Tables[i]
}

func (v *validator) elements() {
	r, m := v.r, v.m
	n := r.count(2)
	if n > r.lim.Elements {
		r.limit("Elements", fmt.Sprintf("the module has %d element segments", n), r.lim.Elements, n)
	}
	for range n {
		flags := r.u32()
		if flags > 7 {
			r.malformed("element segment flags %d", flags)
		}
		active := flags&1 == 0
		exprs := flags&4 != 0
		var tab uint32
		if active && flags&2 != 0 {
			tab = r.u32()
		}
		if active {
			v.table(tab)
			v.constExpr(I32)
		}
		elem := FuncRef
		if flags&3 != 0 { // an element kind or a reference type follows
			if exprs {
				elem = r.refType()
			} else if k := r.byte(); k != 0x00 {
				r.p--
				r.malformed("element kind 0x%02x", k)
			}
		}
		if active && v.table(tab).Elem != elem {
			r.invalid("element segment of %v for table %d of %v", elem, tab, v.table(tab).Elem)
		}
		c := r.count(1)
		if c > r.lim.SegmentEntries {
			r.limit("SegmentEntries", fmt.Sprintf("an element segment has %d entries", c), r.lim.SegmentEntries, c)
		}
		// Each entry costs host memory in every instance (wazero makes a
		// function instance of it) and time to instantiate, which nothing
		// interrupts.
		if m.elementEntries += c; m.elementEntries > r.lim.ElementEntries {
			r.limit("ElementEntries", fmt.Sprintf("the element segments up to %d hold %d entries", len(m.Elements), m.elementEntries), r.lim.ElementEntries, m.elementEntries)
		}
		for range c {
			if exprs {
				v.constExpr(elem)
				continue
			}
			f := r.u32()
			if int(f) >= len(m.Funcs) {
				r.invalid("element segment: function %d out of range (the module has %d)", f, len(m.Funcs))
			}
			v.declareRef(f)
		}
		m.Elements = append(m.Elements, elem)
	}
}

func (v *validator) code() {
	r, m, lim := v.r, v.m, v.r.lim
	if size := len(r.b) - r.p; size > lim.CodeBytes {
		r.limit("CodeBytes", fmt.Sprintf("the code section has %d bytes", size), lim.CodeBytes, size)
	}
	n := r.count(2)
	if n != v.declared {
		r.malformed("%d functions declared but %d bodies given", v.declared, n)
	}
	v.codeCount = n
	m.Code = make([]Code, 0, n)
	for i := range n {
		size := int(r.u32())
		fi := m.ImportedFuncs + i
		if size > lim.FunctionBytes {
			r.limit("FunctionBytes", fmt.Sprintf("function %d has %d bytes of code", fi, size), lim.FunctionBytes, size)
		}
		off := r.p
		r.bytes(size)
		c := v.fv.validate(v, fi, off, off+size)
		// Compiling one function is never interrupted, and wazero's SSA
		// construction grows with its variables times its merge points.
		if w := int64(c.Locals+len(m.FuncType(uint32(fi)).Params)) * int64(c.Branches); w > lim.LocalsBranches {
			r.limit64("LocalsBranches", fmt.Sprintf("function %d has %d locals and %d branches", fi, c.Locals+len(m.FuncType(uint32(fi)).Params), c.Branches), lim.LocalsBranches, w)
		}
		if c.CallValues > int64(lim.CallValues) {
			r.limit64("CallValues", fmt.Sprintf("function %d passes %d values through its calls (each call's parameters and results, and 2)", fi, c.CallValues), int64(lim.CallValues), c.CallValues)
		}
		c.Work = c.work()
		if c.Work > lim.FunctionWork {
			r.limit64("FunctionWork", fmt.Sprintf("function %d has a compile work of %d (%s)", fi, c.Work, c.workTerms()), lim.FunctionWork, c.Work)
		}
		m.Code = append(m.Code, c)
		v.work += c.Work
		if v.work > lim.CompileWork {
			r.limit64("CompileWork", fmt.Sprintf("the functions up to %d have a compile work of %d (the sum of each function's; function %d: %s)", fi, v.work, fi, c.workTerms()), lim.CompileWork, v.work)
		}
	}
}

func (v *validator) data() {
	r, m := v.r, v.m
	n := r.count(1)
	if n > r.lim.DataSegments {
		r.limit("DataSegments", fmt.Sprintf("the module has %d data segments", n), r.lim.DataSegments, n)
	}
	for range n {
		switch flags := r.u32(); flags {
		case 0, 2:
			var mem uint32
			if flags == 2 {
				mem = r.u32()
			}
			if int(mem) >= len(m.Memories) {
				r.invalid("data segment for memory %d, which does not exist", mem)
			}
			v.constExpr(I32)
		case 1:
		default:
			r.malformed("data segment flags %d", flags)
		}
		r.bytes(r.count(0))
		m.Data++
	}
}

// IsLimit reports whether err is a *LimitError.
func IsLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le)
}
