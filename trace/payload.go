package trace

// Payload is the typed content of an [Event]. Each [Type] of this package
// has one payload family, named in its comment: [Run], [ModelCall],
// [ToolCall], [Guard], [Hook], [Memory], [Sandbox] or [Synth]. An event of
// any other type (an embedder's own, or one a newer version writes)
// carries [Fields]. The set is closed: a family's struct holds exactly the
// fields its types set, so a tool event cannot be given a token budget.
//
// A payload's JSON form (its MarshalJSON) is the "payload" object of a
// trace line: the fields that are set, zero values left out. The
// [Tracer] redacts every string of a payload before any sink sees it.
type Payload interface {
	// appendJSON writes the payload as one JSON object.
	appendJSON(b []byte) []byte
	// redacted returns a copy with every string passed through Redact,
	// or nil when nothing changed. It never modifies the receiver's
	// slices or maps.
	redacted() Payload
}

// Run is the payload of run_start, run_end, cancelled, max_steps_exceeded,
// token_budget_exceeded and checkpoint.
type Run struct {
	// Step is the step the run was at (cancelled, max_steps_exceeded,
	// token_budget_exceeded, checkpoint).
	Step int `json:"step,omitempty"`
	// Steps is the number of steps the run took (run_end).
	Steps int `json:"steps,omitempty"`
	// Status is how the run ended (run_end: "ok", "max_steps", "error", …)
	// or how a checkpoint went ("ok", "error").
	Status string `json:"status,omitempty"`
	// Model, MaxSteps, MessageCount (the transcript's length), ToolCount
	// (the tools offered), Streaming and ResumedFromStep describe the run
	// (run_start; MaxSteps also on max_steps_exceeded).
	Model           string `json:"model,omitempty"`
	MaxSteps        int    `json:"max_steps,omitempty"`
	MessageCount    int    `json:"message_count,omitempty"`
	ToolCount       int    `json:"tool_count,omitempty"`
	Streaming       bool   `json:"streaming,omitempty"`
	ResumedFromStep int    `json:"resumed_from_step,omitempty"`
	// Output is a preview of the run's final answer (run_end).
	Output string `json:"output_preview,omitempty"`
	// Error describes a failure (run_end, checkpoint).
	Error string `json:"error,omitempty"`
	// Token counts of the whole run (run_end).
	InputTokens  int64 `json:"input_tokens,omitempty"`
	OutputTokens int64 `json:"output_tokens,omitempty"`
	CachedTokens int64 `json:"cached_tokens,omitempty"`
	// TokenBudget and Spent (token_budget_exceeded).
	TokenBudget int64 `json:"token_budget,omitempty"`
	Spent       int64 `json:"spent,omitempty"`
	// ShadowGuards and WouldBlock report shadow mode (run_end): the keys
	// are absent when shadow mode is off.
	ShadowGuards bool `json:"shadow_guards,omitempty"`
	WouldBlock   int  `json:"would_block,omitempty"`
	// Tainted reports the run's taint (run_end).
	Tainted bool `json:"tainted,omitempty"`
	// EarlyToolCalls counts the results of calls started early that the
	// run used (run_end); the key is absent when no call started early.
	EarlyToolCalls int `json:"early_tool_calls,omitempty"`
}

// ModelCall is the payload of llm_request, llm_response, cache_hit and
// cache_miss.
type ModelCall struct {
	Step int `json:"step,omitempty"`
	// Status is "error" when the call failed (llm_response), "hit" or
	// "miss" (cache_hit, cache_miss).
	Status string `json:"status,omitempty"`
	// MessageCount, ToolCount and Streaming describe the request
	// (llm_request).
	MessageCount int  `json:"message_count,omitempty"`
	ToolCount    int  `json:"tool_count,omitempty"`
	Streaming    bool `json:"streaming,omitempty"`
	// Content is a preview of the model's text (llm_response).
	Content string `json:"content_preview,omitempty"`
	// Error describes a failed call (llm_response).
	Error string `json:"error,omitempty"`
	// DurationMS is the call's wall time (llm_response).
	DurationMS float64 `json:"duration_ms,omitempty"`
	// ToolCallCount, HasReasoning, FinishReason and the token counts
	// describe the answer (llm_response).
	ToolCallCount int    `json:"tool_call_count,omitempty"`
	HasReasoning  bool   `json:"has_reasoning,omitempty"`
	FinishReason  string `json:"finish_reason,omitempty"`
	InputTokens   int64  `json:"input_tokens,omitempty"`
	OutputTokens  int64  `json:"output_tokens,omitempty"`
	CachedTokens  int64  `json:"cached_tokens,omitempty"`
}

// ToolCall is the payload of tool_call_start, tool_call_end,
// tool_call_early_start, tool_call_early_discarded, outcome_unknown,
// journal_replay, result_truncated and tainted: Step, Name and CallID
// name the call, the other fields are those each type documents.
type ToolCall struct {
	Step int `json:"step,omitempty"`
	// Status is "ok" or "error" (tool_call_end).
	Status string `json:"status,omitempty"`
	// Name is the tool's name; CallID the call's id.
	Name   string `json:"name,omitempty"`
	CallID string `json:"call_id,omitempty"`
	// Arguments is a preview of the call's JSON arguments (tool_call_start).
	Arguments string `json:"arguments_preview,omitempty"`
	// Content is a preview of the tool's result (tool_call_end).
	Content string `json:"content_preview,omitempty"`
	// Error describes an infrastructure failure (tool_call_end).
	Error string `json:"error,omitempty"`
	// Infrastructure marks a tool failure that was a Go error (the tool's
	// infrastructure failed) rather than a result the tool reported
	// (tool_call_end).
	Infrastructure bool `json:"infrastructure,omitempty"`
	// Reason is why a call started early was discarded
	// (tool_call_early_discarded).
	Reason string `json:"reason,omitempty"`
	// DurationMS is the call's wall time (tool_call_end).
	DurationMS float64 `json:"duration_ms,omitempty"`
	// Chars is the result's length in runes and Limit the width bound
	// (result_truncated).
	Chars int `json:"chars,omitempty"`
	Limit int `json:"limit,omitempty"`
}

// Guard is the payload of tool_policy_deny, approval_required,
// approval_decision, loop_guard_block, loop_guard_would_block,
// trifecta_block, trifecta_would_block, trifecta_approval_required,
// tools_disabled and guardrail: a check that refused, paused or changed
// something.
type Guard struct {
	Step int `json:"step,omitempty"`
	// Status is what a guardrail did: "redact", "correct" or "block"
	// (guardrail).
	Status string `json:"status,omitempty"`
	// Name is the tool's name, or the guardrail's (guardrail); CallID the
	// call's id.
	Name   string `json:"name,omitempty"`
	CallID string `json:"call_id,omitempty"`
	// Reason is why a guard, policy or human refused or paused a call.
	Reason string `json:"reason,omitempty"`
	// Verdict is a human decision: "approve" or "reject"
	// (approval_decision).
	Verdict string `json:"verdict,omitempty"`
	// Names lists the tools awaiting approval (approval_required).
	Names []string `json:"names,omitempty"`
	// Repeats counts the call's repetitions (loop_guard_block,
	// loop_guard_would_block).
	Repeats int `json:"repeats,omitempty"`
	// Limit is Bounds.MaxToolCalls (tools_disabled).
	Limit int `json:"limit,omitempty"`
	// Stage is what a guardrail checked ("input", "output",
	// "tool_result"), and Tool the tool whose result it was (guardrail).
	// They are written inside "attrs": {"stage", "tool"}.
	Stage string `json:"-"`
	Tool  string `json:"-"`
}

// Hook is the payload of tool_hook, post_turn_hook_invoked,
// post_turn_hook_correction and post_turn_hook_error.
type Hook struct {
	Step int `json:"step,omitempty"`
	// Status is what a tool hook did: "deny", "rewrite" or "error"
	// (tool_hook).
	Status string `json:"status,omitempty"`
	// Name is the tool's name and CallID the call's id (tool_hook).
	Name   string `json:"name,omitempty"`
	CallID string `json:"call_id,omitempty"`
	// Content is a preview of the correction (post_turn_hook_correction).
	Content string `json:"content_preview,omitempty"`
	// Error describes a hook's failure (tool_hook, post_turn_hook_error).
	Error string `json:"error,omitempty"`
	// Reason is why a tool hook denied a call (tool_hook).
	Reason string `json:"reason,omitempty"`
	// Corrections counts the corrections the run has had
	// (post_turn_hook_invoked).
	Corrections int `json:"corrections,omitempty"`
}

// Memory is the payload of context_budget, context_pruned,
// memory_compacted, memory_error and retrieved.
type Memory struct {
	Step int `json:"step,omitempty"`
	// Status is what the run did (context_budget: "pruned" or "compacted,
	// pruned").
	Status string `json:"status,omitempty"`
	// MessageCount is the transcript's length before compaction
	// (memory_compacted).
	MessageCount int `json:"message_count,omitempty"`
	// Error describes a failed compaction (memory_error).
	Error string `json:"error,omitempty"`
	// InputTokens is the last model call's input (context_budget); the
	// three counts are the compaction's own usage (memory_compacted).
	InputTokens  int64 `json:"input_tokens,omitempty"`
	OutputTokens int64 `json:"output_tokens,omitempty"`
	CachedTokens int64 `json:"cached_tokens,omitempty"`
	// Pruned counts the tool results dropped from the model's view,
	// CharsSaved their length, Batch the pruning batch (context_pruned).
	Pruned     int `json:"pruned,omitempty"`
	CharsSaved int `json:"chars_saved,omitempty"`
	// Kept is the transcript's length after compaction
	// (memory_compacted), or the tool results kept in full
	// (context_budget, context_pruned).
	Kept  int `json:"kept,omitempty"`
	Batch int `json:"batch,omitempty"`
	// Limit is the model's context window in tokens (context_budget), or
	// the retrieval block's bound in bytes (retrieved).
	Limit int `json:"limit,omitempty"`
	// Query is the question retrieved for, as a preview (retrieved).
	Query string `json:"query,omitempty"`
	// Sources are the passages the block holds, best first, each
	// "SOURCE BYTESB" with " untrusted" after when it was framed as data
	// (retrieved); Bytes is the block's size.
	Sources []string `json:"sources,omitempty"`
	Bytes   int      `json:"bytes,omitempty"`
}

// Sandbox is the payload of sandbox_call: one call of a sandboxed tool as
// the host saw it. Its JSON form is
//
//	{"name","call_id","error","duration_ms","attrs":{"abi","denied","grants","grants_used",
//	 "memory_peak","module","outcome","pooled","sha256"}}
//
// with every key of "attrs" but "denied" always present: memory_peak a
// number, pooled a boolean, the lists arrays (format 2; format 1 wrote
// them as strings, see the package doc).
type Sandbox struct {
	// Name is the tool's name; CallID the call's id.
	Name   string
	CallID string
	// Error is the error text the model saw, when the outcome is not "ok".
	Error string
	// DurationMS is the call's wall time in the sandbox.
	DurationMS float64
	// Module is the module's name, SHA256 the hex digest of its bytes,
	// ABI "extism" or "wasi-command".
	Module string
	SHA256 string
	ABI    string
	// Outcome is how the call ended (host.Outcome: "ok", "tool_error",
	// "denied", "limit", …).
	Outcome string
	// Grants are the module's grants, GrantsUsed those the call exercised,
	// Denied the actions refused, each with its reason.
	Grants     []string
	GrantsUsed []string
	Denied     []string
	// MemoryPeak is the largest memory the instance held, in bytes.
	MemoryPeak int64
	// Pooled is true when a pre-initialised instance served the call.
	Pooled bool
}

// Synth is the payload of every synth_<stage> event (synth_write,
// synth_build, …): one step of building a model-written tool. Language and
// SHA256 are written inside "attrs" ("language" always).
type Synth struct {
	// Attempt is the Synthesize attempt (from 1), 0 outside Synthesize.
	Attempt int `json:"step,omitempty"`
	// Status is "ok", "rejected" or "error".
	Status string `json:"status,omitempty"`
	// Name is the tool's name, once known.
	Name string `json:"name,omitempty"`
	// Detail is a short summary: "3 of 3 passed", a staging path.
	Detail string `json:"content_preview,omitempty"`
	Error  string `json:"error,omitempty"`
	// DurationMS is the step's wall time.
	DurationMS float64 `json:"duration_ms,omitempty"`
	// The writer model's usage (write step), when reported.
	InputTokens  int64 `json:"input_tokens,omitempty"`
	OutputTokens int64 `json:"output_tokens,omitempty"`
	CachedTokens int64 `json:"cached_tokens,omitempty"`
	// Language is the back-end's language; SHA256 the module's digest
	// (build, load, staging steps).
	Language string `json:"-"`
	SHA256   string `json:"-"`
}

// Fields is the payload of an event of a type this package does not know:
// an embedder's own events, and those a newer version of this package
// writes, which decode with every field kept. Values are what
// encoding/json reads and writes; a decoded number is a json.Number, so
// none loses precision. Keys are written sorted. The [Tracer] redacts
// every string, and replaces the value of a secret-named key ("token",
// "password", …) whole.
type Fields map[string]any

// MarshalJSON returns the payload's JSON form, the "payload" of a trace line.
func (p Run) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }

// MarshalJSON returns the payload's JSON form, the "payload" of a trace line.
func (p ModelCall) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }

// MarshalJSON returns the payload's JSON form, the "payload" of a trace line.
func (p ToolCall) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }

// MarshalJSON returns the payload's JSON form, the "payload" of a trace line.
func (p Guard) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }

// MarshalJSON returns the payload's JSON form, the "payload" of a trace line.
func (p Hook) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }

// MarshalJSON returns the payload's JSON form, the "payload" of a trace line.
func (p Memory) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }

// MarshalJSON returns the payload's JSON form, the "payload" of a trace line.
func (p Sandbox) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }

// MarshalJSON returns the payload's JSON form, the "payload" of a trace line.
func (p Synth) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }

// MarshalJSON returns the payload's JSON form, the "payload" of a trace line.
func (p Fields) MarshalJSON() ([]byte, error) { return p.appendJSON(nil), nil }
