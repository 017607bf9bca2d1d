package sse

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// referenceEvents is a direct, whole-input transcription of the WHATWG
// event-stream grammar (plus our delivery of an unterminated last event),
// written for clarity, not speed. The fuzzer checks the streaming parser
// against it.
func referenceEvents(in string) []Event {
	in = strings.TrimPrefix(in, "\uFEFF")
	var lines []string
	for len(in) > 0 {
		i := strings.IndexAny(in, "\r\n")
		if i < 0 {
			lines = append(lines, in)
			break
		}
		lines = append(lines, in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
	var (
		out     []Event
		data    []string
		typ, id string
	)
	for _, l := range lines {
		if l == "" {
			if data != nil {
				out = append(out, Event{Event: typ, Data: strings.Join(data, "\n"), ID: id})
			}
			data, typ = nil, ""
			continue
		}
		if strings.HasPrefix(l, ":") {
			continue
		}
		name, value, _ := strings.Cut(l, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "data":
			data = append(data, value)
		case "event":
			typ = value
		case "id":
			if !strings.Contains(value, "\x00") {
				id = value
			}
		}
	}
	if data != nil {
		out = append(out, Event{Event: typ, Data: strings.Join(data, "\n"), ID: id})
	}
	return out
}

// chunkReader returns the input in reads of the given sizes, cycling, so
// the fuzzer controls where reads split lines and CRLF pairs.
type chunkReader struct {
	s     string
	sizes []byte
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)])%64 + 1
		c.i++
	}
	n = min(n, len(p), len(c.s))
	copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

func readAll(t *testing.T, r io.Reader) []Event {
	t.Helper()
	var out []Event
	for ev, err := range Read(r) {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		out = append(out, ev)
	}
	return out
}

func FuzzRead(f *testing.F) {
	f.Add("data: {\"a\":1}\n\ndata: [DONE]\n\n", []byte{3})
	f.Add("event: ping\r\ndata: {}\r\n\r\n", []byte{1, 2})
	f.Add("data: a\r\rdata: b", []byte{7})
	f.Add(": comment\ndata:x\ndata: y\n\nid: 3\n\ndata", []byte{0, 5})
	f.Add("\xEF\xBB\xBFdata: bom\r\n", []byte{2})
	f.Fuzz(func(t *testing.T, in string, sizes []byte) {
		want := referenceEvents(in)
		if diff := cmp.Diff(want, readAll(t, strings.NewReader(in))); diff != "" {
			t.Fatalf("whole input differs from reference (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, readAll(t, iotest.OneByteReader(strings.NewReader(in)))); diff != "" {
			t.Fatalf("byte-by-byte differs from reference (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, readAll(t, &chunkReader{s: in, sizes: sizes})); diff != "" {
			t.Fatalf("chunked %v differs from reference (-want +got):\n%s", sizes, diff)
		}
	})
}
