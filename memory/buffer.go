package memory

import (
	"context"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
)

// DefaultBufferMessages is the cap a [Buffer] uses when none is set.
const DefaultBufferMessages = 20

// BufferOptions configures a [Buffer]. The zero value keeps the last
// [DefaultBufferMessages] messages.
type BufferOptions struct {
	// MaxMessages is the hard cap on non-system messages after compaction.
	// 0 means DefaultBufferMessages; negative is an error.
	MaxMessages int
}

// BufferTaintNote starts the system message a [Buffer] inserts when the
// messages it dropped held external untrusted content: the note carries
// the taint sentinel, so dropping the content does not launder the run's
// taint. It is replaced, not repeated, when found in a persisted history.
const BufferTaintNote = "[Earlier messages holding external untrusted content were dropped]"

// Buffer is a sliding window: it keeps every system message and at most
// MaxMessages of the most recent other messages. It makes no model call and
// remembers nothing, so Recall always returns no message.
//
// Guarantees, for any input: the number of non-system messages returned is
// at most MaxMessages; when it had to cut, the kept tail starts at a user
// message (when the last MaxMessages messages hold none, every non-system
// message is dropped rather than exceeding the cap); an assistant message
// with tool calls and the tool messages answering it are kept or dropped
// together; system messages keep their relative order; the input is never
// modified. When the dropped messages held external untrusted content,
// a system message starting with [BufferTaintNote] and carrying the taint
// sentinel takes their place. A Buffer holds no state and is safe for concurrent use.
type Buffer struct {
	max int
}

var _ Memory = (*Buffer)(nil)

// NewBuffer returns a Buffer, or an error wrapping [ErrInvalidOptions].
func NewBuffer(opts BufferOptions) (*Buffer, error) {
	switch {
	case opts.MaxMessages < 0:
		return nil, invalidf("BufferOptions.MaxMessages is %d; want a positive cap (or 0 for %d)", opts.MaxMessages, DefaultBufferMessages)
	case opts.MaxMessages == 0:
		opts.MaxMessages = DefaultBufferMessages
	}
	return &Buffer{max: opts.MaxMessages}, nil
}

// Compact returns the system messages and the capped tail of msgs. It never
// fails and reports no usage.
func (b *Buffer) Compact(ctx context.Context, msgs []llm.Message) ([]llm.Message, *llm.Usage, error) {
	t := newTranscript(msgs, isBufferNote)
	n := t.len()
	start := 0
	if n > b.max {
		start = n
		for j := n - b.max; j < n; j++ {
			if t.safe[j] {
				start = j
				break
			}
		}
	}
	var note []llm.Message
	if t.ownTainted() || t.anyTainted(0, start) {
		note = []llm.Message{llm.SystemText(BufferTaintNote + "\n" + taintSentinel)}
	}
	return t.tail(start, note...), nil, nil
}

// Recall returns no message: a Buffer keeps nothing it dropped.
func (b *Buffer) Recall(ctx context.Context, query string, k int) ([]llm.Message, error) {
	return nil, nil
}

func isBufferNote(m llm.Message) bool {
	return m.Role == llm.RoleSystem && strings.HasPrefix(m.Text(), BufferTaintNote)
}
