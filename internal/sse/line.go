package sse

import (
	"bytes"
	"fmt"
	"io"
)

// lineScanner splits a stream into lines ending in LF, CRLF or a lone CR,
// without waiting for more input once a line is complete (a bufio.Scanner
// that only splits on LF would stall a CR-terminated stream).
type lineScanner struct {
	r     io.Reader
	max   int
	buf   []byte
	start int // first unread byte in buf
	end   int // end of valid bytes in buf
	// skipLF is set after a line ended in CR at the end of the buffered
	// bytes: if the next byte is LF it belongs to that CRLF.
	skipLF bool
	err    error
}

const initialLineBuffer = 4 << 10

// next returns the next line without its terminator. The slice is valid
// until the following call. pending is the size of the event data already
// held, so the limit covers the whole event. At the end of the stream it
// returns the unterminated last line, if any, then the reader's error.
func (s *lineScanner) next(pending int) ([]byte, error) {
	for {
		if s.skipLF && s.start < s.end {
			if s.buf[s.start] == '\n' {
				s.start++
			}
			s.skipLF = false
		}
		if line, ok := s.cut(); ok {
			if len(line)+pending > s.max {
				return nil, fmt.Errorf("%w (%d bytes)", ErrEventTooLarge, s.max)
			}
			return line, nil
		}
		if s.err != nil {
			if s.start < s.end {
				line := s.buf[s.start:s.end]
				s.start = s.end
				return line, nil
			}
			return nil, s.err
		}
		if s.end-s.start+pending > s.max {
			return nil, fmt.Errorf("%w (%d bytes)", ErrEventTooLarge, s.max)
		}
		s.fill()
	}
}

// cut returns the first complete line of the buffered bytes.
func (s *lineScanner) cut() ([]byte, bool) {
	b := s.buf[s.start:s.end]
	lf := bytes.IndexByte(b, '\n')
	search := b
	if lf >= 0 {
		search = b[:lf]
	}
	if cr := bytes.IndexByte(search, '\r'); cr >= 0 {
		line := b[:cr]
		switch {
		case cr+1 < len(b) && b[cr+1] == '\n':
			s.start += cr + 2
		case cr+1 == len(b):
			s.start += cr + 1
			s.skipLF = true
		default:
			s.start += cr + 1
		}
		return line, true
	}
	if lf >= 0 {
		s.start += lf + 1
		return b[:lf], true
	}
	return nil, false
}

// fill reads more bytes, compacting or growing the buffer first.
func (s *lineScanner) fill() {
	if s.buf == nil {
		s.buf = make([]byte, initialLineBuffer)
	}
	if s.start > 0 {
		n := copy(s.buf, s.buf[s.start:s.end])
		s.start, s.end = 0, n
	}
	if s.end == len(s.buf) {
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	// A reader may return (0, nil); retry a bounded number of times, as
	// bufio does, before calling it a broken reader.
	for range 100 {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	s.err = io.ErrNoProgress
}
