package llm

import "encoding/json"

// ToolSpec describes a tool to the model: its name, what it does, and the
// JSON Schema of its arguments.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema, when set, is the JSON Schema of the tool's structured result.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// ToolChoice constrains which tool the model may call.
type ToolChoice struct {
	// Mode is "" or "auto" (the model decides), "none" (no tool), "required"
	// (some tool) or "tool" (the tool named Name).
	Mode string `json:"mode,omitempty"`
	// Name is the forced tool when Mode is "tool".
	Name string `json:"name,omitempty"`
}

// The tool-choice modes.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
	ToolChoiceTool     = "tool"
)

// ResponseFormat asks for structured output.
type ResponseFormat struct {
	// Type is "json_object" (any JSON object) or "json_schema".
	Type string `json:"type"`
	// Name names the schema (OpenAI requires one for json_schema).
	Name string `json:"name,omitempty"`
	// Description says what the answer is, where the provider takes one.
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema the answer must satisfy (json_schema only).
	Schema json.RawMessage `json:"schema,omitempty"`
	// Strict asks the provider to enforce Schema exactly where supported.
	Strict bool `json:"strict,omitempty"`
}

// Request is one call to a model. Providers never modify a Request.
type Request struct {
	// Model overrides the provider's configured model when not empty.
	Model string `json:"model,omitempty"`
	// Messages is the conversation so far, system messages included.
	Messages []Message `json:"messages"`
	// Tools are the tools the model may call in this request.
	Tools []ToolSpec `json:"tools,omitempty"`
	// ToolChoice constrains tool use; the zero value lets the model decide.
	ToolChoice ToolChoice `json:"tool_choice,omitzero"`
	// Temperature is sent only when set.
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens caps the answer's length; 0 means the provider's default.
	MaxTokens int `json:"max_tokens,omitempty"`
	// ResponseFormat asks for JSON output when set.
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
}
