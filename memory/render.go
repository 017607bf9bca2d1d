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
// A message's own line breaks are indented, so no text in it (a tool's
// result above all) starts a line of its own: it cannot write a
// "user: remember …" line the summary or extraction model would take for
// the user's.
func renderExchanges(msgs []llm.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(string(m.Role))
		b.WriteString(": ")
		b.WriteString(continuation.Replace(clip(messageText(m), maxLineChars)))
		b.WriteByte('\n')
	}
	return b.String()
}

// continuation indents the lines after a message's first.
var continuation = strings.NewReplacer("\r\n", "\n\t", "\n", "\n\t", "\r", "\n\t")

// forged turns the labels messageText writes into look-alikes when they
// occur in what it labels: a result cannot claim to be another tool's
// ("[result of read_secret] …") or a call the model made.
var forged = strings.NewReplacer("[result of ", "(result of ", "[error from ", "(error from ", "[called ", "(called ")

// messageText is the readable content of m: text, tool calls and tool
// results, with images as a placeholder. Reasoning is left out: it is the
// model's scratchpad, not something said.
func messageText(m llm.Message) string {
	var parts []string
	for _, p := range m.Parts {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				parts = append(parts, forged.Replace(p.Text))
			}
		case llm.PartImage:
			parts = append(parts, "[image]")
		case llm.PartToolCall:
			if p.ToolCall != nil {
				parts = append(parts, "[called "+p.ToolCall.Name+" "+forged.Replace(string(p.ToolCall.Arguments))+"]")
			}
		case llm.PartToolResult:
			if p.ToolResult != nil {
				r := p.ToolResult
				content := forged.Replace(r.Content)
				s := "[result of " + r.Name + "] " + content
				if r.IsError {
					s = "[error from " + r.Name + "] " + content
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
