package trace

import "time"

// Type names a lifecycle event. The names are stable: trace files, the
// summariser and the OpenTelemetry exporter depend on them. Each type of
// this package has one payload family (the type's comment names it); an
// embedder's own types carry [Fields].
type Type string

// Span openers and closers. A run is a tree: run_start is the root (or the
// child of the tool call that delegated to it), each model call is a child
// of the run, each tool call a child of the model call that asked for it.
const (
	// RunStart opens a run ([Run]: Model, MaxSteps, MessageCount,
	// ToolCount, Streaming, ResumedFromStep).
	RunStart Type = "run_start"
	// RunEnd closes the run (parent: run_start; [Run]: Status, Steps,
	// Output, token counts, ShadowGuards, WouldBlock, Tainted,
	// EarlyToolCalls, Error).
	RunEnd Type = "run_end"
	// LLMRequest opens a model call (parent: run_start; [ModelCall]: Step,
	// MessageCount, ToolCount, Streaming).
	LLMRequest Type = "llm_request"
	// LLMResponse closes it (parent: llm_request; [ModelCall]: Step,
	// Content, ToolCallCount, HasReasoning, token counts, FinishReason,
	// DurationMS, or Status "error" and Error).
	LLMResponse Type = "llm_response"
	// ToolCallStart opens a tool call (parent: llm_request; [ToolCall]:
	// Step, Name, CallID, Arguments).
	ToolCallStart Type = "tool_call_start"
	// ToolCallEnd closes it (parent: tool_call_start; [ToolCall]: Step,
	// Name, CallID, Status "ok"/"error", DurationMS, Content, Infrastructure
	// and Error when the tool's infrastructure failed).
	ToolCallEnd Type = "tool_call_end"
)

// Tool call events besides the span's opener and closer ([ToolCall]: Step,
// Name, CallID, and what each names).
const (
	// ToolCallEarlyStart: a call of an idempotent tool passed every check
	// while the model was still streaming and started before the tool
	// phase (parent: llm_request). Its tool_call_start follows when it
	// actually runs, so a tool call span may open before llm_response.
	ToolCallEarlyStart Type = "tool_call_early_start"
	// ToolCallEarlyDiscarded: a call started early was cancelled and its
	// result thrown away (parent: llm_request; Reason): the final answer
	// did not contain it, the tool phase refused or paused it, or the turn
	// ended first. The model never sees such a result.
	ToolCallEarlyDiscarded Type = "tool_call_early_discarded"
	// OutcomeUnknown: on resume, a call was found started but not finished
	// in the journal and was not run again (parent: llm_request).
	OutcomeUnknown Type = "outcome_unknown"
	// JournalReplay: on resume, a call's result was taken from the journal
	// instead of running it again (parent: llm_request).
	JournalReplay Type = "journal_replay"
	// NestedReplay: a tool running again after an approval pause made a
	// call it had made before the pause, and got its recorded result
	// instead of running it again (parent: the calling tool's span).
	NestedReplay Type = "nested_replay"
	// NestedDiverged: a tool running again made, at the place of a
	// recorded call, a different one; it was refused (parent: the calling
	// tool's span; Error says how it differed).
	NestedDiverged Type = "nested_diverged"
	// ResultTruncated: a tool result exceeded the width bound (parent:
	// llm_request of the turn, as a result taken from the journal has no
	// tool call span; Chars, Limit).
	ResultTruncated Type = "result_truncated"
	// Tainted: the run ingested untrusted content (parent: run_start).
	Tainted Type = "tainted"
	// SandboxCall: one call of a sandboxed (WebAssembly) tool, written by
	// the host's observer (sandbox.TraceSandboxCalls; parent: the tool
	// call's span; [Sandbox]).
	SandboxCall Type = "sandbox_call"
)

// Response cache events ([ModelCall]), written by llm/cache, which sees
// no run: they carry no run id or parent. Status is "hit" or "miss";
// MessageCount, ToolCount and Streaming describe the request.
const (
	// CacheHit: a request was answered from the cache, with no provider
	// call; the token counts are what the replayed answer cost when the
	// provider gave it: what the hit saved.
	CacheHit Type = "cache_hit"
	// CacheMiss: the request went to the provider.
	CacheMiss Type = "cache_miss"
)

// Guard, policy and approval events (parent: llm_request of the turn, or
// the run for a guardrail on the prompt; [Guard]).
const (
	// PolicyDeny: the host policy refused a call (Step, Name, CallID,
	// Reason).
	PolicyDeny Type = "tool_policy_deny"
	// ApprovalRequired: the run paused for human approval (Step, Names,
	// CallID of the first pending call, Reason).
	ApprovalRequired Type = "approval_required"
	// ApprovalDecision: a human decision applied on resume (Step, Name,
	// CallID, Verdict "approve"/"reject", Reason).
	ApprovalDecision Type = "approval_decision"
	// ApprovalMismatch: a decision was given for a call id whose call is
	// not the one the person was shown (another tool or other arguments);
	// the call was refused (Step, Name, CallID, Reason).
	ApprovalMismatch Type = "approval_mismatch"
	// LoopGuardBlock: the loop guard refused a repeated call (Step, Name,
	// CallID, Repeats).
	LoopGuardBlock Type = "loop_guard_block"
	// LoopGuardWouldBlock: the same, in shadow mode (not enforced).
	LoopGuardWouldBlock Type = "loop_guard_would_block"
	// TrifectaBlock: an egress call after untrusted content was refused
	// (Step, Name, CallID).
	TrifectaBlock Type = "trifecta_block"
	// TrifectaWouldBlock: the same, in shadow mode (not enforced).
	TrifectaWouldBlock Type = "trifecta_would_block"
	// TrifectaApprovalRequired: an egress call after untrusted content
	// needs approval (Step, Name, CallID).
	TrifectaApprovalRequired Type = "trifecta_approval_required"
	// ToolsDisabled: the run reached Bounds.MaxToolCalls (Step, Limit): from
	// this model call on, tools are withdrawn and the model is asked to
	// answer; with Name and CallID, a call of the turn past the bound was
	// refused.
	ToolsDisabled Type = "tools_disabled"
	// Guardrail: a guardrail redacted, corrected or blocked (Step, Name the
	// guardrail's, Status "redact", "correct" or "block", Reason, Stage,
	// Tool).
	Guardrail Type = "guardrail"
)

// Hook events ([Hook]): the embedder's hooks around tool calls and turns.
const (
	// ToolHook: a tool hook denied a call, rewrote its arguments, or
	// failed (parent: llm_request; Step, Name, CallID, Status "deny",
	// "rewrite" or "error", Reason or Error).
	ToolHook Type = "tool_hook"
	// HookInvoked: the post-turn hook was called (parent: llm_request;
	// Step, Corrections).
	HookInvoked Type = "post_turn_hook_invoked"
	// HookCorrection: the hook injected a correction (parent: the
	// post_turn_hook_invoked event; Step, Content).
	HookCorrection Type = "post_turn_hook_correction"
	// HookError: the hook failed or panicked; the run went on as if it had
	// returned nothing (Step, Error).
	HookError Type = "post_turn_hook_error"
)

// Context and memory events ([Memory]): what the run did to keep the
// transcript within the model's window.
const (
	// ContextBudget: a model call's input tokens reached the context
	// window's share; the run compacted its memory and prunes old tool
	// results from now on (parent: the run; Step, InputTokens, Limit the
	// window, Kept the tool results kept in full, Status what was done).
	ContextBudget Type = "context_budget"
	// ContextPruned: old tool results were dropped from the view sent to the
	// model (parent: llm_request; Step, Pruned, CharsSaved, Kept, Batch).
	ContextPruned Type = "context_pruned"
	// Retrieved: passages were retrieved for the current question and put
	// before the model in one block (parent: llm_request; Step, Query,
	// Sources, Bytes, Limit the block's bound in bytes, Kept the passages
	// shown, Pruned those found but left out: already in the context, or
	// past the bound; Error when the retrieval failed, wholly or in part).
	Retrieved Type = "retrieved"
	// MemoryCompacted: memory compacted the transcript at run start
	// (parent: run_start; MessageCount before, Kept after, token counts).
	MemoryCompacted Type = "memory_compacted"
	// MemoryError: compaction failed; the run went on with the original
	// transcript (Step when it happened mid-run, Error).
	MemoryError Type = "memory_error"
)

// How a run stopped, and its checkpoints (parent: run_start; [Run]).
const (
	// Cancelled: the caller cancelled the run (Step).
	Cancelled Type = "cancelled"
	// MaxStepsExceeded: the step bound stopped the run (Step, MaxSteps).
	MaxStepsExceeded Type = "max_steps_exceeded"
	// TokenBudgetExceeded: the token budget stopped the run (Step,
	// TokenBudget, Spent).
	TokenBudgetExceeded Type = "token_budget_exceeded"
	// Checkpoint: the run state was handed to the checkpoint callback
	// (Step, Status "ok"/"error", Error).
	Checkpoint Type = "checkpoint"
)

// Every "synth_<stage>" type (synth_write, synth_build, …) is a step of
// building a model-written tool, written by sandbox.TraceSynth; its
// payload is [Synth].
const synthPrefix = "synth_"

// Event is one trace event. Its JSON form is one line of a trace file:
// {"type","span_id","parent_id","run_id","ts","payload"}.
type Event struct {
	Type Type `json:"type"`
	// SpanID identifies this event; closers and children refer to it.
	SpanID string `json:"span_id"`
	// ParentID is the span this event belongs to; "" for a root.
	ParentID string `json:"parent_id,omitempty"`
	// RunID identifies the run that emitted the event.
	RunID string `json:"run_id,omitempty"`
	// Time is when the event was emitted.
	Time time.Time `json:"ts"`
	// Payload holds the event's fields: the payload family of its Type
	// (see each [Type]), [Fields] for a type this package does not know,
	// or nil for none (written as {}).
	Payload Payload `json:"payload"`
}
