package wasmbin

// Limits bound what a module may declare. Zero fields take the value of
// [DefaultLimits]. Each bound keeps some cost of decoding, validating,
// rewriting or compiling a module linear and small: compilers spend time
// and memory superlinear in a function's size, its locals, its operand
// stack height and its nesting.
type Limits struct {
	// ModuleBytes caps the binary's size.
	ModuleBytes int
	// Functions caps defined plus imported functions.
	Functions int
	// FunctionBytes caps one function body's code.
	FunctionBytes int
	// CodeBytes caps the whole code section.
	CodeBytes int
	// Locals caps one function's parameters plus locals.
	Locals int
	// StackHeight caps one function's operand stack height.
	StackHeight int
	// Nesting caps one function's nested blocks, loops and ifs.
	Nesting int
	// BrTableTargets caps the labels of one br_table.
	BrTableTargets int
	// Branches caps one function's control instructions and branch
	// targets ([Code.Branches]): wazero's compile time and memory grow
	// with their square (12 000 take about 2.4 s and 90 MB).
	Branches int
	// FunctionWork caps one function's compile work ([Code.Work]:
	// branches squared, the phis wazero resolves, the values calls
	// pass), which no deadline interrupts; CompileWork caps the sum over
	// functions, so a module of many functions each under the bound is
	// refused too.
	FunctionWork, CompileWork int64
	// Types, Imports, Exports, Globals, Tables, Elements, DataSegments
	// cap the entries of their sections (Tables and Globals imports
	// included).
	Types, Imports, Exports, Globals, Tables, Elements, DataSegments int
	// TypeArity caps the parameters, and separately the results, of one
	// function type.
	TypeArity int
	// SegmentEntries caps the functions or expressions of one element
	// segment, ElementEntries those of all segments together.
	SegmentEntries, ElementEntries int
	// TypeValues caps the parameters and results of all function types
	// together.
	TypeValues int
	// LocalsBranches caps one function's parameters and locals times its
	// branches.
	LocalsBranches int64
	// CallValues caps one function's [Code.CallValues]: wazero holds
	// 400 to 550 bytes per value while it compiles the function.
	CallValues int
	// Segments caps the data and element segments every instance
	// initialises, which nothing interrupts. Validate does not apply it:
	// the host counts them after its rewrite merges adjacent data
	// segments (a Go guest's 36 828 become one).
	Segments int
}

// DefaultLimits returns the defaults, a copy (no code in the process can
// change them, as with manifest.DefaultLimits). They are generous for
// every real toolchain's output and keep a hostile module's compile cost
// small. The largest module the project knows, a 19 MB Go build of a
// JavaScript engine, has 12 509 functions, 5 948 branches in its largest,
// nesting 1 308, CompileWork 3.7e8 (FunctionWork 3.6e7 at most, 2 462
// call values), 12 469 element entries and at most 65 714 locals times
// branches in a function; GHC's output nests 1 707 deep, has 7 727
// parameters and results in its types and a function of 11 043 call
// values; an instrumented C build of Extism's fixtures has a function of
// 1.98e6 locals times branches. A function at FunctionWork's bound costs
// about 3 s of compilation, which wazero does not interrupt.
func DefaultLimits() Limits { return defaultLimits }

var defaultLimits = Limits{
	ModuleBytes:    64 << 20,
	Functions:      200_000,
	FunctionBytes:  1 << 20,
	CodeBytes:      48 << 20,
	Locals:         50_000,
	StackHeight:    10_000,
	Nesting:        10_000,
	BrTableTargets: 100_000,
	Branches:       12_000,
	FunctionWork:   200_000_000,
	CompileWork:    1_200_000_000,
	Types:          100_000,
	Imports:        10_000,
	Exports:        100_000,
	Globals:        100_000,
	Tables:         100,
	Elements:       100_000,
	DataSegments:   200_000,
	TypeArity:      1_000,
	SegmentEntries: 1_000_000,
	ElementEntries: 1 << 18,
	TypeValues:     100_000,
	LocalsBranches: 2_000_000,
	CallValues:     250_000,
	Segments:       10_000,
}

// WithDefaults returns l with zero fields filled from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	d := defaultLimits
	fill := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	fill(&l.ModuleBytes, d.ModuleBytes)
	fill(&l.Functions, d.Functions)
	fill(&l.FunctionBytes, d.FunctionBytes)
	fill(&l.CodeBytes, d.CodeBytes)
	fill(&l.Locals, d.Locals)
	fill(&l.StackHeight, d.StackHeight)
	fill(&l.Nesting, d.Nesting)
	fill(&l.BrTableTargets, d.BrTableTargets)
	fill(&l.Branches, d.Branches)
	if l.FunctionWork == 0 {
		l.FunctionWork = d.FunctionWork
	}
	if l.CompileWork == 0 {
		l.CompileWork = d.CompileWork
	}
	fill(&l.Types, d.Types)
	fill(&l.Imports, d.Imports)
	fill(&l.Exports, d.Exports)
	fill(&l.Globals, d.Globals)
	fill(&l.Tables, d.Tables)
	fill(&l.Elements, d.Elements)
	fill(&l.DataSegments, d.DataSegments)
	fill(&l.TypeArity, d.TypeArity)
	fill(&l.SegmentEntries, d.SegmentEntries)
	fill(&l.ElementEntries, d.ElementEntries)
	fill(&l.TypeValues, d.TypeValues)
	if l.LocalsBranches == 0 {
		l.LocalsBranches = d.LocalsBranches
	}
	fill(&l.CallValues, d.CallValues)
	fill(&l.Segments, d.Segments)
	return l
}
