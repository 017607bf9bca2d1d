package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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

// referenceLimit says what a Reader with MaxEventSize limit must do with
// in: fail when some event's data alone exceeds the limit, succeed when the
// longest line plus the largest event's data fits (the reader counts the
// line being read on top of the event data already held). Between the two
// either is allowed.
func referenceLimit(in string, want []Event, limit int) (mustFail, mustPass bool) {
	maxData := 0
	for _, ev := range want {
		maxData = max(maxData, len(ev.Data))
	}
	maxLine := 0
	for _, l := range strings.FieldsFunc(in, func(r rune) bool { return r == '\r' || r == '\n' }) {
		maxLine = max(maxLine, len(l))
	}
	return maxData > limit, maxLine+maxData <= limit
}

// checkLimit reads in byte by byte with a size limit: the events before an
// error must be the reference's first ones, the error (last, alone) must be
// ErrEventTooLarge, and whether it comes must agree with [referenceLimit].
func checkLimit(t *testing.T, in string, want []Event, limit int) {
	var got []Event
	var gotErr error
	for ev, err := range (Reader{MaxEventSize: limit}).Events(iotest.OneByteReader(strings.NewReader(in))) {
		if gotErr != nil {
			t.Fatalf("limit %d: an element after the error %v", limit, gotErr)
		}
		if err != nil {
			gotErr = err
			continue
		}
		got = append(got, ev)
	}
	mustFail, mustPass := referenceLimit(in, want, limit)
	switch {
	case gotErr != nil && !errors.Is(gotErr, ErrEventTooLarge):
		t.Fatalf("limit %d: error %v, want ErrEventTooLarge", limit, gotErr)
	case gotErr == nil && mustFail:
		t.Fatalf("limit %d: no error although an event holds more data", limit)
	case gotErr != nil && mustPass:
		t.Fatalf("limit %d: %v although every line and event fits", limit, gotErr)
	case gotErr == nil && !cmp.Equal(want, got):
		t.Fatalf("limit %d: events differ from reference (-want +got):\n%s", limit, cmp.Diff(want, got))
	case len(got) > len(want) || !cmp.Equal(want[:len(got)], got, cmpopts.EquateEmpty()):
		t.Fatalf("limit %d: events before the error are not the reference's first ones (-want +got):\n%s", limit, cmp.Diff(want, got))
	}
}

func FuzzRead(f *testing.F) {
	f.Add("data: {\"a\":1}\n\ndata: [DONE]\n\n", []byte{3})
	// A huge event: a data line longer than the initial buffer, then more.
	f.Add("data: "+strings.Repeat("x", 3*initialLineBuffer)+"\r\n\r\ndata: y\n\n", []byte{63})
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
		// Under a size limit (a few small ones and one near the input's
		// size) the reader fails exactly when an event is too large.
		for _, limit := range []int{1, 8, 64, len(in)/2 + 1} {
			checkLimit(t, in, want, limit)
		}
	})
}
