package host

import (
	"errors"
	"fmt"
	"slices"
)

// The host rewrites a module's binary once, before compiling it (see
// RATIONALE.md "Why does the host rewrite modules?"):
//
//   - Interruption. wazero can stop a running guest only by exiting to Go
//     at every loop iteration (close-on-context-done), which makes tight
//     loops several times slower; and native code that never exits to Go
//     cannot be preempted, so without some exit a long guest loop would
//     also hold up every garbage collection of the process. The rewrite
//     adds a mutable i32 global (the fuel) and an imported host function
//     (autoagent:kernel.yield), and starts every loop body, and every
//     function that makes calls, with
//
//     fuel -= 1; if fuel == 0 { yield(); fuel = yieldEvery }
//
//     so the guest exits to Go once every yieldEvery checks: yield ends the
//     call when its time is up or its caller gave up, and is where the Go
//     scheduler may preempt it. A check is a load, a store and a branch.
//     Functions that make no call and have no loop run in bounded time and
//     get no check. Adding the import shifts the index of every function
//     the module defines by one, so calls, ref.func, exports, element
//     segments and global initialisers are renumbered, and custom sections
//     (names, debug information) dropped.
//   - Instantiation. A Go guest's data section holds tens of thousands of
//     small active segments, each costing allocations per instantiation.
//     Adjacent ones are merged (the gaps filled with the zeros memory starts
//     with), which changes nothing the guest can observe.
//
// The rewrite decodes every instruction. It accepts exactly the
// instruction set the host's runtime enables (WebAssembly 2.0: sign
// extension, saturating conversions, bulk memory, reference types,
// multi-value, SIMD) and refuses anything else, rather than let a module
// run without interruption checks.

// yieldEvery is how many checks run between two exits to Go: a few tens
// of microseconds of a tight loop, so the time limit and the garbage
// collector wait that long at most, while the exit costs nothing measurable.
const yieldEvery = 10000

// yieldImport is the host function the rewrite imports; guests may not
// import anything from goModule themselves.
const yieldImport = "yield"

// startExport names the module's start function, which the rewrite turns
// into an export the host calls right after instantiation, under the
// call's time limit: the start section would run inside instantiation,
// before the host can interrupt anything.
const startExport = "autoagent:start"

// rewriteOptions choose what rewrite does.
type rewriteOptions struct {
	interrupt bool // add the fuel checks and the yield import
	mergeData bool // merge adjacent active data segments
}

// errRewrite wraps what the rewrite could not decode.
var errRewrite = errors.New("cannot prepare the module")

// The section ids of the binary format.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
)

// sectionRank orders the non-custom sections (datacount sits between
// element and code).
func sectionRank(id byte) int {
	if id == secDataCount {
		return 95
	}
	return int(id) * 10
}

type section struct {
	id   byte
	body []byte
}

// mergeGap is the largest run of zeros merged into a data segment.
const mergeGap = 4096

// rewriter holds what one rewrite learned about the module.
type rewriter struct {
	opts          rewriteOptions
	importedFuncs uint32 // the yield import's index; defined functions shift past it
	fuel          uint32 // the fuel global's index
	yieldType     uint32
	usesDataIndex bool // memory.init or data.drop: data segments keep their numbers
}

// fn maps an original function index to the rewritten one.
func (w *rewriter) fn(i uint32) uint32 {
	if w.opts.interrupt && i >= w.importedFuncs {
		return i + 1
	}
	return i
}

// rewrite applies opts to the module b.
func rewrite(b []byte, opts rewriteOptions) ([]byte, error) {
	if !opts.interrupt && !opts.mergeData {
		return b, nil
	}
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, fmt.Errorf("%w: missing the \\0asm header", errRewrite)
	}
	var secs []section
	r := reader{b: b, p: 8}
	for !r.done() {
		id := r.byte()
		body := r.take(int(r.u32()))
		if r.err != nil {
			return nil, fmt.Errorf("%w: truncated section %d", errRewrite, id)
		}
		secs = append(secs, section{id, body})
	}
	w := &rewriter{opts: opts}
	start := -1
	var types, importedGlobals, definedGlobals uint32
	for _, s := range secs {
		r := reader{b: s.body}
		switch s.id {
		case secType:
			types = r.u32()
		case secImport:
			var err error
			if w.importedFuncs, importedGlobals, err = countImports(s.body); err != nil {
				return nil, err
			}
		case secGlobal:
			definedGlobals = r.u32()
		case secStart:
			start = int(r.u32())
		}
		if r.err != nil {
			return nil, fmt.Errorf("%w: malformed section %d", errRewrite, s.id)
		}
	}
	w.fuel = importedGlobals + definedGlobals
	w.yieldType = types

	out := make([]section, 0, len(secs)+4)
	if opts.interrupt {
		var err error
		if out, err = w.rewriteSections(secs, start); err != nil {
			return nil, err
		}
	} else {
		for _, s := range secs {
			if s.id == secCode {
				body, err := w.code(s.body)
				if err != nil {
					return nil, err
				}
				s.body = body
			}
			out = append(out, s)
		}
	}
	if opts.mergeData && !w.usesDataIndex {
		w.mergeDataSections(out)
	}

	size := 8
	for _, s := range out {
		size += 1 + 5 + len(s.body)
	}
	res := make([]byte, 0, size)
	res = append(res, b[:8]...)
	for _, s := range out {
		res = append(res, s.id)
		res = appendU32(res, uint32(len(s.body)))
		res = append(res, s.body...)
	}
	return res, nil
}

// rewriteSections adds the yield import, the fuel global and the checks,
// and renumbers functions.
func (w *rewriter) rewriteSections(secs []section, start int) ([]section, error) {
	out := make([]section, 0, len(secs)+4)
	have := map[byte]bool{}
	// add creates a section the module lacks, in its place.
	add := func(before byte) {
		for _, id := range []byte{secType, secImport, secGlobal, secExport} {
			if have[id] || (before != 0 && sectionRank(before) <= sectionRank(id)) {
				continue
			}
			if id == secExport && start < 0 {
				continue
			}
			var body []byte
			switch id {
			case secType:
				body = w.types(nil)
			case secImport:
				body = w.imports(nil)
			case secGlobal:
				body = w.globals(nil)
			case secExport:
				body = append(appendU32(nil, 1), appendExport(nil, startExport, 0x00, w.fn(uint32(start)))...)
			}
			out = append(out, section{id, body})
			have[id] = true
		}
	}
	for _, s := range secs {
		if s.id == secCustom {
			continue // names and debug information would be wrong
		}
		add(s.id)
		have[s.id] = true
		var err error
		switch s.id {
		case secType:
			s.body = w.types(s.body)
		case secImport:
			s.body = w.imports(s.body)
		case secGlobal:
			s.body, err = w.renumberGlobals(s.body)
		case secExport:
			s.body, err = w.exports(s.body, start)
		case secStart:
			continue // now an export (startExport)
		case secElement:
			s.body, err = w.elements(s.body)
		case secCode:
			s.body, err = w.code(s.body)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	add(0)
	return out, nil
}

// countImports counts the function and global imports, which come first
// in their index spaces.
func countImports(body []byte) (funcs, globals uint32, err error) {
	r := reader{b: body}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		r.name()
		r.name()
		switch kind := r.byte(); kind {
		case 0: // function
			r.u32()
			funcs++
		case 1: // table
			r.byte()
			r.limits()
		case 2: // memory
			r.limits()
		case 3: // global
			r.byte()
			r.byte()
			globals++
		default:
			return 0, 0, fmt.Errorf("%w: import kind %d", errRewrite, kind)
		}
	}
	if r.err != nil {
		return 0, 0, fmt.Errorf("%w: malformed import section", errRewrite)
	}
	return funcs, globals, nil
}

// extend returns a vector section body with extra entries appended; body
// is the section's current contents, nil when it has none.
func extend(body []byte, extra []byte, n uint32) []byte {
	var count uint32
	rest := body
	if body != nil {
		r := reader{b: body}
		count = r.u32()
		rest = body[r.p:]
	}
	out := appendU32(make([]byte, 0, len(body)+len(extra)+5), count+n)
	out = append(out, rest...)
	return append(out, extra...)
}

// types adds the yield function's type, () -> ().
func (w *rewriter) types(body []byte) []byte { return extend(body, []byte{0x60, 0x00, 0x00}, 1) }

// imports adds autoagent:kernel.yield after the module's imports.
func (w *rewriter) imports(body []byte) []byte {
	e := appendU32(nil, uint32(len(goModule)))
	e = append(e, goModule...)
	e = appendU32(e, uint32(len(yieldImport)))
	e = append(e, yieldImport...)
	e = append(e, 0x00)
	e = appendU32(e, w.yieldType)
	return extend(body, e, 1)
}

// globals adds the fuel global: a mutable i32 starting at yieldEvery.
func (w *rewriter) globals(body []byte) []byte {
	e := []byte{0x7f, 0x01, 0x41}
	e = appendS32(e, yieldEvery)
	e = append(e, 0x0b)
	return extend(body, e, 1)
}

// renumberGlobals renumbers ref.func in the initialisers and adds the fuel.
func (w *rewriter) renumberGlobals(body []byte) ([]byte, error) {
	r := reader{b: body}
	n := r.u32()
	out := appendU32(nil, n)
	for i := uint32(0); i < n; i++ {
		p := r.p
		r.valType()
		r.byte() // mutability
		out = append(out, body[p:r.p]...)
		var err error
		if out, err = w.constExpr(out, &r); err != nil {
			return nil, err
		}
	}
	if r.err != nil || !r.done() {
		return nil, fmt.Errorf("%w: malformed global section", errRewrite)
	}
	return w.globals(out), nil
}

// exports renumbers function exports and exports the start function.
func (w *rewriter) exports(body []byte, start int) ([]byte, error) {
	r := reader{b: body}
	n := r.u32()
	var out []byte
	for i := uint32(0); i < n && r.err == nil; i++ {
		name := r.name()
		if name == startExport {
			return nil, fmt.Errorf("%w: it exports the reserved name %q", errRewrite, name)
		}
		kind := r.byte()
		idx := r.u32()
		if kind == 0x00 {
			idx = w.fn(idx)
		}
		out = appendExport(out, name, kind, idx)
	}
	if r.err != nil || !r.done() {
		return nil, fmt.Errorf("%w: malformed export section", errRewrite)
	}
	if start >= 0 {
		out = appendExport(out, startExport, 0x00, w.fn(uint32(start)))
		n++
	}
	return append(appendU32(nil, n), out...), nil
}

// appendExport appends an export entry of the given kind (0 function).
func appendExport(body []byte, name string, kind byte, index uint32) []byte {
	body = appendU32(body, uint32(len(name)))
	body = append(body, name...)
	body = append(body, kind)
	return appendU32(body, index)
}

// elements renumbers the functions of the element segments, in each of
// their eight encodings.
func (w *rewriter) elements(body []byte) ([]byte, error) {
	r := reader{b: body}
	n := r.u32()
	out := appendU32(nil, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		flags := r.u32()
		out = appendU32(out, flags)
		if flags > 7 {
			return nil, fmt.Errorf("%w: element segment kind %d", errRewrite, flags)
		}
		var err error
		if flags&1 == 0 { // active: offset, and a table index when flags has 2
			if flags&2 != 0 {
				out = appendU32(out, r.u32())
			}
			if out, err = w.constExpr(out, &r); err != nil {
				return nil, err
			}
		}
		if flags&3 != 0 { // an element kind or reference type
			out = append(out, r.byte())
		}
		count := r.u32()
		out = appendU32(out, count)
		for j := uint32(0); j < count && r.err == nil; j++ {
			if flags&4 == 0 {
				out = appendU32(out, w.fn(r.u32()))
			} else if out, err = w.constExpr(out, &r); err != nil {
				return nil, err
			}
		}
	}
	if r.err != nil || !r.done() {
		return nil, fmt.Errorf("%w: malformed element section", errRewrite)
	}
	return out, nil
}

// constExpr copies a constant expression, renumbering ref.func.
func (w *rewriter) constExpr(out []byte, r *reader) ([]byte, error) {
	for r.err == nil {
		p := r.p
		switch op := r.byte(); op {
		case 0x0b:
			return append(out, op), nil
		case 0x41:
			r.leb(5)
		case 0x42:
			r.leb(10)
		case 0x43:
			r.take(4)
		case 0x44:
			r.take(8)
		case 0x23: // global.get
			r.u32()
		case 0xd0: // ref.null
			r.valType()
		case 0xd2: // ref.func
			out = append(out, op)
			out = appendU32(out, w.fn(r.u32()))
			continue
		case 0xfd: // v128.const
			if r.u32() != 12 {
				return nil, fmt.Errorf("%w: unsupported constant expression", errRewrite)
			}
			r.take(16)
		default:
			return nil, fmt.Errorf("%w: unsupported constant expression instruction 0x%02x", errRewrite, op)
		}
		out = append(out, r.b[p:r.p]...)
	}
	return nil, fmt.Errorf("%w: truncated constant expression", errRewrite)
}

// code rewrites every function body.
func (w *rewriter) code(body []byte) ([]byte, error) {
	var check []byte
	if w.opts.interrupt {
		// fuel -= 1; if fuel == 0 { yield(); fuel = yieldEvery }
		check = appendU32([]byte{0x23}, w.fuel)
		check = append(check, 0x41, 0x01, 0x6b, 0x24)
		check = appendU32(check, w.fuel)
		check = appendU32(append(check, 0x23), w.fuel)
		check = append(check, 0x45, 0x04, 0x40, 0x10)
		check = appendU32(check, w.importedFuncs)
		check = appendS32(append(check, 0x41), yieldEvery)
		check = appendU32(append(check, 0x24), w.fuel)
		check = append(check, 0x0b)
	}
	r := reader{b: body}
	n := r.u32()
	out := make([]byte, 0, len(body)+len(body)/4)
	out = appendU32(out, n)
	var fn []byte
	for i := uint32(0); i < n; i++ {
		code := r.take(int(r.u32()))
		if r.err != nil {
			return nil, fmt.Errorf("%w: truncated code section", errRewrite)
		}
		var err error
		if fn, err = w.function(fn[:0], code, check); err != nil {
			return nil, fmt.Errorf("%w: function %d: %w", errRewrite, i, err)
		}
		out = appendU32(out, uint32(len(fn)))
		out = append(out, fn...)
	}
	if !r.done() {
		return nil, fmt.Errorf("%w: trailing bytes in the code section", errRewrite)
	}
	return out, nil
}

// function copies one function body to out, renumbering calls and
// inserting check after every loop's block type and, when the function
// makes calls, at its entry.
func (w *rewriter) function(out, code, check []byte) ([]byte, error) {
	r := reader{b: code}
	groups := r.u32()
	for i := uint32(0); i < groups && r.err == nil; i++ {
		r.u32()
		r.valType()
	}
	if r.err != nil {
		return nil, errors.New("malformed locals")
	}
	out = append(out, code[:r.p]...)
	entry := len(out)
	calls := false
	for !r.done() {
		start := r.p
		op := r.byte()
		loop := false
		switch {
		case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0b || op == 0x0f ||
			op == 0x1a || op == 0x1b || op == 0xd1 || (op >= 0x45 && op <= 0xc4):
			// no immediates
		case op == 0x02 || op == 0x04: // block, if
			r.blockType()
		case op == 0x03: // loop
			r.blockType()
			loop = true
		case op == 0x10 || op == 0xd2: // call, ref.func
			idx := r.u32()
			if r.err == nil {
				out = appendU32(append(out, op), w.fn(idx))
			}
			calls = calls || op == 0x10
			continue
		case op == 0x0c || op == 0x0d || (op >= 0x20 && op <= 0x26) || op == 0x3f || op == 0x40: // one index
			r.u32()
		case op == 0x0e: // br_table
			n := r.u32()
			for j := uint32(0); j <= n && r.err == nil; j++ {
				r.u32()
			}
		case op == 0x11: // call_indirect
			r.u32()
			r.u32()
			calls = true
		case op == 0x1c: // select t*
			n := r.u32()
			for j := uint32(0); j < n && r.err == nil; j++ {
				r.valType()
			}
		case op >= 0x28 && op <= 0x3e: // loads and stores
			r.memArg()
		case op == 0x41:
			r.leb(5)
		case op == 0x42:
			r.leb(10)
		case op == 0x43:
			r.take(4)
		case op == 0x44:
			r.take(8)
		case op == 0xd0: // ref.null
			r.valType()
		case op == 0xfc:
			if err := w.miscOp(&r); err != nil {
				return nil, err
			}
		case op == 0xfd:
			if err := r.simdOp(); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unsupported instruction 0x%02x at offset %d", op, start)
		}
		if r.err != nil {
			return nil, fmt.Errorf("truncated instruction 0x%02x at offset %d", op, start)
		}
		out = append(out, code[start:r.p]...)
		if loop {
			out = append(out, check...)
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("truncated function body")
	}
	if calls && len(check) > 0 {
		out = slices.Insert(out, entry, check...)
	}
	return out, nil
}

// miscOp reads a 0xfc instruction: saturating conversions, bulk memory and
// table operations.
func (w *rewriter) miscOp(r *reader) error {
	switch sub := r.u32(); {
	case sub <= 7: // iNN.trunc_sat_fMM_s/u
	case sub == 8: // memory.init data mem
		r.u32()
		r.u32()
		w.usesDataIndex = true
	case sub == 9: // data.drop data
		r.u32()
		w.usesDataIndex = true
	case sub == 10 || sub == 12 || sub == 14: // memory.copy, table.init, table.copy: two indices
		r.u32()
		r.u32()
	case sub == 11 || sub == 13 || (sub >= 15 && sub <= 17): // memory.fill, elem.drop, table.grow/size/fill
		r.u32()
	default:
		return fmt.Errorf("unsupported instruction 0xfc %d", sub)
	}
	return nil
}

// simdOp reads a 0xfd (SIMD) instruction.
func (r *reader) simdOp() error {
	switch sub := r.u32(); {
	case sub <= 11 || sub == 92 || sub == 93: // loads, store, load_zero
		r.memArg()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		r.take(16)
	case sub >= 21 && sub <= 34: // extract/replace lane
		r.take(1)
	case sub >= 84 && sub <= 91: // load/store lane
		r.memArg()
		r.take(1)
	case sub <= 255:
		// No immediates; the runtime's validation refuses the opcodes
		// SIMD does not assign.
	default:
		return fmt.Errorf("unsupported instruction 0xfd %d", sub)
	}
	return nil
}

// mergeDataSections merges the data segments in place, keeping the data
// count section in step.
func (w *rewriter) mergeDataSections(out []section) {
	for i, s := range out {
		if s.id != secData {
			continue
		}
		body, count, ok := mergeData(s.body)
		if !ok {
			return
		}
		out[i].body = body
		for j := range out {
			if out[j].id == secDataCount {
				out[j].body = appendU32(nil, count)
			}
		}
	}
}

// mergeData merges adjacent active data segments of memory 0 with
// constant offsets. It declines (ok false) when a segment is passive, has
// another offset form, or overlaps another, since merging could then
// change what memory holds.
func mergeData(body []byte) (_ []byte, count uint32, ok bool) {
	type seg struct {
		off  uint32
		data []byte
	}
	r := reader{b: body}
	n := r.u32()
	segs := make([]seg, 0, min(n, 1<<16))
	for i := uint32(0); i < n; i++ {
		switch flag := r.u32(); flag {
		case 0:
		case 2:
			if r.u32() != 0 {
				return nil, 0, false
			}
		default:
			return nil, 0, false
		}
		if r.byte() != 0x41 { // i32.const
			return nil, 0, false
		}
		off := r.s32()
		if r.byte() != 0x0b || off < 0 || off > 1<<31-1 {
			return nil, 0, false
		}
		data := r.take(int(r.u32()))
		if r.err != nil {
			return nil, 0, false
		}
		segs = append(segs, seg{uint32(off), data})
	}
	if !r.done() || len(segs) < 2 {
		return nil, 0, false
	}
	slices.SortStableFunc(segs, func(a, b seg) int {
		switch {
		case a.off < b.off:
			return -1
		case a.off > b.off:
			return 1
		}
		return 0
	})
	for i := 1; i < len(segs); i++ {
		if uint64(segs[i-1].off)+uint64(len(segs[i-1].data)) > uint64(segs[i].off) {
			return nil, 0, false
		}
	}
	// Each group of segments less than mergeGap apart becomes one segment
	// spanning them, written straight into the new section.
	out := appendU32(make([]byte, 0, len(body)+mergeGap), 0)
	count = 0
	for i := 0; i < len(segs); {
		j, end := i+1, uint64(segs[i].off)+uint64(len(segs[i].data))
		for j < len(segs) && uint64(segs[j].off)-end <= mergeGap {
			end = uint64(segs[j].off) + uint64(len(segs[j].data))
			j++
		}
		start := segs[i].off
		size := int(end - uint64(start))
		out = append(out, 0x00, 0x41)
		out = appendS32(out, int32(start))
		out = append(out, 0x0b)
		out = appendU32(out, uint32(size))
		base := len(out)
		out = slices.Grow(out, size)[:base+size]
		clear(out[base:])
		for _, s := range segs[i:j] {
			copy(out[base+int(s.off-start):], s.data)
		}
		count++
		i = j
	}
	// The count was written as one byte: rewrite it in place.
	return append(appendU32(nil, count), out[1:]...), count, true
}

// reader decodes the binary format; the first error sticks and every
// later read returns zero.
type reader struct {
	b   []byte
	p   int
	err error
}

var errTruncated = errors.New("truncated")

func (r *reader) done() bool { return r.err != nil || r.p >= len(r.b) }

func (r *reader) byte() byte {
	if r.err != nil || r.p >= len(r.b) {
		r.err = errTruncated
		return 0
	}
	c := r.b[r.p]
	r.p++
	return c
}

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.p {
		r.err = errTruncated
		return nil
	}
	s := r.b[r.p : r.p+n]
	r.p += n
	return s
}

// leb skips a LEB128 number of at most max bytes.
func (r *reader) leb(max int) {
	for range max {
		if r.byte()&0x80 == 0 {
			return
		}
	}
	r.err = errTruncated
}

func (r *reader) u32() uint32 {
	var v uint32
	for i := range 5 {
		c := r.byte()
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v
		}
	}
	r.err = errTruncated
	return 0
}

// s32 reads a signed LEB128 of at most 5 bytes; a value outside the int32
// range comes back as is, for the caller to refuse.
func (r *reader) s32() int64 {
	var v int64
	for i := range 5 {
		c := r.byte()
		v |= int64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if c&0x40 != 0 {
				v -= 1 << (7 * (i + 1))
			}
			return v
		}
	}
	r.err = errTruncated
	return 0
}

func (r *reader) name() string { return string(r.take(int(r.u32()))) }

func (r *reader) limits() {
	flags := r.byte()
	r.u32()
	if flags&1 != 0 {
		r.u32()
	}
}

func (r *reader) memArg() {
	r.u32() // alignment
	r.u32() // offset
}

// valType reads a value type of WebAssembly 2.0.
func (r *reader) valType() {
	switch t := r.byte(); t {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
	default:
		if r.err == nil {
			r.err = fmt.Errorf("unsupported value type 0x%02x", t)
		}
	}
}

// blockType reads a block type: empty, a value type, or a type index.
func (r *reader) blockType() {
	if r.p < len(r.b) && (r.b[r.p] == 0x40 || r.b[r.p] >= 0x6f && r.b[r.p] <= 0x7f) {
		r.byte()
		return
	}
	r.leb(5) // s33 type index
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
