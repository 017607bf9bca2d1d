package mcp

import (
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every MCP content kind survives the way through a tool.Result and back,
// annotations included: a server bridged by mcp serve loses nothing.
func TestContentRoundTrip(t *testing.T) {
	size := int64(42)
	ann := &sdk.Annotations{Audience: []sdk.Role{"user"}, Priority: 0.5, LastModified: "2026-12-01T00:00:00Z"}
	in := &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: "hello", Annotations: ann},
		&sdk.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
		&sdk.AudioContent{Data: []byte{1, 2, 3}, MIMEType: "audio/wav", Annotations: ann},
		&sdk.ResourceLink{URI: "file:///a.txt", Name: "a", Title: "A", Description: "the a file", MIMEType: "text/plain", Size: &size, Annotations: ann},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "memo://t", MIMEType: "text/plain", Text: "some text"}},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "memo://b", MIMEType: "application/octet-stream", Blob: []byte{0, 255, 7}}, Annotations: ann},
	}}
	res, err := fromMCP(in, "t")
	if err != nil {
		t.Fatal(err)
	}
	if res.Content[3].Type != "resource_link" || *res.Content[3].Size != 42 || res.Content[5].Data != "AP8H" || len(res.Content[0].Annotations) == 0 {
		t.Errorf("typed content: %+v", res.Content)
	}
	want, _ := json.Marshal(in)
	got, _ := json.Marshal(toMCP(res))
	if string(got) != string(want) {
		t.Errorf("round trip:\n got  %s\n want %s", got, want)
	}
	if text := res.Text(); text != "hello\n[image image/png]\n[audio audio/wav]\n[resource link file:///a.txt (a)]\nsome text\n[resource memo://b (application/octet-stream, 3 bytes of binary data)]" {
		t.Errorf("what the model reads: %q", text)
	}
}
