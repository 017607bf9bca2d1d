package loop

import (
	"strings"

	"github.com/autoagent-go/autoagent/internal/marker"
	"github.com/autoagent-go/autoagent/llm"
)

// The untrusted-content markers (internal/marker). The result of a tool
// flagged untrusted is sent to the model as
//
//	UntrustedOpen + "\n" + content + "\n" + UntrustedClose
//
// and the run becomes tainted. TaintSentinel, in a system message, marks a
// transcript whose earlier (compacted) part held untrusted content, so taint
// survives memory compaction. A program tells an untrusted result by
// llm.ToolResult.Untrusted and a tainted transcript by IsTainted, never by
// the markers' text, which is why they are not exported.
//
// Whatever in the content a model could read as a marker is defused
// first: not only these spellings but any that folds to one (case, width,
// look-alike letters of other scripts, invisible characters, escapes and
// character references, other spaces and dashes), and the near-spellings
// that keep two of its words ("[/EXTERNAL UNTRUSTED]") or its slash
// ("[/EXTERNAL]"). The span is replaced by "[marker removed]" (or "[cut]"),
// so a page can neither close the frame early nor open a new one.
const (
	untrustedOpen  = marker.UntrustedOpen
	untrustedClose = marker.UntrustedClose
	taintSentinel  = marker.TaintSentinel
)

// frameUntrusted wraps content in the untrusted markers, defusing the
// markers forged inside it first.
func frameUntrusted(content string) string {
	return untrustedOpen + "\n" + marker.Defuse(content) + "\n" + untrustedClose
}

// framed reports whether content holds the untrusted frame. It is the one
// place the loop reads taint from text, for what carries it nowhere else:
// a caller's history, a session, or a result of a state written before
// llm.ToolResult.Untrusted. A forged frame only taints (see frameUntrusted).
func framed(content string) bool { return strings.Contains(content, untrustedOpen) }

// IsTainted reports whether msgs hold untrusted content: a tool result
// framed as untrusted, or a system message carrying the taint sentinel.
// The loop seeds a run's taint from it (or from the RunState on resume).
func IsTainted(msgs []llm.Message) bool {
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleTool:
			for _, r := range m.ToolResults() {
				if r.Untrusted || framed(r.Content) {
					return true
				}
			}
		case llm.RoleSystem:
			if strings.Contains(m.Text(), taintSentinel) {
				return true
			}
		}
	}
	return false
}
