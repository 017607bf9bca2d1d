// Package rewrite instruments a module's binary for the host, once, before
// compiling it, and only after wasmbin.Validate has found it valid as
// written ([Apply]; see RATIONALE.md
// "Why does the host rewrite modules?" and "What stops a guest the
// instrumentation missed?"):
//
//   - Interruption. wazero can stop a running guest only by exiting to Go
//     at every loop iteration (close-on-context-done), which makes tight
//     loops several times slower; and native code that never exits to Go
//     cannot be preempted, so without some exit a long guest loop would
//     also hold up every garbage collection of the process. The rewrite
//     imports a host function (autoagent:kernel.yield) and adds a mutable
//     i32 global, the fuel, and starts every loop body and every function
//     but those its callers pay for with a check
//
//     fuel -= cost; if fuel <= 0 { yield(0); fuel = YieldEvery }
//
//     where cost counts the instructions of the straight-line region the
//     check guards (the loop's body outside the loops it holds, or the
//     function outside its loops, with the code outside loops of the
//     functions it calls that have no check: those whose code outside
//     loops calls nothing and costs at most what a call_indirect is
//     charged, small leaves or a recursion whose calls sit in a loop, and
//     as much for each call of a host function: the Extism kernel's
//     loads and stores are such leaves of its own module), so the
//     fuel is instructions run, and the guest exits to Go about once every
//     YieldEvery of them: yield ends the call when its time is up or its
//     caller gave up, and is where the Go scheduler may preempt it. A bulk
//     instruction (memory.fill, .copy, .init, table.fill, .copy, .init)
//     costs time in proportion to its length, so it is charged fuel in
//     proportion first.
//
//   - Stack. Every function that makes calls (only those can recurse)
//     lowers a second added global, the stack budget the host sets after
//     instantiation, by a bound on its frame's size (wasmbin.FrameCost:
//     every local, operand stack slot and value its instructions produce,
//     since wazero may spill each value live across a call to a slot of
//     its own), calling yield(1) when the budget is spent, and gives it
//     back afterwards. What it charges is a block: the innermost block,
//     loop or if that holds all of the function's calls and that no
//     branch leaves but to its own label (a recursion's loop, so its base
//     case pays nothing), or else a block the rewrite wraps around the
//     whole body, after its fuel check if it has one (a branch to the
//     function's label, or a return, then becomes a branch to the
//     wrapper). The budget is given back after the block's end and before
//     every return inside it. Deep recursion then ends at the module's
//     stack limit instead of growing wazero's stack to 400 MB.
//
//   - By construction, guest code cannot name what the rewrite adds: the
//     yield import takes the function index just after the module's own
//     imports and the two globals the indices just after its imported
//     globals, so every index the module defines is renumbered past them
//     and an index that was out of range stays out of range.
//
//   - Time in Go. The runtime runs ref.func and table.grow in Go, where a
//     table's growth copies it: each is bracketed by yield(2) and yield(3),
//     so the host's watchdog counts that time as the host's, as it does
//     a host function's, and does not take a guest kept there by a loaded
//     machine for one that stopped returning.
//
//   - Tables. Each defined table's maximum is capped so that all tables
//     together hold at most Limits.Tables entries: table.grow past it
//     fails (-1) as the specification allows.
//
//   - Instantiation. A Go guest's data section holds tens of thousands of
//     small active segments, each costing allocations per instantiation.
//     Adjacent ones are merged (the gaps filled with the zeros memory starts
//     with), which changes nothing the guest can observe.
//
// Custom sections (names, debug information) are dropped: their indices
// would be wrong. The rewritten module is then verified (wasmbin.Verify,
// another decoder than the one here) before it is compiled.
package rewrite

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
)

// YieldEvery is how much fuel, in instructions, a guest spends between two
// exits to Go: a millisecond or so of compute (more for code that misses
// the cache at every load), so the time limit and the garbage collector
// wait about that long at most, while the exits cost nothing measurable.
const YieldEvery = 1_000_000

// KernelModule holds the Go functions the host's kernel imports, yield
// among them; guests may not import it.
const KernelModule = "autoagent:kernel"

// YieldImport is the host function the rewrite imports; guests may not
// import anything from KernelModule themselves.
const YieldImport = "yield"

// The names the rewrite exports for the host; a module's own exports may
// not start with ReservedPrefix.
const (
	ReservedPrefix = "autoagent:"
	// StartExport names the module's start function, which the rewrite
	// turns into an export the host calls right after instantiation, under
	// the call's time limit: the start section would run inside
	// instantiation, before the host can interrupt anything.
	StartExport = "autoagent:start"
	// StackExport is the stack budget, which the host sets after
	// instantiation.
	StackExport = "autoagent:stack"
	// GlobalExportPrefix, then a global's index in the module as written,
	// names each of the module's own mutable globals of a number type: the
	// host reads them after the module's initialisers ran and sets them
	// in the instances it restores from that state (see SnapshotInfo).
	GlobalExportPrefix = "autoagent:global:"
	// SnapshotSection names the custom section the rewrite adds when the
	// module's initialisers cannot change a table or a segment, and every
	// mutable global is exported: only then may the host restore
	// instances from a snapshot of its memories and globals. Its one byte
	// holds SnapshotRestore, and SnapshotReset when no function of the
	// module at all changes a table or drops a segment and the module
	// imports no table, memory or global: then an instance's memories and
	// globals are all a call can change of it, and the host may reset a
	// used instance to the snapshot instead of making a new one.
	SnapshotSection = "autoagent:snapshot"
	// FuelExport is the fuel global, which the host sets back to
	// YieldEvery when it resets an instance: what a call left of it
	// depends on the call's input.
	FuelExport = "autoagent:fuel"
)

// The bits of the SnapshotSection's byte.
const (
	SnapshotRestore = 1 << iota
	SnapshotReset
)

// The fuel one unit of a bulk instruction's length costs: 2^memShift
// bytes of memory, 2^tableShift table entries (a loop iteration costs one
// unit, and is at least as slow).
const (
	memShift   = 6
	tableShift = 3
)

// Options choose what rewrite does.
type Options struct {
	Interrupt bool // add the instrumentation (fuel, stack, charges, yield)
	MergeData bool // merge adjacent active data segments
	// Tables caps the entries of all tables together (0: no cap).
	Tables uint32
	// Defect makes the rewrite wrong in one way, for the tests that show
	// its verification refuses every such module (see verify_test.go):
	// "loop" (a loop without its fuel check), "entry" (a function that
	// calls, without its stack check), "charge" (a bulk instruction
	// without its charge), "cost" (a frame cost too small), "return" (a
	// return left in a wrapped function), "globals" (guest globals not
	// renumbered past the fuel), "functions" (guest functions not
	// renumbered past yield), "fuelAtEnd" (the fuel after the module's
	// globals, as the host once placed it), "refFunc" (a ref.func without
	// its charge of the stack budget), "refCost" (a charge that raises
	// the budget), "bigEntry" (a function that calls, whose code outside
	// loops costs more than a call_indirect charges, left without its fuel
	// check), "entryCalls" (a function that calls outside its loops left
	// so), "unpaid" (a caller that does not pay for such a function it
	// calls), "importUnpaid" (a caller that does not pay for a host
	// function it calls), "scopeExit" (a charged block not followed by the budget's
	// restore), "scopeCalls" (a charged block that leaves a call out),
	// "scopeBranch" (a charged block a branch leaves), "goEnter" (a
	// ref.func or table.grow without the yield that marks time in Go
	// before it), "goLeave" (without the one after it).
	Defect string
}

// errRewrite wraps what the rewrite refuses.
var errRewrite = errors.New("cannot prepare the module")

// The section ids of the binary format.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secTable     = 4
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
	m    *wasmbin.Module
	opts Options
	inst wasmbin.Instrumentation
	// yieldType is the type index of yield's (i32) -> ().
	yieldType uint32
	// wrapTypes are the types [] -> results added for the blocks that wrap
	// bodies returning several values, by their results.
	wrapTypes     map[string]uint32
	wrapTypeOrder [][]wasmbin.ValType
	usesDataIndex bool // memory.init or data.drop: data segments keep their numbers
	injected      bool // the defect of opts.Defect was made once
	costs         []funcCosts
	isUnchecked   []bool // per defined function, unchecked's answer
}

// fn maps an original function index to the rewritten one.
func (w *rewriter) fn(i uint32) uint32 {
	if w.opts.Interrupt && int(i) >= w.m.ImportedFuncs && w.opts.Defect != "functions" {
		return i + 1
	}
	return i
}

// global maps an original global index to the rewritten one.
func (w *rewriter) global(i uint32) uint32 {
	if w.opts.Interrupt && int(i) >= w.m.ImportedGlobals && w.opts.Defect != "globals" {
		return i + 2
	}
	return i
}

// Instrumentation returns what the rewrite adds to m, for wasmbin.Verify.
func Instrumentation(m *wasmbin.Module) wasmbin.Instrumentation {
	g := uint32(m.ImportedGlobals)
	return wasmbin.Instrumentation{
		Fuel: g, Stack: g + 1, Yield: uint32(m.ImportedFuncs), YieldEvery: YieldEvery, MaxUnchecked: maxUnchecked,
		YieldModule: KernelModule, YieldName: YieldImport, MemShift: memShift, TableShift: tableShift,
	}
}

// Apply applies opts to the module b, which wasmbin.Validate found valid
// as m, and returns the rewritten binary. A declared table past
// opts.Tables is a *wasmbin.LimitError (Limit "Tables").
func Apply(m *wasmbin.Module, b []byte, opts Options) ([]byte, error) {
	return rewriteWith(&rewriter{}, m, b, opts)
}

// ApplyInjected is Apply that also reports whether opts.Defect found a
// place in the module to be injected (the verifier's tests).
func ApplyInjected(m *wasmbin.Module, b []byte, opts Options) (out []byte, injected bool, err error) {
	w := &rewriter{}
	out, err = rewriteWith(w, m, b, opts)
	return out, w.injected, err
}

// rewriteWith is rewrite with the rewriter's state kept in w.
func rewriteWith(w *rewriter, m *wasmbin.Module, b []byte, opts Options) ([]byte, error) {
	if !opts.Interrupt && !opts.MergeData && opts.Tables == 0 {
		return b, nil
	}
	for _, e := range m.Exports {
		if strings.HasPrefix(e.Name, ReservedPrefix) {
			return nil, fmt.Errorf("%w: it exports %q; names starting with %q are the host's", errRewrite, e.Name, ReservedPrefix)
		}
	}
	for _, imp := range m.Imports {
		if imp.Module == KernelModule && imp.Name == YieldImport {
			return nil, fmt.Errorf("%w: it imports %s.%s, which the rewrite adds", errRewrite, imp.Module, imp.Name)
		}
	}
	*w = rewriter{m: m, opts: opts, inst: Instrumentation(m), yieldType: uint32(len(m.Types)), wrapTypes: map[string]uint32{}}
	next := w.yieldType + 1
	for i, c := range m.Code {
		res := m.FuncType(uint32(m.ImportedFuncs + i)).Results
		if !opts.Interrupt || !c.Calls || len(res) < 2 {
			continue
		}
		key := fmt.Sprint(res)
		if _, ok := w.wrapTypes[key]; !ok {
			w.wrapTypes[key] = next
			w.wrapTypeOrder = append(w.wrapTypeOrder, res)
			next++
		}
	}
	var secs []section
	for _, s := range m.Sections {
		secs = append(secs, section{s.ID, b[s.Offset : s.Offset+s.Size]})
	}

	out, err := w.rewriteSections(secs)
	if err != nil {
		return nil, err
	}
	if opts.MergeData && !w.usesDataIndex {
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

// rewriteSections rewrites each section, creating those the additions
// need where the module has none.
func (w *rewriter) rewriteSections(secs []section) ([]section, error) {
	out := make([]section, 0, len(secs)+4)
	have := map[byte]bool{}
	// add creates the sections the module lacks that rank before id (all
	// of them for id 0).
	add := func(before byte) {
		if !w.opts.Interrupt {
			return
		}
		for _, id := range []byte{secType, secImport, secGlobal, secExport} {
			if have[id] || (before != 0 && sectionRank(before) <= sectionRank(id)) {
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
				body, _ = w.exports(nil)
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
			if w.opts.Interrupt {
				s.body = w.types(s.body)
			}
		case secImport:
			if w.opts.Interrupt {
				s.body = w.imports(s.body)
			}
		case secTable:
			s.body, err = w.tables(s.body)
		case secGlobal:
			s.body, err = w.rewriteGlobals(s.body)
		case secExport:
			s.body, err = w.exports(s.body)
		case secStart:
			if w.opts.Interrupt {
				continue // now an export (StartExport)
			}
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
	if w.opts.Interrupt && w.snapshotSafe() {
		// One byte of contents (wazero fails to read an empty custom
		// section at the end of a module when it keeps custom sections):
		// what the host may do with a snapshot.
		flags := byte(SnapshotRestore)
		if w.resetSafe() {
			flags |= SnapshotReset
		}
		body := appendU32(nil, uint32(len(SnapshotSection)))
		out = append(out, section{secCustom, append(append(body, SnapshotSection...), flags)})
	}
	return out, nil
}

// numeric reports whether a global of type t holds a number the host can
// read and set as a uint64 (not a reference into one instance, nor a
// v128).
func numeric(t wasmbin.ValType) bool {
	return t == wasmbin.I32 || t == wasmbin.I64 || t == wasmbin.F32 || t == wasmbin.F64
}

// resetSafe reports whether a used instance of the module, its memories
// and its exported globals set back to a snapshot's, is a new instance:
// no function of the module changes a table or drops a segment (a call
// could then leave a table or segment as a new instance does not have
// it), and the module imports no table, memory or global (state it
// shares with another module). snapshotSafe holds too.
func (w *rewriter) resetSafe() bool {
	for i := range w.costs {
		if w.costs[i].changesTables {
			return false
		}
	}
	for _, imp := range w.m.Imports {
		if imp.Kind != wasmbin.KindFunc {
			return false
		}
	}
	return true
}

// snapshotSafe reports whether restoring a snapshot of the module's
// memories and exported globals, taken after its initialisers ran, into
// a new instance gives the state running them would: every mutable
// global is exported, and no function the initialisers may reach changes
// a table or drops a segment (a new instance has the tables and segments
// the module declares, which the snapshot does not hold). The
// initialisers are the start function and the exports the host calls
// as such; a call_indirect reached reaches any function, so then no
// function of the module may change a table.
func (w *rewriter) snapshotSafe() bool {
	if w.costs == nil {
		return false // no code section walked
	}
	for _, g := range w.m.Globals[w.m.ImportedGlobals:] {
		if g.Mutable && !numeric(g.Type) {
			return false
		}
	}
	var roots []uint32
	if w.m.Start >= 0 {
		roots = append(roots, uint32(w.m.Start))
	}
	for _, e := range w.m.Exports {
		if e.Kind == 0x00 && (e.Name == "_initialize" || e.Name == "__wasm_call_ctors" || e.Name == "hs_init") {
			roots = append(roots, e.Index)
		}
	}
	seen := make([]bool, len(w.costs))
	indirect, anyChanges := false, false
	for _, c := range w.costs {
		anyChanges = anyChanges || c.changesTables
	}
	for len(roots) > 0 {
		f := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		d := int(f) - w.m.ImportedFuncs
		if d < 0 || seen[d] {
			continue // an import: the host's, whose state it checks itself
		}
		seen[d] = true
		c := &w.costs[d]
		if c.changesTables {
			return false
		}
		for _, r := range c.regions {
			roots = append(roots, r.callees...)
			indirect = indirect || r.indirect > 0
		}
	}
	return !(indirect && anyChanges)
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

// types adds the yield function's type, (i32) -> (), and the wrapper
// blocks' types.
func (w *rewriter) types(body []byte) []byte {
	extra := []byte{0x60, 0x01, 0x7f, 0x00}
	for _, res := range w.wrapTypeOrder {
		extra = append(appendU32(append(extra, 0x60, 0x00), uint32(len(res))), valTypes(res)...)
	}
	return extend(body, extra, 1+uint32(len(w.wrapTypeOrder)))
}

func valTypes(ts []wasmbin.ValType) []byte {
	b := make([]byte, len(ts))
	for i, t := range ts {
		b[i] = byte(t)
	}
	return b
}

// imports adds autoagent:kernel.yield after the module's imports: its
// function index is the number of functions the module imports.
func (w *rewriter) imports(body []byte) []byte {
	e := appendU32(nil, uint32(len(KernelModule)))
	e = append(e, KernelModule...)
	e = appendU32(e, uint32(len(YieldImport)))
	e = append(e, YieldImport...)
	e = append(e, 0x00)
	e = appendU32(e, w.yieldType)
	return extend(body, e, 1)
}

// globals returns the global section: the fuel (starting at YieldEvery)
// and the stack budget (0 until the host sets it) first, then the
// module's own globals (body, nil when it has none), already renumbered.
func (w *rewriter) globals(body []byte) []byte {
	e := appendS32([]byte{0x7f, 0x01, 0x41}, YieldEvery)
	e = append(e, 0x0b, 0x7f, 0x01, 0x41, 0x00, 0x0b)
	var count uint32
	rest := body
	if body != nil {
		r := reader{b: body}
		count = r.u32()
		rest = body[r.p:]
	}
	out := appendU32(make([]byte, 0, len(body)+len(e)+5), count+2)
	if w.opts.Defect == "fuelAtEnd" {
		return append(append(out, rest...), e...)
	}
	out = append(out, e...)
	return append(out, rest...)
}

// rewriteGlobals renumbers the initialisers and, when interrupting, puts
// the fuel and the stack budget first.
func (w *rewriter) rewriteGlobals(body []byte) ([]byte, error) {
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
	if !w.opts.Interrupt {
		return out, nil
	}
	return w.globals(out), nil
}

// tables caps each defined table's maximum so that all tables together
// hold at most opts.Tables entries (each table gets an equal share).
func (w *rewriter) tables(body []byte) ([]byte, error) {
	if w.opts.Tables == 0 {
		return body, nil
	}
	share := w.opts.Tables / uint32(max(len(w.m.Tables), 1))
	r := reader{b: body}
	n := r.u32()
	out := appendU32(nil, n)
	defined := w.m.Tables[len(w.m.Tables)-int(n):]
	for i := uint32(0); i < n; i++ {
		out = append(out, r.byte()) // the reference type
		r.limits()
		t := defined[i]
		if t.Min > share {
			what := fmt.Sprintf("table %d declares %d entries", len(w.m.Tables)-int(n)+int(i), t.Min)
			if share < w.opts.Tables {
				what += fmt.Sprintf(", more than its share (%d) of the module's %d tables", share, len(w.m.Tables))
			}
			return nil, &wasmbin.LimitError{Limit: "Tables", Max: int64(w.opts.Tables), What: what}
		}
		limit := share
		if t.HasMax && t.Max < limit {
			limit = t.Max
		}
		out = appendU32(appendU32(append(out, 0x01), t.Min), limit)
	}
	if r.err != nil || !r.done() {
		return nil, fmt.Errorf("%w: malformed table section", errRewrite)
	}
	return out, nil
}

// exports renumbers function and global exports and adds the host's.
func (w *rewriter) exports(body []byte) ([]byte, error) {
	var out []byte
	var n uint32
	if body != nil {
		r := reader{b: body}
		n = r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			name := r.name()
			kind := r.byte()
			idx := r.u32()
			switch kind {
			case 0x00:
				idx = w.fn(idx)
			case 0x03:
				idx = w.global(idx)
			}
			out = appendExport(out, name, kind, idx)
		}
		if r.err != nil || !r.done() {
			return nil, fmt.Errorf("%w: malformed export section", errRewrite)
		}
	}
	if w.opts.Interrupt {
		out = appendExport(out, StackExport, 0x03, w.inst.Stack)
		out = appendExport(out, FuelExport, 0x03, w.inst.Fuel)
		n += 2
		if w.m.Start >= 0 {
			out = appendExport(out, StartExport, 0x00, w.fn(uint32(w.m.Start)))
			n++
		}
		for i := w.m.ImportedGlobals; i < len(w.m.Globals); i++ {
			if g := w.m.Globals[i]; g.Mutable && numeric(g.Type) {
				// i+2, not w.global(i): the "globals" defect is for guest code.
				out = appendExport(out, GlobalExportPrefix+strconv.Itoa(i), 0x03, uint32(i)+2)
				n++
			}
		}
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

// constExpr copies a constant expression, renumbering ref.func and
// global.get.
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
			out = appendU32(append(out, op), w.global(r.u32()))
			continue
		case 0xd0: // ref.null
			r.valType()
		case 0xd2: // ref.func
			out = appendU32(append(out, op), w.fn(r.u32()))
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

// code rewrites every function body. A first pass over each counts the
// instructions of its fuel regions (the function outside its loops, each
// loop's body outside the loops it holds) and the calls in them; the
// second writes each region's check with its cost, once the costs of the
// small leaves the regions call are known.
func (w *rewriter) code(body []byte) ([]byte, error) {
	r := reader{b: body}
	n := r.u32()
	if int(n) != len(w.m.Code) {
		return nil, fmt.Errorf("%w: %d function bodies, validation saw %d", errRewrite, n, len(w.m.Code))
	}
	codes := make([][]byte, n)
	for i := range codes {
		codes[i] = r.take(int(r.u32()))
		if r.err != nil {
			return nil, fmt.Errorf("%w: truncated code section", errRewrite)
		}
	}
	if !r.done() {
		return nil, fmt.Errorf("%w: trailing bytes in the code section", errRewrite)
	}
	var fn []byte
	if w.opts.Interrupt {
		w.costs = make([]funcCosts, n)
		for i, code := range codes {
			var err error
			if fn, err = w.function(fn[:0], i, code, &w.costs[i]); err != nil {
				return nil, fmt.Errorf("%w: function %d: %w", errRewrite, w.m.ImportedFuncs+i, err)
			}
		}
		w.isUnchecked = make([]bool, n)
		for i := range w.isUnchecked {
			w.isUnchecked[i] = w.unchecked(i)
		}
	}
	out := make([]byte, 0, len(body)+len(body)/4)
	out = appendU32(out, n)
	for i, code := range codes {
		var err error
		if fn, err = w.function(fn[:0], i, code, nil); err != nil {
			return nil, fmt.Errorf("%w: function %d: %w", errRewrite, w.m.ImportedFuncs+i, err)
		}
		out = appendU32(out, uint32(len(fn)))
		out = append(out, fn...)
	}
	return out, nil
}

// maxUnchecked is the largest cost of a function that gets no fuel check of
// its own (its callers pay for it); a call_indirect costs this much.
const maxUnchecked = 64

// funcCosts is what the first pass counts of one function: its fuel
// regions, the function's own first, then its loops in order.
type funcCosts struct {
	regions []costRegion
	calls   bool
	// changesTables is set when the body changes a table (table.set,
	// .grow, .fill, .copy, .init) or drops a segment (elem.drop,
	// data.drop): state a snapshot does not hold (see snapshotSafe).
	changesTables bool
	// scope is the offset in the function's code of the block, loop or
	// if charged to the stack budget (-1: a block wrapped around the
	// body): the innermost that holds every call, that no branch leaves
	// but to its own label, and that no loop holds (whose every iteration
	// would pay it).
	scope int
}

// frameCalls is what the first pass keeps of a block, loop or if, to
// choose the charged block.
type frameCalls struct {
	start  int  // its opcode's offset in the code
	depth  int  // the frames around it (0: outermost)
	calls  int  // the calls inside it
	target int  // the outermost frame a branch inside it targets (-1: the function's)
	loop   bool // it is a loop
	inLoop bool // a loop holds it
}

// scopeOf returns the charged block's offset among closed frames, each
// with its depth (0 outermost), for a function of n calls; -1 when none
// fits. The frames that hold every call are nested in one another; the
// innermost that no branch leaves and no loop holds is the one.
func (w *rewriter) scopeOf(closed []frameCalls, n int) int {
	scope, depth := -1, -1
	for _, c := range closed {
		if c.calls == n && c.target >= c.depth && !c.inLoop && c.depth > depth {
			scope, depth = c.start, c.depth
		}
	}
	if w.opts.Defect != "scopeCalls" && w.opts.Defect != "scopeBranch" || w.injected {
		return scope
	}
	// The defects: a block that leaves a call out, or one a branch leaves.
	for _, c := range closed {
		wrong := c.calls > 0 && c.calls < n && c.target >= c.depth
		if w.opts.Defect == "scopeBranch" {
			wrong = c.calls == n && c.target < c.depth && c.depth > depth
		}
		if wrong {
			w.injected = true
			return c.start
		}
	}
	return scope
}

type costRegion struct {
	count    int64
	callees  []uint32 // original indices of the functions it calls directly
	indirect int64
}

// unchecked reports whether function i (a defined function's index among
// the defined) gets no fuel check at its entry, its callers paying for its
// code outside loops (entryCost): that code calls nothing and costs at most
// maxUnchecked, which is what a call_indirect charges and what a host call
// runs before the next check. It holds for small leaves, and for
// recursion whose calls sit in a loop (fib as clang compiles it), which
// then pays one check per call instead of two.
func (w *rewriter) unchecked(i int) bool {
	entry := &w.costs[i].regions[0]
	if len(entry.callees) > 0 || entry.indirect > 0 {
		if w.opts.Defect == "entryCalls" && !w.injected && w.entryCost(i) <= maxUnchecked {
			w.injected = true
			return true
		}
		return false
	}
	if w.entryCost(i) > maxUnchecked {
		if w.opts.Defect == "bigEntry" && !w.injected && w.costs[i].calls {
			w.injected = true
			return true
		}
		return false
	}
	return true
}

// entryCost is what a caller pays for calling unchecked function d: its
// code outside loops, with the block that wraps its body and its end.
func (w *rewriter) entryCost(d int) int64 {
	cost := w.costs[d].regions[0].count
	if w.m.Code[d].Calls {
		cost += 2
	}
	return cost
}

// regionCost is what region k of function i's check charges.
func (w *rewriter) regionCost(i, k int) int32 {
	g := &w.costs[i].regions[k]
	cost := g.count + g.indirect*maxUnchecked
	for _, c := range g.callees {
		d := int(c) - w.m.ImportedFuncs
		switch {
		case d < 0:
			// A host function: the kernel's leaves have no check of their
			// own, so their callers pay what a call_indirect does.
			if w.opts.Defect == "importUnpaid" && !w.injected {
				w.injected = true
				continue
			}
			cost += maxUnchecked
		case w.isUnchecked[d]:
			if w.opts.Defect == "unpaid" && !w.injected && w.m.Code[d].Calls {
				w.injected = true
				continue
			}
			cost += w.entryCost(d)
		}
	}
	if k == 0 && w.m.Code[i].Calls {
		cost += 2 // the block that wraps the body, and its end
	}
	if w.opts.Defect == "fuel" && !w.injected {
		w.injected = true
		return 1
	}
	return int32(min(cost, 1<<30))
}

// function copies the body of defined function i to out, renumbering
// functions and globals and adding the instrumentation: the fuel check
// after every loop's block type and at the entry of every function but a
// small leaf, a charge before every bulk instruction, and for a function
// that makes calls the stack budget's charge of the block chosen in the
// first pass (count.scope) or of a block around its body, and the budget's
// return after it. With count set it is the first pass: it counts the
// regions' instructions and calls into count and chooses the charged
// block, and its output is not used.
func (w *rewriter) function(out []byte, i int, code []byte, count *funcCosts) ([]byte, error) {
	info := w.m.Code[i]
	typ := w.m.FuncType(uint32(w.m.ImportedFuncs + i))
	interrupt := w.opts.Interrupt
	// A function that calls either charges the stack budget for one of its
	// blocks (scope: the code's offset of its opcode), or wraps its body in
	// a block to charge.
	wrap := interrupt && info.Calls
	scope := -1
	if wrap && count == nil && w.costs[i].scope >= 0 {
		wrap, scope = false, w.costs[i].scope
	}
	scopeDepth := -1 // the depth the charged block opened at, while open
	// In the first pass: the open frames, and those closed.
	var frames []frameCalls
	var closed []frameCalls
	calls := 0
	// called and branched record, in the first pass, a call or a branch
	// of depth l in the innermost open frame.
	called := func() {
		calls++
		if len(frames) > 0 {
			frames[len(frames)-1].calls++
		}
	}
	branched := func(l uint32) {
		if top := len(frames) - 1; top >= 0 {
			frames[top].target = min(frames[top].target, top-int(l))
		}
	}
	// The regions open around the current instruction (counting) and
	// the next loop's region (writing).
	var open []int
	loopRegion := 0
	if count != nil {
		count.regions = []costRegion{{}}
		open = []int{0}
	}
	scratch := interrupt && info.Bulk
	r := reader{b: code}
	groups := r.u32()
	for g := uint32(0); g < groups && r.err == nil; g++ {
		r.u32()
		r.valType()
	}
	if r.err != nil {
		return nil, errors.New("malformed locals")
	}
	if scratch {
		// One more local, an i32, for the charges: it follows every other.
		lr := reader{b: code}
		lr.u32()
		out = appendU32(out, groups+1)
		out = append(out, code[lr.p:r.p]...)
		out = append(out, 0x01, 0x7f)
	} else {
		out = append(out, code[:r.p]...)
	}
	locals := len(typ.Params) + info.Locals
	scratchIdx := uint32(locals)
	if scratch {
		locals++
	}
	var cost int32
	if (wrap || scope >= 0) && w.opts.Defect == "entry" && !w.injected && count == nil {
		wrap, scope, w.injected = false, -1, true
	}
	if wrap || scope >= 0 {
		// The patterns push at most 3 values above the body's own height.
		// The wrapper block pushes the results once more.
		cost = wasmbin.FrameCost(locals, info.MaxStack+3, info.Values+len(typ.Results))
		if w.opts.Defect == "cost" {
			cost, w.injected = 1, true
		}
	}
	switch {
	case count != nil:
	case wrap:
		if w.isUnchecked[i] {
			out = append(out, w.inst.StackCharge(cost)...)
		} else {
			out = append(out, w.inst.StackEntry(w.regionCost(i, 0), cost)...)
		}
		out = append(out, 0x02)
		switch len(typ.Results) {
		case 0:
			out = append(out, 0x40)
		case 1:
			out = append(out, byte(typ.Results[0]))
		default:
			out = appendS32(out, int32(w.wrapTypes[fmt.Sprint(typ.Results)]))
		}
	case interrupt && !w.isUnchecked[i]:
		out = append(out, w.inst.FuelCheck(w.regionCost(i, 0))...)
	}
	var memCharge, tableCharge []byte
	if scratch {
		memCharge = w.inst.Charge(scratchIdx, memShift)
		tableCharge = w.inst.Charge(scratchIdx, tableShift)
	}
	depth := uint32(0) // frames open inside the body
	var loops []bool   // per open frame: a loop with its own region
	for !r.done() {
		start := r.p
		op := r.byte()
		loop, exit := false, false
		if start == scope {
			// The charged block: charged before it opens, given back
			// after it ends and before every return inside it.
			out = append(out, w.inst.StackCharge(cost)...)
			scopeDepth = int(depth)
		}
		if count != nil && (op == 0x02 || op == 0x03 || op == 0x04) {
			inLoop := false
			if p := len(frames) - 1; p >= 0 {
				inLoop = frames[p].loop || frames[p].inLoop
			}
			frames = append(frames, frameCalls{start: start, depth: len(frames), target: 1 << 30, loop: op == 0x03, inLoop: inLoop})
		}
		if count != nil {
			// Every instruction counts once, in the innermost region (a
			// loop's own opcode in the region around it, its end in its
			// own).
			count.regions[open[len(open)-1]].count++
		}
		switch {
		case op == 0x0b: // end
			if count != nil && len(frames) > 0 {
				c := frames[len(frames)-1]
				frames = frames[:len(frames)-1]
				closed = append(closed, c)
				if p := len(frames) - 1; p >= 0 {
					frames[p].calls += c.calls
					frames[p].target = min(frames[p].target, c.target)
				}
			}
			if depth > 0 {
				if l := len(loops) - 1; loops[l] {
					if count != nil {
						open = open[:len(open)-1]
					}
					loops = loops[:l]
				} else {
					loops = loops[:l]
				}
			}
			if depth == 0 {
				if !r.done() {
					return nil, fmt.Errorf("bytes after the function's end at offset %d", r.p)
				}
				if count != nil {
					count.scope = -1
					if calls > 0 {
						count.scope = w.scopeOf(closed, calls)
					}
				}
				if wrap {
					out = append(out, 0x0b)
					out = append(out, w.inst.StackExit(cost)...)
				}
				return append(out, 0x0b), nil
			}
			depth--
			if int(depth) == scopeDepth {
				exit, scopeDepth = true, -1
			}
		case op == 0x00 || op == 0x01 || op == 0x05 ||
			op == 0x1a || op == 0x1b || op == 0xd1 || (op >= 0x45 && op <= 0xc4):
			// no immediates
		case op == 0x0f: // return
			if (wrap || scopeDepth >= 0) && w.opts.Defect == "return" && !w.injected && count == nil {
				w.injected = true
				break
			}
			if wrap {
				// To the block around the body, after which the stack
				// budget is given back.
				out = appendU32(append(out, 0x0c), depth)
				continue
			}
			if scopeDepth >= 0 {
				out = append(out, w.inst.StackExit(cost)...)
			}
		case op == 0x02 || op == 0x04: // block, if
			r.blockType()
			depth++
			loops = append(loops, false)
		case op == 0x03: // loop
			r.blockType()
			depth++
			loop = true
			loops = append(loops, true)
			if count != nil {
				count.regions = append(count.regions, costRegion{})
				open = append(open, len(count.regions)-1)
			}
		case op == 0x10 || op == 0xd2: // call, ref.func
			idx := r.u32()
			if op == 0xd2 && interrupt && count == nil {
				// wazero keeps a record per ref.func an instance runs, for
				// as long as it lives: the stack budget pays for it.
				switch cost := int32(wasmbin.RefFuncCost); {
				case w.opts.Defect == "refFunc" && !w.injected:
					w.injected = true
				case w.opts.Defect == "refCost" && !w.injected:
					w.injected = true
					out = append(out, w.inst.RefFuncCharge(-cost)...)
				default:
					out = append(out, w.inst.RefFuncCharge(cost)...)
				}
				out = w.goEnter(out)
			}
			if r.err == nil {
				out = appendU32(append(out, op), w.fn(idx))
			}
			if op == 0xd2 && interrupt && count == nil {
				out = w.goLeave(out)
			}
			if op == 0x10 && count != nil {
				g := &count.regions[open[len(open)-1]]
				g.callees = append(g.callees, idx)
				count.calls = true
				called()
			}
			continue
		case op == 0x23 || op == 0x24: // global.get, global.set
			idx := r.u32()
			if r.err == nil {
				out = appendU32(append(out, op), w.global(idx))
			}
			continue
		case op == 0x0c || op == 0x0d: // br, br_if
			if l := r.u32(); count != nil {
				branched(l)
			}
		case (op >= 0x20 && op <= 0x22) || op == 0x25 || op == 0x26 || op == 0x3f || op == 0x40: // one index
			r.u32()
			if op == 0x26 && count != nil { // table.set
				count.changesTables = true
			}
		case op == 0x0e: // br_table
			n := r.u32()
			for j := uint32(0); j <= n && r.err == nil; j++ {
				if l := r.u32(); count != nil {
					branched(l)
				}
			}
		case op == 0x11: // call_indirect
			r.u32()
			r.u32()
			if count != nil {
				count.regions[open[len(open)-1]].indirect++
				count.calls = true
				called()
			}
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
			sub, err := w.miscOp(&r)
			if err != nil {
				return nil, err
			}
			if count != nil && (sub == 9 || (sub >= 12 && sub <= 15) || sub == 17) {
				count.changesTables = true // data.drop, table.init, elem.drop, table.copy, .grow, .fill
			}
			if sub == 15 && interrupt && count == nil { // table.grow
				out = w.goEnter(out)
				out = append(out, code[start:r.p]...)
				out = w.goLeave(out)
				continue
			}
			if scratch && w.opts.Defect == "charge" && !w.injected && count == nil && (sub == 8 || sub == 10 || sub == 11) {
				w.injected = true
			} else if scratch {
				switch sub {
				case 8, 10, 11:
					out = append(out, memCharge...)
				case 12, 14, 17:
					out = append(out, tableCharge...)
				}
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
		if exit && w.opts.Defect == "scopeExit" && !w.injected {
			w.injected = true
		} else if exit {
			out = append(out, w.inst.StackExit(cost)...)
		}
		if loop && interrupt && count == nil {
			loopRegion++
			if w.opts.Defect == "loop" && !w.injected {
				w.injected = true
				continue
			}
			out = append(out, w.inst.FuelCheck(w.regionCost(i, loopRegion))...)
		}
	}
	return nil, errors.New("the function does not end")
}

// goEnter and goLeave bracket a ref.func or table.grow, which the runtime
// runs in Go: the yields tell the host's watchdog that the time is the
// host's, not a guest that stopped returning (see wasmbin.Instrumentation).
func (w *rewriter) goEnter(out []byte) []byte {
	if w.opts.Defect == "goEnter" && !w.injected {
		w.injected = true
		return out
	}
	return append(out, w.inst.GoEnter()...)
}

func (w *rewriter) goLeave(out []byte) []byte {
	if w.opts.Defect == "goLeave" && !w.injected {
		w.injected = true
		return out
	}
	return append(out, w.inst.GoLeave()...)
}

// miscOp reads a 0xfc instruction (saturating conversions, bulk memory
// and table operations) and returns its sub-opcode.
func (w *rewriter) miscOp(r *reader) (uint32, error) {
	switch sub := r.u32(); {
	case sub <= 7: // iNN.trunc_sat_fMM_s/u
		return sub, nil
	case sub == 8: // memory.init data mem
		r.u32()
		r.u32()
		w.usesDataIndex = true
		return sub, nil
	case sub == 9: // data.drop data
		r.u32()
		w.usesDataIndex = true
		return sub, nil
	case sub == 10 || sub == 12 || sub == 14: // memory.copy, table.init, table.copy: two indices
		r.u32()
		r.u32()
		return sub, nil
	case sub == 11 || sub == 13 || (sub >= 15 && sub <= 17): // memory.fill, elem.drop, table.grow/size/fill
		r.u32()
		return sub, nil
	default:
		return 0, fmt.Errorf("unsupported instruction 0xfc %d", sub)
	}
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
		// No immediates; validation refused the opcodes SIMD does not
		// assign.
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
	// spanning them, written straight into the new section. The zeros
	// filled in are bounded by the data itself (and 1 MiB): 200 000
	// one-byte segments 4 KiB apart would otherwise become 800 MB.
	fill := max(uint64(len(body)), 1<<20)
	out := appendU32(make([]byte, 0, len(body)+mergeGap), 0)
	count = 0
	for i := 0; i < len(segs); {
		j, end := i+1, uint64(segs[i].off)+uint64(len(segs[i].data))
		for j < len(segs) {
			gap := uint64(segs[j].off) - end
			if gap > mergeGap || gap > fill {
				break
			}
			fill -= gap
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

// reader decodes the binary format for the rewrite; the first error
// sticks and every later read returns zero. It is deliberately not
// wasmbin's decoder: the verification of the rewritten module decodes it
// with that one, so one decoder's defect cannot hide in the other.
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

// VerifyLimits are the limits the rewritten module is verified under:
// the rewrite adds a few functions, globals, types, locals and stack
// slots, and code to every loop, call and bulk instruction.
func VerifyLimits(l wasmbin.Limits) wasmbin.Limits {
	l.ModuleBytes *= 4
	l.CodeBytes *= 4
	l.FunctionBytes *= 8
	l.Functions += 1
	l.Globals += 2
	l.Types += l.Types + 1
	l.Exports += 2
	l.Locals++
	l.StackHeight += 3
	l.Nesting += 2
	l.Branches = 2*l.Branches + 8
	l.FunctionWork = 4*l.FunctionWork + 1<<20
	l.CompileWork = 4*l.CompileWork + 1<<20
	l.TypeValues = 2*l.TypeValues + 64 // the yield type, a block type per result list
	l.LocalsBranches = 4*l.LocalsBranches + 1<<20
	l.CallValues = 4*l.CallValues + 1<<16
	return l
}
