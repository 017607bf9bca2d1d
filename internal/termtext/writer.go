package termtext

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// Writer escapes, on the way to w, what a terminal would obey in output
// that no Name or Text call reached: control characters but line breaks,
// tabs and a carriage return ending a line (CRLF), and the direction
// overrides and isolates. A character is written as a JSON escape
// (\u001b), so JSON output stays valid and means the same; a byte that is
// not UTF-8 as \xNN. The CLI wraps its standard output and error in one,
// as the last line of defence; output meant for a program (an MCP stdio
// stream) uses Raw.
//
// A character split across two writes is held until the next; Flush
// writes what is held. A Writer is not safe for concurrent use, as the
// writers it wraps usually are not.
type Writer struct {
	w    io.Writer
	held []byte // an incomplete character, or a carriage return, at the end of the last write
	out  []byte
}

// NewWriter returns a Writer escaping onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Raw returns the writer underneath, for output that is not for a
// terminal.
func (tw *Writer) Raw() io.Writer { return tw.w }

// Write escapes p onto the underlying writer. It reports len(p) written
// when the underlying write succeeds.
func (tw *Writer) Write(p []byte) (int, error) {
	buf := p
	if len(tw.held) > 0 {
		buf = append(tw.held, p...)
		tw.held = nil
	}
	out := tw.out[:0]
	for i := 0; i < len(buf); {
		c := buf[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\r' && i+1 == len(buf):
				tw.held = append(tw.held, c) // a CRLF split across writes
			case c == '\r' && buf[i+1] == '\n', c == '\n', c == '\t', c >= 0x20 && c != 0x7f:
				out = append(out, c)
			default:
				out = fmt.Appendf(out, `\u%04x`, c)
			}
			i++
			continue
		}
		if !utf8.FullRune(buf[i:]) {
			tw.held = append(tw.held, buf[i:]...)
			break
		}
		r, n := utf8.DecodeRune(buf[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = fmt.Appendf(out, `\x%02x`, c)
		case r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, buf[i:i+n]...)
		}
		i += n
	}
	tw.out = out
	if len(out) > 0 {
		if _, err := tw.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what an unfinished last write left held, escaped.
func (tw *Writer) Flush() error {
	if len(tw.held) == 0 {
		return nil
	}
	held := tw.held
	tw.held = nil
	var out []byte
	for _, c := range held {
		if c >= 0x20 && c < 0x7f {
			out = append(out, c)
		} else if c < utf8.RuneSelf {
			out = fmt.Appendf(out, `\u%04x`, c)
		} else {
			out = fmt.Appendf(out, `\x%02x`, c)
		}
	}
	_, err := tw.w.Write(out)
	return err
}
