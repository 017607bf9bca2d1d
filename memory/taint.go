package memory

import (
	"context"
	"slices"
	"strings"

	"github.com/autoagent-go/autoagent/internal/marker"
	"github.com/autoagent-go/autoagent/llm"
)

// The taint markers shared with the agent loop. A tool message holding
// untrustedOpen carries external content; a system message holding
// taintSentinel says the conversation once did. A memory that folds
// tainted messages away must leave the sentinel behind, or compaction would
// launder the taint and disarm the loop's egress guard.
const (
	untrustedOpen  = marker.UntrustedOpen
	untrustedClose = marker.UntrustedClose
	taintSentinel  = marker.TaintSentinel
)

type taintKey struct{}

// WithTaint returns ctx saying that its caller has seen untrusted content:
// what a memory learns under it is untrusted too. A [Fact] memory stores
// the facts it remembers or extracts under it as Tainted; a [Summarizing]
// memory frames its summary. The agent loop passes it to Compact when the
// run is tainted; package memtool passes it to Remember when the calling
// tool's run is (tool.Tainted), and so must any other tool that stores
// what a model says.
func WithTaint(ctx context.Context) context.Context {
	return context.WithValue(ctx, taintKey{}, true)
}

// TaintedContext reports whether ctx says its caller has seen untrusted
// content (see [WithTaint]).
func TaintedContext(ctx context.Context) bool {
	v, _ := ctx.Value(taintKey{}).(bool)
	return v
}

// IsTainted reports whether m carries untrusted content: framed as data,
// or the taint sentinel. A tool that shows a model what a memory recalled
// asks it of each message, and reports taint when any is.
func IsTainted(m llm.Message) bool { return isTainted(m) }

// isTainted reports whether m carries external content or the sentinel.
func isTainted(m llm.Message) bool { return marker.Tainted(m) }

// anyTainted reports whether any of the conversation messages [from, to)
// of t is tainted.
func (t *transcript) anyTainted(from, to int) bool {
	for j := from; j < to; j++ {
		if isTainted(t.at(j)) {
			return true
		}
	}
	return false
}

// ownTainted reports whether one of the memory's own in-band messages
// carried the sentinel.
func (t *transcript) ownTainted() bool {
	for i, own := range t.isOwn {
		if own && strings.Contains(t.msgs[i].Text(), taintSentinel) {
			return true
		}
	}
	return false
}

// frameUntrusted wraps text derived from external content so a model reads
// it as data. Whatever inside it reads as a marker, in any spelling, is
// defused first (package internal/marker, as the loop does), so the
// content can neither close the frame early nor forge a note.
func frameUntrusted(text string) string {
	return untrustedOpen + "\n" + marker.Defuse(text) + "\n" + untrustedClose
}

// FrameMessage returns m with the text it carries (its text parts and
// tool results) framed as untrusted data, unless framed already: what a
// model then reads of it is data, and a run that reads it is tainted
// (IsTainted). m itself is not changed. For memories that cannot tell
// which of their contents are untrusted (memory/remote frames what a
// backend recalls when the backend does not keep taint).
//
// A system message (a memory's in-band summary or facts) carries the
// taint sentinel, as a memory's own tainted summary does, after its first
// line when that is a bracketed header ("[Summary of the earlier …]"),
// and its text framed.
func FrameMessage(m llm.Message) llm.Message {
	if m.Role == llm.RoleSystem {
		text := m.Text()
		if isTainted(m) {
			return m
		}
		head, body := "", text
		if first, rest, ok := strings.Cut(text, "\n"); ok && strings.HasPrefix(first, "[") && strings.HasSuffix(first, "]") {
			head, body = first+"\n", rest
		}
		return llm.SystemText(head + taintSentinel + "\n" + frameUntrusted(body))
	}
	m.Parts = slices.Clone(m.Parts)
	return frameMessage(m)
}

// frameMessage frames the text m carries (its text parts and tool
// results) as untrusted data, unless it is framed already; m is a copy the
// caller owns.
func frameMessage(m llm.Message) llm.Message {
	for i := range m.Parts {
		p := &m.Parts[i]
		switch {
		case p.Type == llm.PartText && p.Text != "" && !strings.HasPrefix(p.Text, untrustedOpen):
			p.Text = frameUntrusted(p.Text)
		case p.Type == llm.PartToolResult && p.ToolResult != nil && !strings.HasPrefix(p.ToolResult.Content, untrustedOpen):
			r := *p.ToolResult
			r.Content = frameUntrusted(r.Content)
			p.ToolResult = &r
		}
	}
	return m
}
