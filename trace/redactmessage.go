package trace

import "github.com/autoagent-go/autoagent/llm"

// RedactMessage returns a copy of m with every string redacted. Opaque
// provider tokens (signatures) are kept: they are not secrets, and some
// providers require them back unchanged.
func RedactMessage(m llm.Message) llm.Message {
	out := llm.Message{Role: m.Role, Parts: make([]llm.Part, len(m.Parts))}
	for i, p := range m.Parts {
		p.Text = Redact(p.Text)
		if p.ToolCall != nil {
			c := *p.ToolCall
			c.Arguments = RedactJSON(c.Arguments)
			p.ToolCall = &c
		}
		if p.ToolResult != nil {
			tr := *p.ToolResult
			tr.Content = Redact(tr.Content)
			p.ToolResult = &tr
		}
		if p.Image != nil && p.Image.URL != "" {
			img := *p.Image
			img.URL = Redact(img.URL)
			p.Image = &img
		}
		out.Parts[i] = p
	}
	return out
}
