package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// collect reads every event of r, failing the test on an error.
func collect(t *testing.T, rd Reader, r io.Reader) []Event {
	t.Helper()
	var out []Event
	for ev, err := range rd.Events(r) {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		out = append(out, ev)
	}
	return out
}

func TestRead(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Event
	}{
		{"lf", "data: a\n\ndata: b\n\n", []Event{{Data: "a"}, {Data: "b"}}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []Event{{Data: "a"}, {Data: "b"}}},
		{"cr", "data: a\r\rdata: b\r\r", []Event{{Data: "a"}, {Data: "b"}}},
		{"mixed", "data: a\r\n\ndata: b\r\r\n", []Event{{Data: "a"}, {Data: "b"}}},
		{"multi-line data joined with LF", "data: a\ndata:b\ndata:  c\n\n", []Event{{Data: "a\nb\n c"}}},
		{"comments skipped", ": ping\ndata: a\n:\n\n: trailing\n\n", []Event{{Data: "a"}}},
		{"event type and id", "event: message_start\nid: 7\ndata: {}\n\n", []Event{{Event: "message_start", Data: "{}", ID: "7"}}},
		{"id persists, type resets", "event: x\nid: 1\ndata: a\n\ndata: b\n\n", []Event{{Event: "x", Data: "a", ID: "1"}, {Data: "b", ID: "1"}}},
		{"blank line without data dispatches nothing", "event: ping\n\ndata: a\n\n", []Event{{Data: "a"}}},
		{"empty data line is an event", "data:\n\n", []Event{{Data: ""}}},
		{"no trailing newline", "data: a\n\ndata: b", []Event{{Data: "a"}, {Data: "b"}}},
		{"no trailing blank line", "data: a\n", []Event{{Data: "a"}}},
		{"trailing spaces kept", "data: {\"x\":1}  \n\n", []Event{{Data: "{\"x\":1}  "}}},
		{"field without colon", "data\n\n", []Event{{Data: ""}}},
		{"unknown field and retry ignored", "retry: 100\nfoo: bar\ndata: a\n\n", []Event{{Data: "a"}}},
		{"bom dropped", "\xEF\xBB\xBFdata: a\n\n", []Event{{Data: "a"}}},
		{"id with NUL ignored", "id: a\x00b\ndata: a\n\n", []Event{{Data: "a"}}},
		{"colon in value kept", "data: a: b\n\n", []Event{{Data: "a: b"}}},
		{"gemini separators", "data: {\"a\":1}\r\n\r\ndata: {\"a\":2}\r\n\r\n", []Event{{Data: `{"a":1}`}, {Data: `{"a":2}`}}},
		{"empty stream", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := collect(t, Reader{}, strings.NewReader(tt.in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			// The same bytes delivered one at a time must give the same
			// events: a line or CRLF split across reads is the common case
			// on a real connection.
			got = collect(t, Reader{}, iotest.OneByteReader(strings.NewReader(tt.in)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events read byte by byte (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadEventTooLarge(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"one long line", "data: " + strings.Repeat("x", 200) + "\n\n"},
		{"many short lines", strings.Repeat("data: xxxxxxxxxx\n", 30) + "\n"},
		{"long line without terminator", "data: " + strings.Repeat("x", 200)},
		{"long comment", ":" + strings.Repeat("x", 200) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotErr error
			n := 0
			for _, err := range (Reader{MaxEventSize: 100}).Events(strings.NewReader(tt.in)) {
				n++
				gotErr = err
			}
			if !errors.Is(gotErr, ErrEventTooLarge) {
				t.Fatalf("error = %v, want ErrEventTooLarge", gotErr)
			}
			if n != 1 {
				t.Errorf("got %d elements, want only the error", n)
			}
		})
	}
}

func TestReadLargeEventWithinLimit(t *testing.T) {
	big := strings.Repeat("y", 3*initialLineBuffer)
	got := collect(t, Reader{}, strings.NewReader("data: "+big+"\n\ndata: z\n\n"))
	if len(got) != 2 || got[0].Data != big || got[1].Data != "z" {
		t.Fatalf("got %d events, first %d bytes; want the big event then z", len(got), len(got[0].Data))
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: partial"), iotest.ErrReader(boom))
	var events []Event
	var gotErr error
	for ev, err := range Read(r) {
		if err != nil {
			gotErr = err
			continue
		}
		events = append(events, ev)
	}
	// The complete event is delivered; the partial one is not, because the
	// stream did not end cleanly.
	if diff := cmp.Diff([]Event{{Data: "a"}}, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if !errors.Is(gotErr, boom) {
		t.Errorf("error = %v, want the reader's error", gotErr)
	}
}

func TestReadStopsWhenYieldReturnsFalse(t *testing.T) {
	r := &countingReader{r: strings.NewReader("data: a\n\n" + strings.Repeat("data: b\n\n", 100000))}
	for ev, err := range Read(r) {
		if err != nil || ev.Data != "a" {
			t.Fatalf("first event = %+v, %v", ev, err)
		}
		break
	}
	if r.n > initialLineBuffer {
		t.Errorf("read %d bytes after the loop stopped at the first event; want at most one buffer", r.n)
	}
}

func TestReadNoProgress(t *testing.T) {
	var gotErr error
	for _, err := range Read(zeroReader{}) {
		gotErr = err
	}
	if !errors.Is(gotErr, io.ErrNoProgress) {
		t.Fatalf("error = %v, want io.ErrNoProgress", gotErr)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }
