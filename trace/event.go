package trace

import "time"

// Type names a lifecycle event. The names are stable: trace files, the
// summariser and the OpenTelemetry exporter depend on them.
type Type string

// Span openers and closers. A run is a tree: run_start is the root (or the
// child of the tool call that delegated to it), each model call is a child
// of the run, each tool call a child of the model call that asked for it.
const (
	// RunStart opens a run (payload: Model, MaxSteps, MessageCount,
	// ToolCount, Streaming, ResumedFromStep).
	RunStart Type = "run_start"
	// RunEnd closes the run (parent: run_start; payload: Status, Steps,
	// Output, token counts, ShadowGuards, WouldBlock, EarlyToolCalls,
	// Error).
	RunEnd Type = "run_end"
	// LLMRequest opens a model call (parent: run_start; payload: Step,
	// MessageCount, ToolCount, Streaming).
	LLMRequest Type = "llm_request"
	// LLMResponse closes it (parent: llm_request; payload: Step, Content,
	// ToolCallCount, HasReasoning, token counts, FinishReason, DurationMS,
	// or Status "error" and Error).
	LLMResponse Type = "llm_response"
	// ToolCallStart opens a tool call (parent: llm_request; payload: Name,
	// CallID, Arguments, Step).
	ToolCallStart Type = "tool_call_start"
	// ToolCallEnd closes it (parent: tool_call_start; payload: Name,
	// CallID, Status "ok"/"error", DurationMS, Content, Infrastructure and
	// Error when the tool's infrastructure failed).
	ToolCallEnd Type = "tool_call_end"
)

// Guard, policy and approval events (parent: llm_request of the turn).
const (
	// PolicyDeny: the host policy refused a call (Name, CallID, Step, Reason).
	PolicyDeny Type = "tool_policy_deny"
	// ApprovalRequired: the run paused for human approval (Step, Names,
	// CallID of the first pending call, Reason).
	ApprovalRequired Type = "approval_required"
	// ApprovalDecision: a human decision applied on resume (Name, CallID,
	// Verdict "approve"/"reject", Reason).
	ApprovalDecision Type = "approval_decision"
	// LoopGuardBlock: the loop guard refused a repeated call (Name, CallID,
	// Step, Repeats).
	LoopGuardBlock Type = "loop_guard_block"
	// LoopGuardWouldBlock: the same, in shadow mode (not enforced).
	LoopGuardWouldBlock Type = "loop_guard_would_block"
	// TrifectaBlock: an egress call after untrusted content was refused.
	TrifectaBlock Type = "trifecta_block"
	// TrifectaWouldBlock: the same, in shadow mode (not enforced).
	TrifectaWouldBlock Type = "trifecta_would_block"
	// TrifectaApprovalRequired: an egress call after untrusted content
	// needs approval.
	TrifectaApprovalRequired Type = "trifecta_approval_required"
	// OutcomeUnknown: on resume, a call was found started but not finished
	// in the journal and was not run again (Name, CallID, Step).
	OutcomeUnknown Type = "outcome_unknown"
	// JournalReplay: on resume, a call's result was taken from the journal
	// instead of running it again (Name, CallID, Step).
	JournalReplay Type = "journal_replay"
	// ToolCallEarlyStart: a call of an idempotent tool passed every check
	// while the model was still streaming and started before the tool
	// phase (Step, Name, CallID). Its tool_call_start follows when it
	// actually runs, so a tool call span may open before llm_response.
	ToolCallEarlyStart Type = "tool_call_early_start"
	// ToolCallEarlyDiscarded: a call started early was cancelled and its
	// result thrown away (Step, Name, CallID, Reason): the final answer did
	// not contain it, the tool phase refused or paused it, or the turn
	// ended first. The model never sees such a result.
	ToolCallEarlyDiscarded Type = "tool_call_early_discarded"
)

// Other events.
const (
	// Cancelled: the caller cancelled the run (parent: run_start; Step).
	Cancelled Type = "cancelled"
	// MaxStepsExceeded: the step bound stopped the run (MaxSteps).
	MaxStepsExceeded Type = "max_steps_exceeded"
	// TokenBudgetExceeded: the token budget stopped the run (TokenBudget,
	// Spent, Step).
	TokenBudgetExceeded Type = "token_budget_exceeded"
	// Guardrail: a guardrail redacted, corrected or blocked (parent: the
	// run, or the llm_request of the step; Step, Name, Status "redact",
	// "correct" or "block", Reason, Attrs stage and tool).
	Guardrail Type = "guardrail"
	// ContextBudget: a model call's input tokens reached the context
	// window's share; the run compacted its memory and prunes old tool
	// results from now on (parent: the run; Step, InputTokens, Limit the
	// window, Kept the tool results kept in full, Status what was done).
	ContextBudget Type = "context_budget"
	// ToolHook: a tool hook denied a call, rewrote its arguments, or
	// failed (parent: llm_request; Step, Name, CallID, Status "deny",
	// "rewrite" or "error", Reason or Error).
	ToolHook Type = "tool_hook"
	// ToolsDisabled: the run reached Bounds.MaxToolCalls; from this model
	// call on, tools are withdrawn and the model is asked to answer
	// (parent: llm_request; Step, Limit).
	ToolsDisabled Type = "tools_disabled"
	// ContextPruned: old tool results were dropped from the view sent to the
	// model (parent: llm_request; Step, Pruned, CharsSaved, Kept, Batch).
	ContextPruned Type = "context_pruned"
	// ResultTruncated: a tool result exceeded the width bound (parent:
	// llm_request of the turn, as a result taken from the journal has no
	// tool call span; Name, CallID, Chars, Limit).
	ResultTruncated Type = "result_truncated"
	// Tainted: the run ingested untrusted content (parent: run_start; Name,
	// CallID, Step).
	Tainted Type = "tainted"
	// HookInvoked: the post-turn hook was called (parent: llm_request;
	// Corrections).
	HookInvoked Type = "post_turn_hook_invoked"
	// HookCorrection: the hook injected a correction (parent: the
	// post_turn_hook_invoked event; Content).
	HookCorrection Type = "post_turn_hook_correction"
	// HookError: the hook failed or panicked; the run went on as if it had
	// returned nothing (Error).
	HookError Type = "post_turn_hook_error"
	// MemoryCompacted: memory compacted the transcript at run start
	// (parent: run_start; MessageCount before, Kept after, token counts).
	MemoryCompacted Type = "memory_compacted"
	// MemoryError: compaction failed; the run went on with the original
	// transcript (Error).
	MemoryError Type = "memory_error"
	// Checkpoint: the run state was handed to the checkpoint callback
	// (parent: run_start; Step, Status "ok"/"error", Error).
	Checkpoint Type = "checkpoint"
)

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
	// Payload holds the event's fields; see each [Type] for which are set.
	Payload Payload `json:"payload"`
}

// Payload holds the fields of an event. Only the fields an event type
// documents are set; the others stay zero and are left out of the JSON.
//
// Every string here is redacted by the [Tracer] before any sink sees it.
type Payload struct {
	Step            int    `json:"step,omitempty"`
	Steps           int    `json:"steps,omitempty"`
	Status          string `json:"status,omitempty"`
	Model           string `json:"model,omitempty"`
	MaxSteps        int    `json:"max_steps,omitempty"`
	MessageCount    int    `json:"message_count,omitempty"`
	ToolCount       int    `json:"tool_count,omitempty"`
	Streaming       bool   `json:"streaming,omitempty"`
	ResumedFromStep int    `json:"resumed_from_step,omitempty"`

	// Name is the tool's name (tool and guard events).
	Name string `json:"name,omitempty"`
	// CallID is the tool call's id.
	CallID string `json:"call_id,omitempty"`
	// Arguments is a preview of the call's JSON arguments.
	Arguments string `json:"arguments_preview,omitempty"`
	// Content is a preview of the model's text or the tool's result.
	Content string `json:"content_preview,omitempty"`
	// Output is a preview of the run's final answer (run_end).
	Output string `json:"output_preview,omitempty"`
	// Error describes a failure.
	Error string `json:"error,omitempty"`
	// Infrastructure marks a tool failure that was a Go error (the tool's
	// infrastructure failed) rather than a result the tool reported.
	Infrastructure bool `json:"infrastructure,omitempty"`
	// Reason is why a guard, policy or human refused or paused a call.
	Reason string `json:"reason,omitempty"`
	// Verdict is a policy or human decision: "allow", "deny", "approve",
	// "reject".
	Verdict string `json:"verdict,omitempty"`
	// Names lists the tools of a turn (approval_required).
	Names []string `json:"names,omitempty"`
	// DurationMS is the wall time of a model or tool call.
	DurationMS float64 `json:"duration_ms,omitempty"`

	ToolCallCount int    `json:"tool_call_count,omitempty"`
	HasReasoning  bool   `json:"has_reasoning,omitempty"`
	FinishReason  string `json:"finish_reason,omitempty"`
	InputTokens   int64  `json:"input_tokens,omitempty"`
	OutputTokens  int64  `json:"output_tokens,omitempty"`
	CachedTokens  int64  `json:"cached_tokens,omitempty"`
	TokenBudget   int64  `json:"token_budget,omitempty"`
	Spent         int64  `json:"spent,omitempty"`

	Repeats     int `json:"repeats,omitempty"`
	Corrections int `json:"corrections,omitempty"`
	Pruned      int `json:"pruned,omitempty"`
	CharsSaved  int `json:"chars_saved,omitempty"`
	Kept        int `json:"kept,omitempty"`
	Batch       int `json:"batch,omitempty"`
	Chars       int `json:"chars,omitempty"`
	Limit       int `json:"limit,omitempty"`

	// ShadowGuards and WouldBlock report shadow mode on run_end: the keys
	// are absent when shadow mode is off.
	ShadowGuards bool `json:"shadow_guards,omitempty"`
	WouldBlock   int  `json:"would_block,omitempty"`
	// Tainted reports the run's taint on run_end.
	Tainted bool `json:"tainted,omitempty"`
	// EarlyToolCalls counts, on run_end, the results of calls started early
	// that the run used; the key is absent when no call started early.
	EarlyToolCalls int `json:"early_tool_calls,omitempty"`

	// Attrs holds extra string attributes for events emitted by hosts.
	Attrs map[string]string `json:"attrs,omitempty"`
}
