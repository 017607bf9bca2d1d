// Package sse reads Server-Sent Events streams as model providers send them.
//
//	for ev, err := range sse.Read(resp.Body) {
//		if err != nil {
//			return err // a read error, or ErrEventTooLarge
//		}
//		if ev.Data == "[DONE]" {
//			break
//		}
//		handle(ev.Event, ev.Data)
//	}
//
// # What it accepts
//
// The parser follows the WHATWG event-stream grammar: lines end in LF, CRLF
// or a lone CR (Gemini separates events with "\r\n\r\n"); a blank line ends an
// event; lines starting with ':' are comments and are skipped; "data" lines
// are joined with "\n"; one space after the field's colon is removed (so
// trailing spaces in the value are kept: Anthropic sends some after its
// JSON); a leading UTF-8 byte-order mark is dropped; unknown fields and
// "retry" are ignored.
//
// One deliberate departure: an event that the stream ends without a blank
// line after (no trailing newline) is still delivered, because several
// servers close the connection right after their last data line. A blank
// line with no data before it delivers nothing.
//
// # Limits and errors
//
// An event (its data plus the line being read) larger than the limit
// (DefaultMaxEventSize for [Read], Reader.MaxEventSize otherwise) ends the
// sequence with an error wrapping [ErrEventTooLarge], so a hostile or broken
// server cannot make the reader buffer without bound. A read error from the
// underlying reader is yielded unchanged as the last element; io.EOF is the
// normal end and is not yielded.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
)

// DefaultMaxEventSize is the event-size limit of [Read]: 16 MiB, room for a
// streamed inline image while bounding what a broken server can make us hold.
const DefaultMaxEventSize = 16 << 20

// ErrEventTooLarge is wrapped by the error yielded when an event exceeds the
// reader's size limit.
var ErrEventTooLarge = errors.New("sse: event exceeds the size limit")

// Event is one dispatched server-sent event.
type Event struct {
	// Event is the value of the event's "event" field, or "" when it had
	// none (the specification's default type "message").
	Event string
	// Data is the event's data lines joined with "\n".
	Data string
	// ID is the last event id seen so far in the stream (it persists across
	// events, as the specification says), or "".
	ID string
}

// Reader reads events with a configurable size limit. The zero value uses
// DefaultMaxEventSize.
type Reader struct {
	// MaxEventSize caps the bytes of one event; 0 means DefaultMaxEventSize.
	MaxEventSize int
}

// Read returns the events of the stream r with the default size limit. The
// sequence is single-use: it reads r as it is iterated and stops reading
// when the loop stops. It never closes r.
func Read(r io.Reader) iter.Seq2[Event, error] {
	return Reader{}.Events(r)
}

// Events returns the events of the stream r. See [Read].
func (rd Reader) Events(r io.Reader) iter.Seq2[Event, error] {
	limit := rd.MaxEventSize
	if limit <= 0 {
		limit = DefaultMaxEventSize
	}
	return func(yield func(Event, error) bool) {
		ls := lineScanner{r: r, max: limit}
		var (
			data    []byte
			hasData bool
			typ     string
			lastID  string
			first   = true
		)
		for {
			line, err := ls.next(len(data))
			if err != nil {
				if errors.Is(err, io.EOF) {
					// Deliver an event left without its closing blank line.
					if hasData {
						yield(Event{Event: typ, Data: string(data), ID: lastID}, nil)
					}
					return
				}
				yield(Event{}, err)
				return
			}
			if first {
				first = false
				if len(line) >= 3 && line[0] == 0xEF && line[1] == 0xBB && line[2] == 0xBF {
					line = line[3:]
				}
			}
			if len(line) == 0 {
				if hasData {
					ev := Event{Event: typ, Data: string(data), ID: lastID}
					data, hasData, typ = data[:0], false, ""
					if !yield(ev, nil) {
						return
					}
				} else {
					typ = ""
				}
				continue
			}
			if line[0] == ':' {
				continue
			}
			name, value, _ := bytes.Cut(line, []byte{':'})
			value = bytes.TrimPrefix(value, []byte{' '})
			switch string(name) {
			case "data":
				if hasData {
					data = append(data, '\n')
				}
				data = append(data, value...)
				hasData = true
				if len(data) > limit {
					yield(Event{}, fmt.Errorf("%w (%d bytes)", ErrEventTooLarge, limit))
					return
				}
			case "event":
				typ = string(value)
			case "id":
				if bytes.IndexByte(value, 0) < 0 {
					lastID = string(value)
				}
			}
		}
	}
}
