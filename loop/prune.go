package loop

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/llm"
)

// pruneView returns what is sent to the model instead of msgs: every tool
// result older than the keep most recent becomes a short note, in multiples
// of batch so the view stays byte-stable between batches (provider prompt
// caches keep hitting). msgs itself is never modified. It returns msgs
// unchanged when nothing is pruned, and the number of results pruned and
// characters saved otherwise.
func pruneView(msgs []llm.Message, keep, batch int) (view []llm.Message, pruned, saved int) {
	if keep <= 0 {
		return msgs, 0, 0
	}
	total := 0
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			total += len(m.Parts)
		}
	}
	n := total - keep
	if batch > 1 {
		n -= n % batch
	}
	if n <= 0 {
		return msgs, 0, 0
	}
	view = msgs
	copied := false
	for i := 0; i < len(msgs) && n > 0; i++ {
		m := msgs[i]
		if m.Role != llm.RoleTool {
			continue
		}
		var parts []llm.Part
		for j, p := range m.Parts {
			if n == 0 {
				break
			}
			if p.Type != llm.PartToolResult || p.ToolResult == nil {
				continue
			}
			n--
			note, ok := pruneNote(p.ToolResult)
			if !ok {
				continue
			}
			if parts == nil {
				parts = append([]llm.Part(nil), m.Parts...)
			}
			r := *p.ToolResult
			saved += utf8.RuneCountInString(r.Content) - utf8.RuneCountInString(note)
			r.Content = note
			parts[j].ToolResult = &r
			pruned++
		}
		if parts != nil {
			if !copied {
				view = append([]llm.Message(nil), msgs...)
				copied = true
			}
			view[i] = llm.Message{Role: m.Role, Parts: parts}
		}
	}
	return view, pruned, saved
}

const prunedPrefix = "[PRUNED — "

// maxNote is longer than any note pruneNote writes, its frame included.
const maxNote = 400

// pruneNote returns the note that replaces r in the model's view, and false
// when r should stay: a note already, or no longer than its note would be.
// A note is recognised by its opening and its size: a result that merely
// quoted the opening somewhere kept itself in the context for good.
func pruneNote(r *llm.ToolResult) (string, bool) {
	if c := strings.TrimPrefix(r.Content, untrustedOpen+"\n"); strings.HasPrefix(c, prunedPrefix) && utf8.RuneCountInString(r.Content) <= maxNote {
		return "", false
	}
	chars := utf8.RuneCountInString(r.Content)
	var note string
	if r.IsError {
		note = fmt.Sprintf("[PRUNED — the %d-character result of `%s` was dropped from this history to keep the context bounded. That call had FAILED; call the tool again only if you still need it.]", chars, r.Name)
	} else {
		note = fmt.Sprintf("[PRUNED — the %d-character result of `%s` was dropped from this history to keep the context bounded. It was VALID when produced; nothing about it failed. Call the tool again if you still need that data.]", chars, r.Name)
	}
	if r.Untrusted || framed(r.Content) {
		note = untrustedOpen + "\n" + note + "\n" + untrustedClose
	}
	if utf8.RuneCountInString(note) >= chars {
		return "", false
	}
	return note, true
}
