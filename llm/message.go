package llm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Role says who produced a message.
type Role string

// The roles of a conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// PartType says what a [Part] holds.
type PartType string

// The kinds of message parts.
const (
	PartText       PartType = "text"
	PartImage      PartType = "image"
	PartToolCall   PartType = "tool_call"
	PartToolResult PartType = "tool_result"
	PartReasoning  PartType = "reasoning"
)

// Message is one turn of a conversation.
//
// The zero value is not useful; build messages with [SystemText], [UserText],
// [AssistantText], [ToolResultMessage] or a literal. Messages are values:
// copying a Message copies the Parts slice header, not the parts, so treat
// the parts of a message you did not build as read-only.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// Part is one piece of a [Message]. Exactly one of its payload fields is set,
// according to Type.
type Part struct {
	Type PartType `json:"type"`
	// Text is the text of a text part or the thinking of a reasoning part.
	Text string `json:"text,omitempty"`
	// Image is the image of an image part.
	Image *Image `json:"image,omitempty"`
	// ToolCall is the call of a tool-call part.
	ToolCall *ToolCall `json:"tool_call,omitempty"`
	// ToolResult is the result of a tool-result part.
	ToolResult *ToolResult `json:"tool_result,omitempty"`
	// Signature is an opaque provider token bound to this part (Anthropic's
	// thinking signature, Gemini's thoughtSignature). Providers that set it
	// require it back unchanged in the history; nothing else may touch it.
	Signature string `json:"signature,omitempty"`
	// Redacted holds the opaque payload of a reasoning block the provider
	// encrypted (Anthropic's redacted_thinking). It is sent back unchanged.
	Redacted string `json:"redacted,omitempty"`
}

// Image is an image given to a model, either inline bytes or a URL.
type Image struct {
	// MIMEType is the media type of Data, such as "image/png".
	MIMEType string `json:"mime_type,omitempty"`
	// Data is the raw image (base64 in JSON). Empty when URL is set.
	Data []byte `json:"data,omitempty"`
	// URL is a remote (https) or data: URL. Empty when Data is set.
	URL string `json:"url,omitempty"`
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	// ID identifies the call within a run. It is stable: approvals,
	// checkpoints and tool results refer to it.
	ID string `json:"id"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Arguments is the JSON object the model produced. It may be invalid
	// JSON when the model produced invalid JSON; tools reject it then.
	Arguments json.RawMessage `json:"arguments"`
}

// ToolResult is what a tool call produced, as sent back to the model.
type ToolResult struct {
	// CallID is the ID of the ToolCall this answers.
	CallID string `json:"call_id"`
	// Name is the name of the tool that ran.
	Name string `json:"name"`
	// Content is the text the model sees.
	Content string `json:"content"`
	// IsError reports that the tool failed; the model sees Content either way.
	IsError bool `json:"is_error,omitempty"`
	// Refusal, when set, is the kind of the refusal the agent loop wrote
	// here in place of the tool's answer (see package loop/refusal);
	// Content is its text. Providers do not send it.
	Refusal string `json:"refusal,omitempty"`
	// Untrusted reports that Content is untrusted and framed as such (the
	// loop's untrusted frame). Providers do not send it.
	Untrusted bool `json:"untrusted,omitempty"`
}

// SystemText returns a system message holding text.
func SystemText(text string) Message { return textMessage(RoleSystem, text) }

// UserText returns a user message holding text.
func UserText(text string) Message { return textMessage(RoleUser, text) }

// AssistantText returns an assistant message holding text.
func AssistantText(text string) Message { return textMessage(RoleAssistant, text) }

func textMessage(role Role, text string) Message {
	return Message{Role: role, Parts: []Part{{Type: PartText, Text: text}}}
}

// ToolResultMessage returns the tool message carrying r.
func ToolResultMessage(r ToolResult) Message {
	return Message{Role: RoleTool, Parts: []Part{{Type: PartToolResult, ToolResult: &r}}}
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Type: PartText, Text: text} }

// ImagePart returns an image part with inline bytes.
func ImagePart(mimeType string, data []byte) Part {
	return Part{Type: PartImage, Image: &Image{MIMEType: mimeType, Data: data}}
}

// ToolCallPart returns a tool-call part.
func ToolCallPart(c ToolCall) Part { return Part{Type: PartToolCall, ToolCall: &c} }

// Text returns the concatenation of the message's text parts.
func (m Message) Text() string {
	var n int
	var only string
	for _, p := range m.Parts {
		if p.Type == PartText {
			n++
			only = p.Text
		}
	}
	if n <= 1 {
		return only
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Reasoning returns the concatenation of the message's reasoning text.
func (m Message) Reasoning() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == PartReasoning {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// ToolCalls returns the tool calls of the message, in order.
func (m Message) ToolCalls() []ToolCall {
	var calls []ToolCall
	for _, p := range m.Parts {
		if p.Type == PartToolCall && p.ToolCall != nil {
			calls = append(calls, *p.ToolCall)
		}
	}
	return calls
}

// ToolResults returns the tool results of the message, in order.
func (m Message) ToolResults() []ToolResult {
	var rs []ToolResult
	for _, p := range m.Parts {
		if p.Type == PartToolResult && p.ToolResult != nil {
			rs = append(rs, *p.ToolResult)
		}
	}
	return rs
}

// HasImages reports whether the message holds an image part.
func (m Message) HasImages() bool {
	for _, p := range m.Parts {
		if p.Type == PartImage {
			return true
		}
	}
	return false
}

// Clone returns a deep copy of m, safe to modify.
func (m Message) Clone() Message {
	out := Message{Role: m.Role, Parts: make([]Part, len(m.Parts))}
	for i, p := range m.Parts {
		if p.Image != nil {
			img := *p.Image
			img.Data = append([]byte(nil), img.Data...)
			p.Image = &img
		}
		if p.ToolCall != nil {
			c := *p.ToolCall
			c.Arguments = append(json.RawMessage(nil), c.Arguments...)
			p.ToolCall = &c
		}
		if p.ToolResult != nil {
			r := *p.ToolResult
			p.ToolResult = &r
		}
		out.Parts[i] = p
	}
	return out
}

// Validate reports the first structural problem of m: an unknown role or
// part type, or a part whose payload does not match its type.
func (m Message) Validate() error {
	switch m.Role {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
	default:
		return fmt.Errorf("llm: message has unknown role %q", m.Role)
	}
	for i, p := range m.Parts {
		ok := true
		switch p.Type {
		case PartText, PartReasoning:
		case PartImage:
			ok = p.Image != nil && (len(p.Image.Data) > 0 || p.Image.URL != "")
		case PartToolCall:
			ok = p.ToolCall != nil && p.ToolCall.Name != ""
		case PartToolResult:
			ok = p.ToolResult != nil
		default:
			return fmt.Errorf("llm: %s message part %d has unknown type %q", m.Role, i, p.Type)
		}
		if !ok {
			return fmt.Errorf("llm: %s message part %d (%s) is missing its payload", m.Role, i, p.Type)
		}
	}
	return nil
}
