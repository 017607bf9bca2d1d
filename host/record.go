package host

import "time"

// Outcome classifies how a sandboxed call ended.
type Outcome string

// The outcomes of a call. OutcomeOK and OutcomeToolError mean the tool ran
// and produced its own result; the others mean the host refused or the
// sandbox stopped the call.
const (
	OutcomeOK          Outcome = "ok"           // the tool returned a result
	OutcomeToolError   Outcome = "tool_error"   // the tool returned an error result or a failure code
	OutcomeInvalidArgs Outcome = "invalid_args" // arguments did not match the input schema; nothing ran
	OutcomeDenied      Outcome = "denied"       // the tool tried something it was not granted
	OutcomeLimit       Outcome = "limit"        // the call went past a limit
	OutcomeTrap        Outcome = "trap"         // the module crashed
	OutcomeBadOutput   Outcome = "bad_output"   // the module's output was not a valid result
	OutcomeCancelled   Outcome = "cancelled"    // the caller's context ended first
	OutcomeFailed      Outcome = "failed"       // the host could not run the call (instantiation, I/O)
)

// Ran reports whether the tool ran to completion and produced its own
// result (possibly an error result), as opposed to being refused or stopped.
func (o Outcome) Ran() bool { return o == OutcomeOK || o == OutcomeToolError }

// CallRecord describes one sandboxed call, for tracing. The host passes one
// to Options.OnCall after every call of a module's tool.
type CallRecord struct {
	Start    time.Time
	Duration time.Duration
	Module   string // the module's name
	SHA256   string // hex digest of the module's bytes
	ABI      ABI
	Tool     string
	CallID   string
	// Grants are the module's grants; Used lists those the call exercised
	// (a matched net: grant, a kv: namespace, a read env: variable,
	// clock, random).
	Grants []string
	Used   []string
	// Denied lists the actions that were refused, with the reason.
	Denied []string
	// MemoryPeak is the largest memory the instance held, in bytes
	// (linear memory plus Extism blocks).
	MemoryPeak  int64
	InputBytes  int
	OutputBytes int
	// Pooled is true when a pre-initialised instance served the call.
	Pooled  bool
	Outcome Outcome
	// Error is the error text the model saw, when the outcome is not OK.
	Error string
}
