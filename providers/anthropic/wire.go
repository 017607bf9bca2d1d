package anthropic

import "encoding/json"

// The Messages API wire format: only the fields this adapter reads or
// writes. Unknown response fields are ignored, so new server fields never
// break parsing.

type wireRequest struct {
	Model       string          `json:"model"`
	MaxTokens   int             `json:"max_tokens"`
	System      []wireBlock     `json:"system,omitempty"`
	Messages    []wireMessage   `json:"messages"`
	Tools       []wireTool      `json:"tools,omitempty"`
	ToolChoice  *wireToolChoice `json:"tool_choice,omitempty"`
	Temperature *float64        `json:"temperature,omitempty"`
	Thinking    *wireThinking   `json:"thinking,omitempty"`
	Stream      bool            `json:"stream,omitempty"`
}

type wireMessage struct {
	Role    string      `json:"role"`
	Content []wireBlock `json:"content"`
}

// wireBlock is every content block kind in one struct; Type says which
// fields are meaningful. Pointers and omitempty keep each kind's JSON to the
// fields the API expects for it.
type wireBlock struct {
	Type string `json:"type"`

	// text
	Text *string `json:"text,omitempty"`

	// image
	Source *wireImageSource `json:"source,omitempty"`

	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	// tool_result
	ToolUseID string      `json:"tool_use_id,omitempty"`
	Content   []wireBlock `json:"content,omitempty"`
	IsError   bool        `json:"is_error,omitempty"`

	// thinking and redacted_thinking
	Thinking  *string `json:"thinking,omitempty"`
	Signature *string `json:"signature,omitempty"`
	Data      string  `json:"data,omitempty"`

	CacheControl *wireCacheControl `json:"cache_control,omitempty"`
}

type wireImageSource struct {
	Type      string `json:"type"` // "base64" or "url"
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type wireCacheControl struct {
	Type string `json:"type"`
}

type wireTool struct {
	Name         string            `json:"name"`
	Description  string            `json:"description,omitempty"`
	InputSchema  json.RawMessage   `json:"input_schema"`
	CacheControl *wireCacheControl `json:"cache_control,omitempty"`
}

type wireToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type wireResponse struct {
	ID         string      `json:"id"`
	Type       string      `json:"type"`
	Model      string      `json:"model"`
	Content    []wireBlock `json:"content"`
	StopReason string      `json:"stop_reason"`
	Usage      *wireUsage  `json:"usage"`
	// Error is set when the body is an error document.
	Error *wireErrorBody `json:"error"`
}

// wireUsage uses pointers because message_delta may repeat only some of
// the counters, and an absent counter must not erase one already seen.
type wireUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

// wireErrorBody is the "error" member of an error document and of a
// mid-stream error event: {"type":"error","error":{"type":"overloaded_error","message":"..."}}.
type wireErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// wireStreamEvent is one SSE data payload of a streamed answer.
type wireStreamEvent struct {
	Type         string         `json:"type"`
	Message      *wireResponse  `json:"message"`       // message_start
	Index        int            `json:"index"`         // content_block_*
	ContentBlock *wireBlock     `json:"content_block"` // content_block_start
	Delta        *wireDelta     `json:"delta"`         // content_block_delta, message_delta
	Usage        *wireUsage     `json:"usage"`         // message_delta
	Error        *wireErrorBody `json:"error"`         // error
}

// wireDelta is the delta of content_block_delta (by Type) and of
// message_delta (StopReason).
type wireDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	StopReason  string `json:"stop_reason"`
}
