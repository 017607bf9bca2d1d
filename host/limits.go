package host

import (
	"fmt"
	"time"

	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
)

// Limits bound what one call of a module may use. A zero field takes the
// Host's default (see [DefaultLimits]); a call past a limit ends with a
// [*LimitError] result, its instance is discarded and the host keeps
// serving. host/ABI.md lists each limit and what a guest sees past it.
type Limits struct {
	// Memory caps the guest's linear memory plus its Extism memory blocks,
	// in bytes (rounded up to 64 KiB pages). At most 4 GiB.
	Memory int64
	// Timeout caps the wall time of one call, host functions (HTTP)
	// included.
	Timeout time.Duration
	// Output caps the bytes of a call's result (Extism output or WASI
	// stdout).
	Output int64
	// HTTPResponse caps the body of one HTTP response.
	HTTPResponse int64
	// KVValue caps one value stored in the key-value store.
	KVValue int64

	// HTTPRequest caps the body of one HTTP request a guest sends.
	HTTPRequest int64
	// KVNamespace caps the bytes one kv namespace holds, across calls and
	// processes, each entry counting its key, its value and 64 bytes for
	// the store's own; a write past it fails.
	KVNamespace int64
	// Stack caps the guest's call stack: each call of a function that
	// calls others costs a bound on its frame (16 bytes per local,
	// operand stack slot and value its instructions produce, plus 96), and
	// a call past the limit ends the call. It bounds the host memory deep
	// recursion takes.
	Stack int64
	// Tables caps the entries of the module's tables together (8 bytes of
	// host memory each): a table that declares more is refused at load,
	// and table.grow past it returns -1.
	Tables int64
	// ErrorText caps the error message a tool sets (Extism error_set, a
	// WASI command's stderr); a longer one is cut and marked.
	ErrorText int64
	// CallDepth caps how deeply sandboxed calls nest: a guest calling a
	// tool (tools: grant) that runs another sandboxed call counts one
	// level more. The call past it is refused.
	CallDepth int
	// CallTreeMemory caps the memory of every instance of one call tree
	// together (a call and the sandboxed calls it makes through tools:),
	// on top of each one's Memory limit.
	CallTreeMemory int64
	// OpenFiles caps the files and directories an instance holds open
	// under its fs grants, across calls (a reused instance keeps what it
	// left open); the open past it ends the call.
	OpenFiles int
	// FSWrite caps the bytes one call writes under its fs.write grants
	// (each file, directory or link it makes counts 4 KiB more). It
	// bounds the disk a call can fill; it is not a quota on the
	// directory, which the embedder sets with the file system's own.
	FSWrite int64
}

// DefaultLimits returns the limits of docs/ARCHITECTURE.md §4 and of
// host/ABI.md, which a Host applies to every zero field of
// Options.Limits and of a module's Limits. It is a function, not a
// variable, so that no code in the process can lower (or raise) the
// sandbox's defaults behind the embedder's back; to change them, set
// Options.Limits.
func DefaultLimits() Limits { return defaultLimits }

var defaultLimits = Limits{
	Memory:         64 << 20,
	Timeout:        10 * time.Second,
	Output:         1 << 20,
	HTTPResponse:   4 << 20,
	KVValue:        1 << 20,
	HTTPRequest:    4 << 20,
	KVNamespace:    64 << 20,
	Stack:          8 << 20,
	Tables:         1 << 20,
	ErrorText:      64 << 10,
	CallDepth:      4,
	CallTreeMemory: 256 << 20,
	OpenFiles:      256,
	FSWrite:        256 << 20,
}

const maxMemory = 4 << 30 // the wasm32 address space

// withDefaults fills zero fields from d.
func (l Limits) withDefaults(d Limits) Limits {
	fill := func(v *int64, def int64) {
		if *v == 0 {
			*v = def
		}
	}
	fill(&l.Memory, d.Memory)
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	fill(&l.Output, d.Output)
	fill(&l.HTTPResponse, d.HTTPResponse)
	fill(&l.KVValue, d.KVValue)
	fill(&l.HTTPRequest, d.HTTPRequest)
	fill(&l.KVNamespace, d.KVNamespace)
	fill(&l.Stack, d.Stack)
	fill(&l.Tables, d.Tables)
	fill(&l.ErrorText, d.ErrorText)
	if l.CallDepth == 0 {
		l.CallDepth = d.CallDepth
	}
	fill(&l.CallTreeMemory, d.CallTreeMemory)
	if l.OpenFiles == 0 {
		l.OpenFiles = d.OpenFiles
	}
	fill(&l.FSWrite, d.FSWrite)
	return l
}

// validate reports a negative or out-of-range limit.
func (l Limits) validate() error {
	switch {
	case l.Memory < 0 || l.Memory > maxMemory:
		return fmt.Errorf("host: memory limit %d out of range (0 to 4 GiB)", l.Memory)
	case l.Timeout < 0:
		return fmt.Errorf("host: negative time limit %v", l.Timeout)
	case l.Output < 0:
		return fmt.Errorf("host: negative output limit %d", l.Output)
	case l.HTTPResponse < 0:
		return fmt.Errorf("host: negative HTTP response limit %d", l.HTTPResponse)
	case l.KVValue < 0:
		return fmt.Errorf("host: negative kv value limit %d", l.KVValue)
	case l.HTTPRequest < 0:
		return fmt.Errorf("host: negative HTTP request limit %d", l.HTTPRequest)
	case l.KVNamespace < 0:
		return fmt.Errorf("host: negative kv namespace limit %d", l.KVNamespace)
	case l.Stack < 0 || l.Stack > 1<<30:
		return fmt.Errorf("host: stack limit %d out of range (0 to 1 GiB)", l.Stack)
	case l.Tables < 0 || l.Tables > 1<<28:
		return fmt.Errorf("host: table limit %d out of range (0 to 2^28 entries)", l.Tables)
	case l.ErrorText < 0:
		return fmt.Errorf("host: negative error text limit %d", l.ErrorText)
	case l.CallDepth < 0:
		return fmt.Errorf("host: negative call depth limit %d", l.CallDepth)
	case l.CallTreeMemory < 0:
		return fmt.Errorf("host: negative call tree memory limit %d", l.CallTreeMemory)
	case l.OpenFiles < 0:
		return fmt.Errorf("host: negative open file limit %d", l.OpenFiles)
	case l.FSWrite < 0:
		return fmt.Errorf("host: negative fs write limit %d", l.FSWrite)
	}
	return nil
}

// The limits a LimitError names.
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
	// CompileWork caps the sum over functions of Branches squared
	// (1.2e9, about 16 s of compilation).
	CompileWork int64
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
}

func (l ModuleLimits) wasmbin() wasmbin.Limits {
	return wasmbin.Limits{
		ModuleBytes: l.Bytes, Functions: l.Functions, FunctionBytes: l.FunctionBytes, Locals: l.Locals,
		StackHeight: l.StackHeight, Nesting: l.Nesting, Branches: l.Branches, CompileWork: l.CompileWork,
		LocalsBranches: l.LocalsBranches, ElementEntries: l.ElementEntries, TypeValues: l.TypeValues,
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
