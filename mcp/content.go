package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoagent-go/autoagent/tool"
)

// fromMCP converts a server's tool result into a [tool.Result]. Text,
// image and audio items keep their kind; kinds a [tool.Result] has no
// place for become text the model can read: an embedded resource its text
// (or a note naming it when it is binary), a resource link its URI.
func fromMCP(res *sdk.CallToolResult, serverTool string) (tool.Result, error) {
	var out tool.Result
	out.IsError = res.IsError
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			out.Content = append(out.Content, tool.Content{Type: "text", Text: c.Text})
		case *sdk.ImageContent:
			out.Content = append(out.Content, tool.Content{Type: "image", Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType})
		case *sdk.AudioContent:
			out.Content = append(out.Content, tool.Content{Type: "audio", Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType})
		case *sdk.EmbeddedResource:
			out.Content = append(out.Content, tool.Content{Type: "text", Text: resourceText(c.Resource)})
		case *sdk.ResourceLink:
			text := "[resource link " + c.URI
			if c.Name != "" {
				text += " (" + c.Name + ")"
			}
			out.Content = append(out.Content, tool.Content{Type: "text", Text: text + "]"})
		default:
			b, _ := c.MarshalJSON()
			out.Content = append(out.Content, tool.Content{Type: "text", Text: "[unsupported content " + string(b) + "]"})
		}
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return tool.Result{}, fmt.Errorf("structuredContent: %w", err)
		}
		out.StructuredContent = b
	}
	if out.IsError && len(out.Content) == 0 && out.StructuredContent == nil {
		out.Content = []tool.Content{{Type: "text", Text: fmt.Sprintf("MCP tool %q reported an error without saying why", serverTool)}}
	}
	return out, nil
}

func resourceText(r *sdk.ResourceContents) string {
	switch {
	case r == nil:
		return "[empty resource]"
	case r.Text != "" || r.Blob == nil:
		return r.Text
	default:
		return fmt.Sprintf("[resource %s (%s, %d bytes of binary data)]", r.URI, r.MIMEType, len(r.Blob))
	}
}

// toMCP converts a tool's result into MCP's. An image or audio item whose
// data is not valid base64 cannot be sent as such: it becomes text saying
// so, rather than a silently corrupted payload.
func toMCP(res tool.Result) *sdk.CallToolResult {
	out := &sdk.CallToolResult{Content: []sdk.Content{}, IsError: res.IsError}
	for _, c := range res.Content {
		switch c.Type {
		case "image", "audio":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				out.Content = append(out.Content, &sdk.TextContent{Text: fmt.Sprintf("[%s %s: data is not valid base64]", c.Type, c.MIMEType)})
				continue
			}
			if c.Type == "image" {
				out.Content = append(out.Content, &sdk.ImageContent{Data: data, MIMEType: c.MIMEType})
			} else {
				out.Content = append(out.Content, &sdk.AudioContent{Data: data, MIMEType: c.MIMEType})
			}
		default:
			out.Content = append(out.Content, &sdk.TextContent{Text: c.Text})
		}
	}
	if s := bytes.TrimSpace(res.StructuredContent); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		out.StructuredContent = json.RawMessage(s)
	}
	return out
}
