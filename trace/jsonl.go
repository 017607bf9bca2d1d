package trace

import (
	"encoding/json"
	"io"
)

// JSONL returns a sink writing each event to w as one JSON object per line,
// with one Write call per line, so a crash loses at most the line being
// written. The Tracer serialises calls, so file order is emission order.
func JSONL(w io.Writer) Sink { return &jsonlSink{w: w} }

type jsonlSink struct {
	w   io.Writer
	buf []byte
}

func (s *jsonlSink) WriteEvent(ev Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	s.buf = append(append(s.buf[:0], b...), '\n')
	_, err = s.w.Write(s.buf)
	return err
}
