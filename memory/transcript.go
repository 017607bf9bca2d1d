package memory

import (
	"crypto/sha256"
	"encoding/json"

	"github.com/autoagent-go/autoagent/llm"
)

// transcript is a read-only view of the messages given to Compact: where the
// non-system messages are, which of them may start a kept tail, and a
// fingerprint of every prefix so a memory can recognise a conversation it
// has already folded.
type transcript struct {
	msgs []llm.Message
	// nonSys holds the indices in msgs of the non-system messages that
	// belong to the conversation (in-band memory messages excluded).
	nonSys []int
	// safe[j] reports that the tail may start at nonSys[j]: a user message
	// that no later tool result ties to an earlier tool call.
	safe []bool
	// isOwn marks the memory's own in-band messages (summaries, fact
	// blocks) so they are dropped and re-injected, never duplicated.
	isOwn []bool
}

// newTranscript analyses msgs. own reports the memory's in-band messages.
func newTranscript(msgs []llm.Message, own func(llm.Message) bool) *transcript {
	t := &transcript{msgs: msgs, isOwn: make([]bool, len(msgs))}
	for i, m := range msgs {
		if own != nil && own(m) {
			t.isOwn[i] = true
			continue
		}
		if m.Role != llm.RoleSystem {
			t.nonSys = append(t.nonSys, i)
		}
	}
	n := len(t.nonSys)
	t.safe = make([]bool, n)
	for j, i := range t.nonSys {
		t.safe[j] = msgs[i].Role == llm.RoleUser
	}
	// A tool result at position p answering a call made at position q < p
	// forbids a tail starting anywhere in (q, p]: the call and its results
	// are kept or dropped together, even in malformed transcripts where a
	// user message sits between them.
	callAt := make(map[string]int)
	for j, i := range t.nonSys {
		m := msgs[i]
		for _, r := range m.ToolResults() {
			if q, ok := callAt[r.CallID]; ok {
				for k := q + 1; k <= j; k++ {
					t.safe[k] = false
				}
			}
		}
		for _, c := range m.ToolCalls() {
			callAt[c.ID] = j
		}
	}
	return t
}

// len returns the number of conversation (non-system) messages.
func (t *transcript) len() int { return len(t.nonSys) }

// at returns the j-th conversation message.
func (t *transcript) at(j int) llm.Message { return t.msgs[t.nonSys[j]] }

// tail returns the output for a tail starting at conversation message start
// (start == len drops every conversation message): the system messages that
// precede the tail, then inject, then everything from the tail on, with
// system messages kept in place. The memory's own in-band messages are
// dropped. The result is a new slice; msgs is never modified.
func (t *transcript) tail(start int, inject ...llm.Message) []llm.Message {
	cut := len(t.msgs)
	if start < len(t.nonSys) {
		cut = t.nonSys[start]
	}
	out := make([]llm.Message, 0, len(t.msgs)-cut+len(inject)+4)
	for i := 0; i < cut; i++ {
		if !t.isOwn[i] && t.msgs[i].Role == llm.RoleSystem {
			out = append(out, t.msgs[i])
		}
	}
	out = append(out, inject...)
	for i := cut; i < len(t.msgs); i++ {
		if !t.isOwn[i] {
			out = append(out, t.msgs[i])
		}
	}
	return out
}

// foldPoint returns where to start the kept tail when the conversation
// messages from covered on are too many: about keepRecent messages from the
// end, moved forward to the next safe boundary, or backward when there is
// none after it. It returns -1 when no boundary folds anything.
func (t *transcript) foldPoint(covered, keepRecent int) int {
	n := t.len()
	want := max(n-keepRecent, covered+1)
	for j := want; j < n; j++ {
		if t.safe[j] {
			return j
		}
	}
	for j := want - 1; j > covered; j-- {
		if t.safe[j] {
			return j
		}
	}
	return -1
}

// chain returns h[0..n]: h[0] is seed and h[i] fingerprints the first i
// conversation messages, so equal prefixes (and only those) share a hash.
func (t *transcript) chain(seed [32]byte) [][32]byte {
	h := make([][32]byte, t.len()+1)
	h[0] = seed
	for j := range t.nonSys {
		d := sha256.New()
		d.Write(h[j][:])
		d.Write(encodeMessage(t.at(j)))
		copy(h[j+1][:], d.Sum(nil))
	}
	return h
}

// encodeMessage is the canonical byte form used for fingerprints.
func encodeMessage(m llm.Message) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		// Message holds only JSON-safe types; keep a distinct, stable
		// fallback rather than conflating messages.
		return []byte(string(m.Role) + "\x01" + m.Text())
	}
	return b
}

// seedOf returns the chain seed for an optional carried-over state text.
func seedOf(s string) [32]byte {
	if s == "" {
		return [32]byte{}
	}
	return sha256.Sum256([]byte(s))
}
