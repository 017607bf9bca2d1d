package memory

import (
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

// isTainted reports whether m carries external content or the sentinel.
func isTainted(m llm.Message) bool {
	if m.Role == llm.RoleSystem {
		return strings.Contains(m.Text(), taintSentinel)
	}
	if strings.Contains(m.Text(), untrustedOpen) {
		return true
	}
	for _, r := range m.ToolResults() {
		if strings.Contains(r.Content, untrustedOpen) {
			return true
		}
	}
	return false
}

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
