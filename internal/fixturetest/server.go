package fixturetest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// streamPiece is how many bytes of an event stream a [Server] writes and
// flushes at a time: small and odd, so that lines and events straddle
// reads.
const streamPiece = 97

// closeWait bounds [Server.WaitClosed]: far longer than any release takes,
// it only keeps a leaked connection from hanging the test run.
const closeWait = 10 * time.Second

// Server is a local HTTP server that replays answers in order. It is safe
// for the concurrent requests of one test; it closes when the test ends.
type Server struct {
	*httptest.Server
	answers []Answer
	// stop ends every stalled answer, so that Close never waits for a
	// client that did not leave.
	stop     chan struct{}
	stopOnce sync.Once

	mu       sync.Mutex
	received []Request
	finished map[int]chan struct{}
}

// NewServer starts a Server answering the n-th request, whatever its method
// and path, with answers[n]. A request beyond the last answer fails t (an
// adapter retried or sent more than the test expects) and gets a 410.
func NewServer(t testing.TB, answers ...Answer) *Server {
	t.Helper()
	s := newServer(t.Errorf, answers)
	t.Cleanup(s.Close)
	return s
}

// newServer starts a Server that reports a request beyond the last answer
// to errorf.
func newServer(errorf func(format string, args ...any), answers []Answer) *Server {
	s := &Server{answers: answers, stop: make(chan struct{}), finished: map[int]chan struct{}{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.received)
		s.received = append(s.received, Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: string(body)})
		s.mu.Unlock()
		defer close(s.finishedChan(n))
		if n >= len(s.answers) {
			errorf("fixturetest: request %d (%s %s) beyond the %d recorded answers", n+1, r.Method, r.URL.RequestURI(), len(s.answers))
			http.Error(w, "replay: no recorded answer for request "+strconv.Itoa(n+1), http.StatusGone)
			return
		}
		s.answer(w, r, s.answers[n])
	}))
	return s
}

// Close ends stalled answers and shuts the server down.
func (s *Server) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.Server.Close()
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, a Answer) {
	for k, vs := range a.Header {
		if http.CanonicalHeaderKey(k) == "Content-Length" {
			continue
		}
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	status := a.Status
	if status == 0 {
		status = http.StatusOK
	}
	body := a.Body
	stream := strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	if !stream && !a.Stall && !a.Cut {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	piece := len(body)
	if stream {
		piece = streamPiece
	}
	for len(body) > 0 {
		n := min(piece, len(body))
		if _, err := io.WriteString(w, body[:n]); err != nil {
			return // the client went away
		}
		w.(http.Flusher).Flush()
		body = body[n:]
	}
	switch {
	case a.Cut:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	case a.Stall:
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
	}
}

// finishedChan returns the channel closed when request i has been
// answered, making it if request i has not arrived yet.
func (s *Server) finishedChan(i int) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.finished[i]
	if !ok {
		c = make(chan struct{})
		s.finished[i] = c
	}
	return c
}

// Request returns the i-th request received (from 0), failing t when fewer
// arrived.
func (s *Server) Request(t testing.TB, i int) Request {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.received) {
		t.Fatalf("fixturetest: the server received %d requests, want at least %d", len(s.received), i+1)
	}
	return s.received[i]
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.received...)
}

// WaitClosed waits until the i-th request (from 0) has been answered: for
// a Stall answer, until its client went away, which shows that the client
// released the connection. It fails t when that does not happen within
// seconds (the bound only keeps a leak from hanging the run; nothing is
// timed).
func (s *Server) WaitClosed(t testing.TB, i int) {
	t.Helper()
	select {
	case <-s.finishedChan(i):
	case <-time.After(closeWait):
		t.Fatalf("fixturetest: request %d was never released by its client", i+1)
	}
}
