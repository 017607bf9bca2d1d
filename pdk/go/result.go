package pdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
)

// Result is what a tool returns to the host: the MCP tool result, the
// shape `autoagent tools call` prints.
type Result struct {
	// Content is what the model reads, in order.
	Content []Content `json:"content"`
	// StructuredContent is the machine-readable result, when there is one.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError reports that the tool failed; Content says why.
	IsError bool `json:"isError,omitempty"`
}

// Content is one item of a [Result].
type Content struct {
	// Type is "text" or "image".
	Type string
	// Text is the text of a text item.
	Text string
	// Data is the base64 payload of an image item.
	Data string
	// MIMEType is the media type of an image item.
	MIMEType string
}

// MarshalJSON writes a text item as {"type","text"} (text present even when
// empty, as MCP requires) and other items with their data fields.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Type == "text" {
		return marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{c.Type, c.Text})
	}
	return marshal(struct {
		Type     string `json:"type"`
		Text     string `json:"text,omitempty"`
		Data     string `json:"data,omitempty"`
		MIMEType string `json:"mimeType,omitempty"`
	}{c.Type, c.Text, c.Data, c.MIMEType})
}

// UnmarshalJSON reads any content item.
func (c *Content) UnmarshalJSON(b []byte) error {
	var v struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MIMEType string `json:"mimeType"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = Content{Type: v.Type, Text: v.Text, Data: v.Data, MIMEType: v.MIMEType}
	return nil
}

// Text returns a successful result holding text.
func Text(text string) Result {
	return Result{Content: []Content{{Type: "text", Text: text}}}
}

// Errorf returns a failed result whose text is the formatted message.
func Errorf(format string, args ...any) Result {
	return Result{Content: []Content{{Type: "text", Text: fmt.Sprintf(format, args...)}}, IsError: true}
}

// JSON returns a successful result holding v as JSON text and, when v
// encodes to a JSON object, as structured content too.
func JSON(v any) (Result, error) {
	b, err := marshal(v)
	if err != nil {
		return Result{}, fmt.Errorf("pdk: encoding result: %w", err)
	}
	r := Text(string(b))
	if len(b) > 0 && b[0] == '{' {
		r.StructuredContent = b
	}
	return r, nil
}

// marshal encodes v as compact JSON without HTML escaping: results are read
// by models and programs, never embedded in HTML, and "<" stays readable.
// The encoder and its buffer are reused (encoders), the bytes returned are
// the caller's.
func marshal(v any) ([]byte, error) {
	e := encoders.Get().(*encoder)
	defer func() {
		if e.buf.Cap() <= maxKeptEncoding {
			encoders.Put(e)
		}
	}()
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))), nil
}

// encoder is a JSON encoder with HTML escaping off, writing to buf.
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// maxKeptEncoding bounds the buffer an encoder keeps for the next result.
const maxKeptEncoding = 1 << 20

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}
