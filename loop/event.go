package loop

import "github.com/autoagent-go/autoagent/llm"

// EventType says what a stream [Event] carries.
type EventType string

// The stream event types.
const (
	// EventText carries a delta of the model's answer in Text.
	EventText EventType = "text"
	// EventReasoning carries a delta of the model's reasoning in Text.
	EventReasoning EventType = "reasoning"
	// EventToolStart announces a tool call (Call). Refused calls get one
	// too, with Refused set.
	EventToolStart EventType = "tool_start"
	// EventToolEnd carries a call's result (Call, ToolResult, Refused).
	EventToolEnd EventType = "tool_end"
	// EventCorrection carries the post-turn hook's correction in Text.
	EventCorrection EventType = "correction"
	// EventApproval announces that the run pauses for approval (Pending).
	EventApproval EventType = "approval_request"
	// EventDone is the last event; Result holds the outcome.
	EventDone EventType = "done"
)

// Event is one event of a streamed run.
type Event struct {
	Type EventType
	// Step is the step the event belongs to.
	Step int
	// Text is a text or reasoning delta, or a correction's text.
	Text string
	// Call is the tool call of a tool event.
	Call *llm.ToolCall
	// ToolResult is the result the model sees (EventToolEnd).
	ToolResult *llm.ToolResult
	// Refused reports that the call was refused before running (guard,
	// policy, human) and did not execute.
	Refused bool
	// Pending lists the calls awaiting approval (EventApproval).
	Pending []PendingCall
	// Result is the run's outcome (EventDone); nil when the run failed.
	Result *Result
}
