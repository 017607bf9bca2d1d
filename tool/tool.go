package tool

import (
	"context"
	"encoding/json"

	"github.com/autoagent-go/autoagent/llm"
)

// Tool is something the model can call.
//
// Implementations must be safe for concurrent use: parallel tool calls and
// parallel runs call the same Tool at once.
type Tool interface {
	// Spec describes the tool to the model. It must return the same value
	// for the lifetime of the tool.
	Spec() llm.ToolSpec

	// Call runs the tool. A failure the model should see (bad arguments,
	// a failed operation) is a Result with IsError set and a nil error. A
	// non-nil error is reserved for infrastructure failure. Call must return
	// promptly once ctx is done.
	Call(ctx context.Context, call Call) (Result, error)
}

// Call is one invocation of a tool.
type Call struct {
	// ID is the model's tool-call id, stable within a run.
	ID string `json:"id"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Arguments is the JSON object the model produced.
	Arguments json.RawMessage `json:"arguments"`
}

// FromLLM converts a model's tool call into a Call.
func FromLLM(c llm.ToolCall) Call {
	return Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
}
