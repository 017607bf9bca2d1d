package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoagent-go/autoagent/tool"
)

// fromMCP converts a server's tool result into a [tool.Result]. Every
// MCP content kind keeps its kind and its data: text, image, audio, a
// resource link (URI, name, title, description, size) and an embedded
// resource (text, or its bytes base64 in Data), each with its annotations.
// [tool.Result.Text], what the model reads, shows a link as its URI and a
// binary resource as a note naming it.
func fromMCP(res *sdk.CallToolResult, serverTool string) (tool.Result, error) {
	var out tool.Result
	out.IsError = res.IsError
	for _, c := range res.Content {
		var item tool.Content
		var ann *sdk.Annotations
		switch c := c.(type) {
		case *sdk.TextContent:
			item, ann = tool.Content{Type: "text", Text: c.Text}, c.Annotations
		case *sdk.ImageContent:
			item, ann = tool.Content{Type: "image", Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType}, c.Annotations
		case *sdk.AudioContent:
			item, ann = tool.Content{Type: "audio", Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType}, c.Annotations
		case *sdk.EmbeddedResource:
			item, ann = tool.Content{Type: "resource"}, c.Annotations
			if r := c.Resource; r != nil {
				item.URI, item.MIMEType, item.Text = r.URI, r.MIMEType, r.Text
				if r.Blob != nil {
					item.Data = base64.StdEncoding.EncodeToString(r.Blob)
				}
			}
		case *sdk.ResourceLink:
			item, ann = tool.Content{Type: "resource_link", URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType, Size: c.Size}, c.Annotations
		default:
			b, _ := c.MarshalJSON()
			item = tool.Content{Type: "text", Text: "[unsupported content " + string(b) + "]"}
		}
		if ann != nil {
			item.Annotations, _ = json.Marshal(ann)
		}
		out.Content = append(out.Content, item)
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

// toMCP converts a tool's result into MCP's, every kind to its own. An
// item whose data is not valid base64 cannot be sent as such: it becomes
// text saying so, rather than a silently corrupted payload.
func toMCP(res tool.Result) *sdk.CallToolResult {
	out := &sdk.CallToolResult{Content: []sdk.Content{}, IsError: res.IsError}
	for _, c := range res.Content {
		var ann *sdk.Annotations
		if len(c.Annotations) > 0 {
			var a sdk.Annotations
			if json.Unmarshal(c.Annotations, &a) == nil {
				ann = &a
			}
		}
		var data []byte
		if c.Data != "" {
			var err error
			if data, err = base64.StdEncoding.DecodeString(c.Data); err != nil {
				out.Content = append(out.Content, &sdk.TextContent{Text: fmt.Sprintf("[%s %s: data is not valid base64]", c.Type, c.MIMEType)})
				continue
			}
		}
		switch c.Type {
		case "image":
			out.Content = append(out.Content, &sdk.ImageContent{Data: data, MIMEType: c.MIMEType, Annotations: ann})
		case "audio":
			out.Content = append(out.Content, &sdk.AudioContent{Data: data, MIMEType: c.MIMEType, Annotations: ann})
		case "resource_link":
			out.Content = append(out.Content, &sdk.ResourceLink{URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description,
				MIMEType: c.MIMEType, Size: c.Size, Annotations: ann})
		case "resource":
			r := &sdk.ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}
			if data != nil {
				r.Blob, r.Text = data, ""
			}
			out.Content = append(out.Content, &sdk.EmbeddedResource{Resource: r, Annotations: ann})
		default:
			out.Content = append(out.Content, &sdk.TextContent{Text: c.Text, Annotations: ann})
		}
	}
	if s := bytes.TrimSpace(res.StructuredContent); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		out.StructuredContent = json.RawMessage(s)
	}
	return out
}
