package tool

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Result is what a tool returns. Its JSON form is the MCP tool result
// (content, structuredContent, isError), the same shape WASM tools return
// and `autoagent tools call` prints.
type Result struct {
	// Content is what the model reads, in order.
	Content []Content `json:"content"`
	// StructuredContent is the machine-readable result, when the tool has one.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError reports that the tool failed; Content says why.
	IsError bool `json:"isError,omitempty"`
	// HostText reports that Content is the host's own words, not the
	// tool's: a refusal of the call before it reached the tool (see
	// [InvalidArguments]). The agent loop does not frame such a result as
	// an untrusted tool's output. It has no JSON form, so nothing a tool
	// or a server sends can claim it.
	HostText bool `json:"-"`
	// Refusal is the kind of the agent loop's refusal (loop/refusal's
	// Kind) when the loop wrote this result in place of a tool's answer,
	// for a tool calling tools; empty for a tool's own result. It has no
	// JSON form, so nothing a tool or a server sends can claim it: the
	// host hands it to a guest calling tools as its own field of the
	// reply ("refusal"), which the program engines read to stop a program
	// (see RATIONALE.md, "Why is a refusal a field, not a prefix?").
	Refusal string `json:"-"`
}

// InvalidArguments returns the failed result of a call refused before it
// reached the tool because its arguments do not fit the tool (its input
// schema): the host's words ([Result.HostText]), which the model reads to
// correct the call.
func InvalidArguments(format string, args ...any) Result {
	r := Errorf(format, args...)
	r.HostText = true
	return r
}

// Content is one item of a [Result].
type Content struct {
	// Type is "text", "image", "audio", "resource_link" (a reference to a
	// resource) or "resource" (a resource embedded in the result), MCP's
	// content kinds.
	Type string `json:"type"`
	// Text is the text of a text item, or an embedded resource's text.
	Text string `json:"text,omitempty"`
	// Data is the base64 payload of an image or audio item, or an embedded
	// resource's binary contents.
	Data string `json:"data,omitempty"`
	// MIMEType is the media type of the item or resource.
	MIMEType string `json:"mimeType,omitempty"`
	// URI names the resource of a resource link or an embedded resource.
	URI string `json:"uri,omitempty"`
	// Name, Title, Description and Size describe a resource link's
	// resource.
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Size        *int64 `json:"size,omitempty"`
	// Annotations are MCP's annotations of the item (audience, priority,
	// lastModified), as the server sent them.
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// Text returns a successful result holding text.
func Text(text string) Result {
	return Result{Content: []Content{{Type: "text", Text: text}}}
}

// Errorf returns a failed result whose text is the formatted message.
func Errorf(format string, args ...any) Result {
	return Result{Content: []Content{{Type: "text", Text: fmt.Sprintf(format, args...)}}, IsError: true}
}

// JSON returns a successful result holding v both as JSON text and, when v
// encodes to a JSON object, as structured content.
func JSON(v any) (Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Result{}, fmt.Errorf("tool: encoding result: %w", err)
	}
	r := Text(string(b))
	if len(b) > 0 && b[0] == '{' {
		r.StructuredContent = b
	}
	return r, nil
}

// Text returns what the model sees: the text items joined by newlines, or
// the structured content when there is no text.
func (r Result) Text() string {
	var parts []string
	for _, c := range r.Content {
		switch c.Type {
		case "text":
			parts = append(parts, c.Text)
		case "image", "audio":
			parts = append(parts, "["+c.Type+" "+c.MIMEType+"]")
		case "resource_link":
			link := "[resource link " + c.URI
			if c.Name != "" {
				link += " (" + c.Name + ")"
			}
			parts = append(parts, link+"]")
		case "resource":
			if c.Text != "" || c.Data == "" {
				parts = append(parts, c.Text)
			} else {
				n := base64.StdEncoding.DecodedLen(len(c.Data))
				if b, err := base64.StdEncoding.DecodeString(c.Data); err == nil {
					n = len(b)
				}
				parts = append(parts, fmt.Sprintf("[resource %s (%s, %d bytes of binary data)]", c.URI, c.MIMEType, n))
			}
		}
	}
	if len(parts) == 0 && len(r.StructuredContent) > 0 {
		return string(r.StructuredContent)
	}
	return strings.Join(parts, "\n")
}
