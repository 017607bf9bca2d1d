package host

import (
	"fmt"
	"time"

	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
	"github.com/autoagent-go/autoagent/manifest"
)

// Limits bound what one call of a module may use: the one limits type,
// defined beside the grants in package manifest so that an approval
// records the same limits the host enforces. A zero field takes the
// Host's default ([manifest.DefaultLimits]); a call past a limit ends with
// a [*LimitError] result, its instance is discarded and the host keeps
// serving. host/ABI.md lists each limit and what a guest sees past it.
type Limits = manifest.Limits

// The limits a LimitError names. (host/internal/hostcall names the same
// limits for the capabilities; TestLimitNamesAgree keeps them one.)
const (
	LimitMemory         = "memory"
	LimitTime           = "time"
	LimitOutput         = "output"
	LimitHTTPResponse   = "HTTP response"
	LimitKVValue        = "kv value"
	LimitHTTPRequest    = "HTTP request"
	LimitKVNamespace    = "kv namespace"
	LimitStack          = "stack"
	LimitTables         = "table"
	LimitCallDepth      = "call depth"
	LimitCallTreeMemory = "call tree memory"
	LimitFSWrite        = "fs write"
	LimitOpenFiles      = "open files"
	LimitKVWrite        = "kv write"
)

// LimitError reports a call that went past one of its module's limits.
type LimitError struct {
	Limit string // one of the Limit* constants
	Value string // the limit, human readable: "10s", "64 MiB"
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("tool exceeded its %s limit of %s", e.Limit, e.Value)
}

func limitErr(limit string, n int64) *LimitError {
	return &LimitError{Limit: limit, Value: formatBytes(n)}
}

func timeLimitErr(d time.Duration) *LimitError {
	return &LimitError{Limit: LimitTime, Value: d.String()}
}

// formatBytes writes n as KiB/MiB/GiB when it divides evenly, else bytes.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ModuleLimits bound what a module may declare, checked when it is first
// compiled, before anything of it runs or is compiled: compilers spend
// time and memory superlinear in a function's size, nesting and branches,
// so these keep a hostile module's compilation small. A zero field takes
// the default host/ABI.md lists (generous for every toolchain's output:
// the largest known module, a 19 MB JavaScript engine built with Go, uses
// at most half of each).
type ModuleLimits struct {
	// Bytes caps the module's size (default 64 MiB).
	Bytes int
	// Functions caps its functions, imported ones included (200 000).
	Functions int
	// FunctionBytes caps one function's code (1 MiB).
	FunctionBytes int
	// Locals caps one function's parameters and locals (50 000).
	Locals int
	// StackHeight caps one function's operand stack height (10 000).
	StackHeight int
	// Nesting caps one function's nested blocks (10 000).
	Nesting int
	// Branches caps one function's control instructions and branch
	// targets (12 000): compile cost grows with their square.
	Branches int
	// FunctionWork caps one function's compile work (2e8, about 3 s of
	// compilation, which nothing interrupts): its branches squared, plus
	// an eighth of the phis wazero resolves (a block's phis times the
	// edges into it, for each block: a branch carrying many values, or a
	// local read after many merge points, makes many), plus 128 per
	// value its calls pass. CompileWork caps the sum over functions
	// (1.2e9, about 16 s).
	FunctionWork, CompileWork int64
	// LocalsBranches caps one function's parameters and locals times its
	// branches (2e6): compiling one function is never interrupted, and
	// its cost grows with that product (a 48 KB function of 10 000 locals
	// and 2 000 branches took over 3 minutes).
	LocalsBranches int64
	// ElementEntries caps the entries of all element segments (262 144):
	// each costs host memory in every instance, and time to instantiate.
	ElementEntries int
	// TypeValues caps the parameters and results of all function types
	// together (100 000).
	TypeValues int
	// CallValues caps the values one function's calls pass, each call's
	// parameters and results and 2 for the call (250 000): wazero holds
	// 400 to 550 bytes of each while it compiles the function (2 000
	// calls of 1 000 values took 1.6 GB).
	CallValues int
	// Segments caps the data and element segments each instance
	// initialises, counted after the host merges adjacent data segments
	// (10 000): instantiation, which nothing interrupts, costs about a
	// microsecond each (100 000 element segments: 70-170 ms per
	// instance, on every call).
	Segments int
}

func (l ModuleLimits) wasmbin() wasmbin.Limits {
	return wasmbin.Limits{
		ModuleBytes: l.Bytes, Functions: l.Functions, FunctionBytes: l.FunctionBytes, Locals: l.Locals,
		StackHeight: l.StackHeight, Nesting: l.Nesting, Branches: l.Branches, FunctionWork: l.FunctionWork,
		CompileWork: l.CompileWork, LocalsBranches: l.LocalsBranches, ElementEntries: l.ElementEntries,
		TypeValues: l.TypeValues, CallValues: l.CallValues, Segments: l.Segments,
	}.WithDefaults()
}

// ModuleLimitError reports a module that declares more than a
// [ModuleLimits] field (or Limits.Tables) allows, or whose compilation
// took longer than Options.CompileTimeout; Load and Inspect refuse it
// before anything of it runs.
type ModuleLimitError struct {
	Limit string // the field, e.g. "FunctionBytes", "Tables", "CompileTimeout"
	Max   int64
	// What says what went past the limit.
	What string
}

func (e *ModuleLimitError) Error() string {
	return fmt.Sprintf("module exceeds the %s limit of %d: %s", e.Limit, e.Max, e.What)
}

// defaultCompileTimeout bounds a module's compilation when
// Options.CompileTimeout is zero.
const defaultCompileTimeout = 2 * time.Minute
