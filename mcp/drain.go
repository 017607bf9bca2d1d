package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// drain lets a stdio session finish what it was asked before it ends.
// A client may write its requests and close its end at once
// (`printf '…' | autoagent mcp serve`); the SDK ends the session at the
// end of input and would drop the answers still being worked on. drain
// sits on both sides of the stream: it notes the id of every request read
// and crosses it off when its response is written, and it holds back the
// end of input until nothing is outstanding, for at most grace: a request
// whose handler waits for the session to end would otherwise keep it open
// for ever. It stops waiting at once when ctx ends or a write fails (the
// client is gone: nothing more can reach it). It never changes a byte of
// either stream.
type drain struct {
	ctx   context.Context
	grace time.Duration

	mu      sync.Mutex
	pending map[string]bool // ids of requests read and not yet answered
	// early counts the answers written before their request's line ended:
	// the transport decodes a message as soon as its JSON value is
	// complete, before the newline (or the end of input) that lets drain
	// note it.
	early map[string]int
	idle  chan struct{} // closed, and replaced, whenever pending empties

	in     io.ReadCloser
	inLine []byte // the incomplete line read so far
	ended  bool   // in reached its end and the last line was noted

	out     io.WriteCloser
	outLine []byte

	closeOnce sync.Once
	closed    chan struct{} // the transport closed the reader: stop waiting
	goneOnce  sync.Once
	gone      chan struct{} // a write failed
}

func newDrain(ctx context.Context, grace time.Duration, r io.ReadCloser, w io.WriteCloser) *drain {
	return &drain{ctx: ctx, grace: grace, pending: map[string]bool{}, early: map[string]int{}, idle: make(chan struct{}),
		in: r, out: w, closed: make(chan struct{}), gone: make(chan struct{})}
}

// reader and writer are the two sides handed to the transport.
func (d *drain) reader() io.ReadCloser  { return drainReader{d} }
func (d *drain) writer() io.WriteCloser { return drainWriter{d} }

type drainReader struct{ d *drain }

func (r drainReader) Read(p []byte) (int, error) {
	d := r.d
	if d.ended {
		d.wait()
		return 0, io.EOF
	}
	n, err := d.in.Read(p)
	d.inLine = scanLines(append(d.inLine, p[:n]...), d.noteRequest)
	if err == io.EOF {
		// A last message without its newline is still a message.
		d.noteRequest(d.inLine)
		d.inLine, d.ended = nil, true
		if n > 0 {
			return n, nil
		}
		d.wait()
	}
	return n, err
}

func (r drainReader) Close() error {
	r.d.closeOnce.Do(func() { close(r.d.closed) })
	return r.d.in.Close()
}

type drainWriter struct{ d *drain }

func (w drainWriter) Write(p []byte) (int, error) {
	d := w.d
	n, err := d.out.Write(p)
	if err != nil {
		d.goneOnce.Do(func() { close(d.gone) })
	}
	d.outLine = scanLines(append(d.outLine, p[:n]...), d.noteResponse)
	return n, err
}

func (w drainWriter) Close() error { return w.d.out.Close() }

// scanLines calls fn with each complete line of buf and returns the rest.
func scanLines(buf []byte, fn func([]byte)) []byte {
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return buf
		}
		fn(buf[:i])
		buf = buf[i+1:]
	}
}

// message is what drain reads of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// messages decodes a line: one message, or a batch of them.
func messages(line []byte) []message {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if line[0] == '[' {
		var batch []message
		_ = json.Unmarshal(line, &batch)
		return batch
	}
	var m message
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	return []message{m}
}

// idKey is an id's identity: its JSON with insignificant space removed.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if len(id) == 0 || json.Compact(&b, id) != nil || b.String() == "null" {
		return ""
	}
	return b.String()
}

// noteRequest notes each request of a line read from the client, and
// crosses off a request the client cancelled (the server does not answer
// those).
func (d *drain) noteRequest(line []byte) {
	for _, m := range messages(line) {
		switch {
		case m.Method == "notifications/cancelled":
			d.done(idKey(m.Params.RequestID))
		case m.Method != "":
			if k := idKey(m.ID); k != "" {
				d.mu.Lock()
				switch n := d.early[k]; n {
				case 0:
					d.pending[k] = true
				case 1:
					delete(d.early, k)
				default:
					d.early[k] = n - 1
				}
				d.mu.Unlock()
			}
		}
	}
}

// noteResponse crosses off each request a line written to the client
// answers.
func (d *drain) noteResponse(line []byte) {
	for _, m := range messages(line) {
		if m.Method == "" {
			d.answered(idKey(m.ID))
		}
	}
}

// answered crosses off the request k answers or, when the request's line
// has not ended yet, notes the answer for it.
func (d *drain) answered(k string) {
	if k == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.pending[k] {
		d.early[k]++
		return
	}
	d.crossOff(k)
}

// done crosses off request k, if it is outstanding.
func (d *drain) done(k string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending[k] {
		d.crossOff(k)
	}
}

// crossOff removes outstanding request k; d.mu is held.
func (d *drain) crossOff(k string) {
	delete(d.pending, k)
	if len(d.pending) == 0 {
		close(d.idle)
		d.idle = make(chan struct{})
	}
}

// wait returns once every request read has been answered, or grace has
// passed, ctx ended, the session closed the reader or a write failed.
func (d *drain) wait() {
	d.mu.Lock()
	n, idle := len(d.pending), d.idle
	d.mu.Unlock()
	if n == 0 || d.grace <= 0 {
		return
	}
	t := time.NewTimer(d.grace)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-d.ctx.Done():
	case <-d.closed:
	case <-d.gone:
	}
}
