package trace

import "io"

// JSONL returns a sink writing each event to w as one JSON object per line,
// with one Write call per line, so a crash loses at most the line being
// written. The Tracer serialises calls, so file order is emission order.
func JSONL(w io.Writer) Sink { return &jsonlSink{w: w} }

type jsonlSink struct {
	w   io.Writer
	buf []byte
}

func (s *jsonlSink) WriteEvent(ev Event) error {
	return s.writeLine(appendEvent(s.buf[:0], &ev))
}

// writeLine writes line, one encoded event, and its newline in one Write
// call. line's storage becomes the buffer of the next line.
func (s *jsonlSink) writeLine(line []byte) error {
	s.buf = append(line, '\n')
	_, err := s.w.Write(s.buf)
	return err
}
