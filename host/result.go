package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/autoagent-go/autoagent/tool"
)

// wireResult is MCP's CallToolResult as a module writes it.
type wireResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent"`
	IsError           bool              `json:"isError"`
}

type wireContent struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MIMEType string `json:"mimeType"`
	URI      string `json:"uri"`
	Resource *struct {
		URI  string `json:"uri"`
		Text string `json:"text"`
	} `json:"resource"`
}

// parseResult decodes a module's output into a tool.Result, checking the
// structured content against the tool's output schema when it has one.
func parseResult(out []byte, outSchema *tool.Schema) (tool.Result, error) {
	var w wireResult
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&w); err != nil {
		if len(bytes.TrimSpace(out)) == 0 {
			return tool.Result{}, errors.New("empty output, want a JSON object {\"content\":[...]}")
		}
		return tool.Result{}, fmt.Errorf("not a JSON object {\"content\":[...]}: %v", err)
	}
	if dec.More() {
		return tool.Result{}, errors.New("trailing data after the result object")
	}
	var r tool.Result
	r.IsError = w.IsError
	for i, raw := range w.Content {
		var c wireContent
		if err := json.Unmarshal(raw, &c); err != nil {
			return tool.Result{}, fmt.Errorf("content[%d]: %v", i, err)
		}
		switch c.Type {
		case "text":
			r.Content = append(r.Content, tool.Content{Type: "text", Text: c.Text})
		case "image", "audio":
			r.Content = append(r.Content, tool.Content{Type: c.Type, Data: c.Data, MIMEType: c.MIMEType})
		case "resource":
			if c.Resource == nil {
				return tool.Result{}, fmt.Errorf("content[%d]: resource without a resource object", i)
			}
			r.Content = append(r.Content, tool.Content{Type: "text", Text: c.Resource.Text})
		case "resource_link":
			r.Content = append(r.Content, tool.Content{Type: "text", Text: c.URI})
		default:
			return tool.Result{}, fmt.Errorf("content[%d]: unsupported type %q", i, c.Type)
		}
	}
	if s := bytes.TrimSpace(w.StructuredContent); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		if s[0] != '{' {
			return tool.Result{}, errors.New("structuredContent is not a JSON object")
		}
		if outSchema != nil && !r.IsError {
			if err := outSchema.Validate(s); err != nil {
				var ve *tool.ValidationError
				if errors.As(err, &ve) {
					return tool.Result{}, fmt.Errorf("structuredContent does not match the outputSchema: %s", strings.TrimPrefix(ve.Field+": "+ve.Reason, ": "))
				}
				return tool.Result{}, fmt.Errorf("structuredContent does not match the outputSchema: %v", err)
			}
		}
		r.StructuredContent = json.RawMessage(bytes.Clone(s))
	}
	if w.Content == nil && r.StructuredContent == nil {
		return tool.Result{}, errors.New("no content and no structuredContent")
	}
	if r.Content == nil {
		// MCP asks servers returning structured content to also send it as
		// text, for clients that only read content.
		r.Content = []tool.Content{{Type: "text", Text: string(r.StructuredContent)}}
	}
	return r, nil
}
