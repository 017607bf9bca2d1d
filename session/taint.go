package session

import (
	"github.com/autoagent-go/autoagent/internal/marker"
	"github.com/autoagent-go/autoagent/llm"
)

// taintSentinel, in a system message, says the conversation once held
// untrusted content, and taints every run that continues it (the loop's
// marker, internal/marker).
const taintSentinel = marker.TaintSentinel

// PruneTaintNote starts the system message [Store.Prune] leaves in place
// of pruned messages that held untrusted content. It carries the taint
// sentinel, so a session continued after a prune is still tainted: what
// the model wrote after reading the content is kept, and may repeat it.
const PruneTaintNote = "[Earlier messages holding external untrusted content were pruned]"

// TurnTaintNote starts the system message [TurnToStore] puts before a
// turn whose run was tainted by content the session does not keep (the
// facts a memory showed, a caller's taint).
const TurnTaintNote = "[This turn's run had seen external untrusted content not kept in the session]"

// isTainted reports whether m carries untrusted content or the sentinel.
func isTainted(m llm.Message) bool { return marker.Tainted(m) }

func anyTainted(msgs []llm.Message) bool {
	for _, m := range msgs {
		if isTainted(m) {
			return true
		}
	}
	return false
}

// TurnToStore returns what to append to a session for a turn (see
// [TurnOf]): the turn itself, preceded by a system message starting with
// [TurnTaintNote] and carrying the taint sentinel when the run was
// tainted but neither history (the session's messages the run was given)
// nor the turn shows it. The content that tainted the run (the facts a
// memory showed, a compacted part) is not stored, and what the model
// wrote after reading it would otherwise be continued as trusted.
func TurnToStore(history, turn []llm.Message, tainted bool) []llm.Message {
	if !tainted || anyTainted(history) || anyTainted(turn) {
		return turn
	}
	return append([]llm.Message{llm.SystemText(TurnTaintNote + "\n" + taintSentinel)}, turn...)
}
