package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Limits bound what one call of a module may use: the one limits type of
// autoagent, which an approval records (Entry.Limits, the "limits" object
// of the manifest file) and the host enforces (host.Limits is this type).
// A zero field takes the host's default ([DefaultLimits]); a call past a
// limit ends with a *host.LimitError result, its instance is discarded
// and the host keeps serving. host/ABI.md lists each limit, its default,
// its key in the manifest and what a guest sees past it.
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
	// KVWrite caps the bytes one call writes under its kv: grants (each
	// kv_set or kv_delete its key, its value and 64 bytes). A rewrite of
	// one key does not grow the namespace, so the namespace quota does not
	// bound it: this bounds the disk traffic a call causes (a call
	// rewriting one 1 MiB value wrote 1.2 GB in 10 s).
	KVWrite int64
}

// DefaultLimits returns the limits of docs/ARCHITECTURE.md §4 and of
// host/ABI.md, which a host applies to every zero field of its own
// limits and of a module's. It is a function, not a variable, so that no
// code in the process can lower (or raise) the sandbox's defaults behind
// the embedder's back; to change them, set host.Options.Limits.
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
	KVWrite:        64 << 20,
}

// MaxMemory is the largest memory limit: a 32-bit module addresses 4 GiB.
const MaxMemory = 4 << 30

// IsZero reports whether no limit is set.
func (l Limits) IsZero() bool { return l == Limits{} }

// WithDefaults returns l with every zero field taken from d.
func (l Limits) WithDefaults(d Limits) Limits {
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
	fill(&l.KVWrite, d.KVWrite)
	return l
}

// Validate reports a negative or out-of-range limit, naming it and its
// key in the manifest.
func (l Limits) Validate() error {
	switch {
	case l.Memory < 0 || l.Memory > MaxMemory:
		return fmt.Errorf("memory limit %d bytes (memory_mb) out of range: want 0 (the default) to 4 GiB", l.Memory)
	case l.Timeout < 0:
		return fmt.Errorf("negative time limit %v (timeout_ms)", l.Timeout)
	case l.Stack < 0 || l.Stack > 1<<30:
		return fmt.Errorf("stack limit %d (stack_bytes) out of range: want 0 (the default) to 1 GiB", l.Stack)
	case l.Tables < 0 || l.Tables > 1<<28:
		return fmt.Errorf("table limit %d (table_entries) out of range: want 0 (the default) to 2^28 entries", l.Tables)
	case l.CallDepth < 0:
		return fmt.Errorf("negative call depth limit %d (call_depth)", l.CallDepth)
	case l.OpenFiles < 0:
		return fmt.Errorf("negative open file limit %d (open_files)", l.OpenFiles)
	}
	for _, f := range []struct {
		v         int64
		name, key string
	}{
		{l.Output, "output", "output_bytes"},
		{l.HTTPResponse, "HTTP response", "http_response_bytes"},
		{l.KVValue, "kv value", "kv_value_bytes"},
		{l.HTTPRequest, "HTTP request", "http_request_bytes"},
		{l.KVNamespace, "kv namespace", "kv_namespace_bytes"},
		{l.ErrorText, "error text", "error_text_bytes"},
		{l.CallTreeMemory, "call tree memory", "call_tree_memory_bytes"},
		{l.FSWrite, "fs write", "fs_write_bytes"},
		{l.KVWrite, "kv write", "kv_write_bytes"},
	} {
		if f.v < 0 {
			return fmt.Errorf("negative %s limit %d (%s)", f.name, f.v, f.key)
		}
	}
	return nil
}

// limitsJSON is the manifest's form of Limits: the first four keys are
// the original format's, in its order, so that what an older autoagent
// wrote (and hashed into the audit log) is written the same. Memory is
// in MiB when it is a whole number of them, else in bytes; the time limit
// is in milliseconds, rounded up.
type limitsJSON struct {
	MemoryMB          int64 `json:"memory_mb,omitempty"`
	TimeoutMS         int64 `json:"timeout_ms,omitempty"`
	OutputBytes       int64 `json:"output_bytes,omitempty"`
	HTTPResponseBytes int64 `json:"http_response_bytes,omitempty"`

	MemoryBytes         int64 `json:"memory_bytes,omitempty"`
	KVValueBytes        int64 `json:"kv_value_bytes,omitempty"`
	HTTPRequestBytes    int64 `json:"http_request_bytes,omitempty"`
	KVNamespaceBytes    int64 `json:"kv_namespace_bytes,omitempty"`
	StackBytes          int64 `json:"stack_bytes,omitempty"`
	TableEntries        int64 `json:"table_entries,omitempty"`
	ErrorTextBytes      int64 `json:"error_text_bytes,omitempty"`
	CallDepth           int64 `json:"call_depth,omitempty"`
	CallTreeMemoryBytes int64 `json:"call_tree_memory_bytes,omitempty"`
	OpenFiles           int64 `json:"open_files,omitempty"`
	FSWriteBytes        int64 `json:"fs_write_bytes,omitempty"`
	KVWriteBytes        int64 `json:"kv_write_bytes,omitempty"`
}

// limitKeys are limitsJSON's keys, for the manifest parser's shape.
var limitKeys = []string{
	"memory_mb", "timeout_ms", "output_bytes", "http_response_bytes",
	"memory_bytes", "kv_value_bytes", "http_request_bytes", "kv_namespace_bytes", "stack_bytes",
	"table_entries", "error_text_bytes", "call_depth", "call_tree_memory_bytes", "open_files", "fs_write_bytes",
	"kv_write_bytes",
}

func (l Limits) toJSON() limitsJSON {
	j := limitsJSON{
		TimeoutMS:   int64((l.Timeout + time.Millisecond - 1) / time.Millisecond),
		OutputBytes: l.Output, HTTPResponseBytes: l.HTTPResponse,
		KVValueBytes: l.KVValue, HTTPRequestBytes: l.HTTPRequest, KVNamespaceBytes: l.KVNamespace,
		StackBytes: l.Stack, TableEntries: l.Tables, ErrorTextBytes: l.ErrorText,
		CallDepth: int64(l.CallDepth), CallTreeMemoryBytes: l.CallTreeMemory,
		OpenFiles: int64(l.OpenFiles), FSWriteBytes: l.FSWrite, KVWriteBytes: l.KVWrite,
	}
	if l.Timeout < 0 {
		j.TimeoutMS = int64(l.Timeout / time.Millisecond)
	}
	if l.Memory%(1<<20) == 0 {
		j.MemoryMB = l.Memory >> 20
	} else {
		j.MemoryBytes = l.Memory
	}
	return j
}

// limits converts the manifest's form, refusing values that do not fit.
func (j limitsJSON) limits() (Limits, error) {
	switch {
	case j.MemoryMB != 0 && j.MemoryBytes != 0:
		return Limits{}, fmt.Errorf("memory_mb %d and memory_bytes %d: set one of them", j.MemoryMB, j.MemoryBytes)
	case j.MemoryMB < 0 || j.MemoryMB > MaxMemory>>20:
		return Limits{}, fmt.Errorf("memory_mb %d: want 0 (default) to %d", j.MemoryMB, MaxMemory>>20)
	case j.TimeoutMS < 0 || j.TimeoutMS > math.MaxInt64/int64(time.Millisecond):
		return Limits{}, fmt.Errorf("timeout_ms %d: want 0 (default) or more, up to %d", j.TimeoutMS, math.MaxInt64/int64(time.Millisecond))
	case j.CallDepth > math.MaxInt32 || j.OpenFiles > math.MaxInt32:
		return Limits{}, fmt.Errorf("call_depth %d or open_files %d: want at most %d", j.CallDepth, j.OpenFiles, math.MaxInt32)
	}
	l := Limits{
		Memory: j.MemoryMB<<20 | j.MemoryBytes, Timeout: time.Duration(j.TimeoutMS) * time.Millisecond,
		Output: j.OutputBytes, HTTPResponse: j.HTTPResponseBytes,
		KVValue: j.KVValueBytes, HTTPRequest: j.HTTPRequestBytes, KVNamespace: j.KVNamespaceBytes,
		Stack: j.StackBytes, Tables: j.TableEntries, ErrorText: j.ErrorTextBytes,
		CallDepth: int(j.CallDepth), CallTreeMemory: j.CallTreeMemoryBytes,
		OpenFiles: int(j.OpenFiles), FSWrite: j.FSWriteBytes, KVWrite: j.KVWriteBytes,
	}
	return l, l.Validate()
}

// MarshalJSON writes the manifest's form: {"memory_mb":64,"timeout_ms":5000},
// zero (default) limits left out.
func (l Limits) MarshalJSON() ([]byte, error) { return json.Marshal(l.toJSON()) }

// UnmarshalJSON reads the manifest's form, refusing unknown keys and
// values out of range.
func (l *Limits) UnmarshalJSON(b []byte) error {
	var j limitsJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	v, err := j.limits()
	if err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	*l = v
	return nil
}
