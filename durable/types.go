package durable

import (
	"encoding/json"
	"time"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/internal/loopwire"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/tool"
)

// The names the workflow, its activities, query and update are registered
// under: a worker and a client of another build agree on them.
const (
	WorkflowName     = "autoagent.Run"
	ActivityDescribe = "autoagent.Describe"
	ActivityModel    = "autoagent.Model"
	ActivityTool     = "autoagent.Tool"
	ActivityPolicy   = "autoagent.Policy"
	ActivityProgram  = "autoagent.Program"
	QueryState       = "autoagent.state"
	UpdateDecide     = "autoagent.decide"
)

// DefaultTaskQueue is the task queue of workers and runs that name none.
const DefaultTaskQueue = "autoagent"

// RunInput starts a run: a prompt, or a history used as it is.
type RunInput struct {
	Prompt   string        `json:"prompt,omitempty"`
	Messages []llm.Message `json:"messages,omitempty"`
}

// Description is what the workflow needs of the worker's agent to run its
// loop: read once at the start of a run (an activity, so it is in the
// run's history and the same on every replay).
type Description struct {
	System           string          `json:"system,omitempty"`
	Model            string          `json:"model,omitempty"`
	Temperature      *float64        `json:"temperature,omitempty"`
	MaxTokens        int             `json:"max_tokens,omitempty"`
	Bounds           loop.Bounds     `json:"bounds"`
	MaxCorrections   int             `json:"max_corrections,omitempty"`
	OutputSchema     json.RawMessage `json:"output_schema,omitempty"`
	OutputSchemaName string          `json:"output_schema_name,omitempty"`
	OutputStrict     bool            `json:"output_strict,omitempty"`
	OutputRetries    int             `json:"output_retries,omitempty"`
	Tools            []ToolInfo      `json:"tools,omitempty"`
	// Policy is the agent's policy file, when its policy is one: the
	// workflow applies it itself, guardrails included. Another Policy is
	// asked on the worker (HasPolicy), through a local activity.
	Policy    json.RawMessage `json:"policy,omitempty"`
	HasPolicy bool            `json:"has_policy,omitempty"`
	// CodeMode is the agent's code mode and CodeModeMaxCalls its bound on
	// a program's calls (codemode.Config): the workflow offers
	// run_program, and runs each program as Program activities on the
	// worker, with the worker's runner.
	CodeMode         codemode.Mode `json:"code_mode,omitempty"`
	CodeModeMaxCalls int           `json:"code_mode_max_calls,omitempty"`
	// CodeModeLanguages are the languages the worker's runner runs
	// (codemode.Languages), when not JavaScript alone: the workflow's
	// run_program declares them.
	CodeModeLanguages []string `json:"code_mode_languages,omitempty"`
}

// ToolInfo is one tool of the worker's agent.
type ToolInfo struct {
	Spec  llm.ToolSpec `json:"spec"`
	Flags tool.Flags   `json:"flags"`
	// SubAgent is set for a sub-agent (loop.Agent.AsTool): its calls are
	// child workflows, which run the sub-agent's loop the same way.
	SubAgent bool `json:"sub_agent,omitempty"`
	// Specialists is set for a Delegate tool: the names of its
	// specialists, each request to one a child workflow.
	Specialists []string `json:"specialists,omitempty"`
}

// ModelInput is one model call of the agent at path Agent ("" for the
// worker's agent, "research" for its sub-agent tool research, "a/b" for
// b of a, "delegate/writer" for the specialist writer of its Delegate
// tool delegate).
type ModelInput struct {
	Agent   string       `json:"agent,omitempty"`
	Request *llm.Request `json:"request"`
}

// PolicyArgs is one decision asked of the policy of the agent at path
// Agent.
type PolicyArgs struct {
	Agent string            `json:"agent,omitempty"`
	Input *loop.PolicyInput `json:"input"`
}

// ToolInput is one tool call, run on a worker, of the agent at path
// Agent.
type ToolInput struct {
	Agent     string          `json:"agent,omitempty"`
	RunID     string          `json:"run_id"`
	Step      int             `json:"step"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Tainted: the run (or the calling tool) had taken in untrusted
	// content when the call began; the tool sees it through its context
	// (tool.Tainted), as it would in the loop.
	Tainted bool `json:"tainted,omitempty"`
	// MaxResult, when positive, bounds the encoded ToolOutput of a call
	// run as a local activity: a larger one fails the activity (type
	// local_result_too_large), and the workflow runs the call again as an
	// activity.
	MaxResult int `json:"max_result,omitempty"`
}

// IdempotencyKey is the call's key, as the loop makes it.
func (in ToolInput) IdempotencyKey() string {
	return loop.CallInfo{RunID: in.RunID, CallID: in.CallID}.IdempotencyKey()
}

// ToolOutput is a tool call's result and what the tool reported.
type ToolOutput struct {
	Result tool.Result         `json:"result"`
	Report loopwire.CallReport `json:"report"`
}

// ProgramInput is one run of a code-mode program on a worker, by the
// runner of the agent at path Agent: the program of the run_program call
// CallID, and the calls it made so far with their results (Record), which
// it gets again instead of reaching the run (see loopwire.ReplayProgramContext).
type ProgramInput struct {
	Agent   string                  `json:"agent,omitempty"`
	RunID   string                  `json:"run_id"`
	Step    int                     `json:"step"`
	CallID  string                  `json:"call_id"`
	Program codemode.Program        `json:"program"`
	Record  []loopwire.RecordedCall `json:"record,omitempty"`
	// Tainted: the call had taken in untrusted content before the
	// program's first call (the run's), as ToolInput's; a result in the
	// record says whether it tainted the program.
	Tainted bool `json:"tainted,omitempty"`
}

// ProgramOutput is how one run of a program ended: with the program's
// result, or needing Call (its first call past the record) answered in
// the run; and what it reported.
type ProgramOutput struct {
	Result *tool.Result        `json:"result,omitempty"`
	Call   *tool.Call          `json:"call,omitempty"`
	Report loopwire.CallReport `json:"report"`
}

// Status is a run's state as the query answers it.
type Status struct {
	// RunID is the loop's run ID: the workflow ID.
	RunID string `json:"run_id"`
	// State is "running", "awaiting_approval", or the stop reason once
	// the run ended ("done", "max_steps", …), or "failed".
	State    string             `json:"state"`
	Step     int                `json:"step"`
	Usage    llm.Usage          `json:"usage"`
	Messages []llm.Message      `json:"messages,omitempty"`
	Pending  []loop.PendingCall `json:"pending,omitempty"`
	Error    string             `json:"error,omitempty"`
}

// Decision is a person's answer for one pending call, sent as an update.
type Decision struct {
	CallID   string `json:"call_id"`
	Approved bool   `json:"approved"`
	Reason   string `json:"reason,omitempty"`
}

// Options are the workflow's timeouts; the zero value works.
type Options struct {
	// ModelTimeout bounds one model call (default 5 minutes).
	ModelTimeout time.Duration `json:"model_timeout,omitempty"`
	// ToolTimeout bounds one tool call when neither the tool nor the
	// agent's bounds say (default 10 minutes).
	ToolTimeout time.Duration `json:"tool_timeout,omitempty"`
	// ModelAttempts is how many times a model call is tried when the
	// provider's error is retryable (default 5).
	ModelAttempts int32 `json:"model_attempts,omitempty"`
	// Heartbeat is how long a call run as an activity (a model call, or a
	// tool call that is not local) may go without its worker's
	// heartbeat before the worker is taken for lost (default 30 seconds):
	// a model call is then retried on another worker, a tool call retried
	// when the tool is idempotent and otherwise reported OutcomeUnknown.
	// A local activity has none: its worker is taken for lost when the
	// workflow task times out (10 seconds).
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	// LocalModelCalls makes each model call a local activity of the
	// workflow task instead of an activity of its own: a run whose tools
	// are idempotent is then one workflow task, 4–6× the runs per second
	// on one server (BenchmarkDurableRuns), and the model's
	// requests stay out of the history. What it costs:
	//   - the run's state (Client.Status, `autoagent runs show`) is not
	//     readable while a model call runs: a query waits for the workflow
	//     task, which the SDK completes every 8 s, and mostly outlives the
	//     server's 10 s deadline for it;
	//   - a lost worker repeats, on another, the model calls it made since
	//     its workflow task last completed (at most the last 8 s of them),
	//     their tokens spent again;
	//   - a cancellation reaches a model call within 8 s, not at once.
	// For batch runs of a fast model, where throughput matters and nobody
	// watches a run. See RATIONALE.md, "Why are model calls activities,
	// and local ones only on request?".
	LocalModelCalls bool `json:"local_model_calls,omitempty"`
	// MaxHistory is the history length (events) past which a run
	// continues as new at its next step (default 10,000; Temporal's own
	// limit is 51,200).
	MaxHistory int `json:"max_history,omitempty"`
}
