package memory

import (
	"strings"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/llm"
)

// maxLineChars bounds each message line shown to the summary and
// extraction models: one huge tool result must not crowd out the rest.
const maxLineChars = 2000

// renderExchanges writes msgs as "role: content" lines for a memory prompt.
func renderExchanges(msgs []llm.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(string(m.Role))
		b.WriteString(": ")
		b.WriteString(clip(messageText(m), maxLineChars))
		b.WriteByte('\n')
	}
	return b.String()
}

// messageText is the readable content of m: text, tool calls and tool
// results, with images as a placeholder. Reasoning is left out: it is the
// model's scratchpad, not something said.
func messageText(m llm.Message) string {
	var parts []string
	for _, p := range m.Parts {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				parts = append(parts, p.Text)
			}
		case llm.PartImage:
			parts = append(parts, "[image]")
		case llm.PartToolCall:
			if p.ToolCall != nil {
				parts = append(parts, "[called "+p.ToolCall.Name+" "+string(p.ToolCall.Arguments)+"]")
			}
		case llm.PartToolResult:
			if p.ToolResult != nil {
				r := p.ToolResult
				s := "[result of " + r.Name + "] " + r.Content
				if r.IsError {
					s = "[error from " + r.Name + "] " + r.Content
				}
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, " ")
}

// clip shortens s to at most n runes, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}
