package mcp

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// nopReadCloser and nopBuilderCloser give a reader and a strings.Builder
// the Close drain needs.
type nopReadCloser struct{ io.Reader }

func (nopReadCloser) Close() error { return nil }

type nopBuilderCloser struct{ strings.Builder }

func (*nopBuilderCloser) Close() error { return nil }

// The transport decodes a request as soon as its JSON value is complete,
// so it may answer it before the line's newline is read (or, for a last
// request without one, before the end of input): drain must not then wait
// at the end of input for an answer already written.
func TestDrainAnswerBeforeTheNewline(t *testing.T) {
	for _, end := range []string{"", "\n"} {
		req := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		in := io.MultiReader(strings.NewReader(req), strings.NewReader(end))
		d := newDrain(context.Background(), time.Hour, nopReadCloser{in}, &nopBuilderCloser{})
		r, w := d.reader(), d.writer()
		buf := make([]byte, 512)
		if n, err := r.Read(buf); n != len(req) || err != nil {
			t.Fatalf("read %d, %v", n, err)
		}
		if _, err := w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}` + "\n")); err != nil {
			t.Fatal(err)
		}
		read := make(chan error, 1)
		go func() {
			var err error
			for err == nil {
				_, err = r.Read(buf)
			}
			read <- err
		}()
		select {
		case err := <-read:
			if err != io.EOF {
				t.Fatalf("end %q: err = %v, want EOF", end, err)
			}
		case <-time.After(10 * time.Second): // far beyond a prompt EOF, far short of the hour
			r.Close() // ends the wait: no goroutine outlives the test
			t.Fatalf("end %q: the end of input waits for a request already answered", end)
		}
	}
}

// TestDrainCrossesOffCancelledRequests: a request the client cancelled is
// not awaited at the end of input, even when no answer for it is ever
// written (the specification lets a server leave a cancelled request
// unanswered; the SDK of today answers it, which the ServeIO tests see).
func TestDrainCrossesOffCancelledRequests(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block"}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"block"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}`,
	}, "\n") + "\n"
	d := newDrain(context.Background(), time.Hour, nopReadCloser{strings.NewReader(in)}, &nopBuilderCloser{})
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(d.reader())
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the end of input waits for requests the client cancelled")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.pending) != 0 {
		t.Errorf("still pending: %v", d.pending)
	}
}
