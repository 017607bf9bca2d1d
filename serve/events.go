package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
)

// Event is one event of a run's stream (GET /v1/runs/{id}/events): the
// loop's events, the run's status changes and the decisions given.
type Event struct {
	// Seq numbers the run's events from 1, across pauses and restarts: it
	// is the SSE id a client resumes from (Last-Event-ID).
	Seq  int64     `json:"seq"`
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	Step int       `json:"step,omitempty"`
	// Text is a text or reasoning delta, or a correction.
	Text string `json:"text,omitempty"`
	// Call is the call of a tool event; Result the result the model saw.
	Call    *llm.ToolCall   `json:"call,omitempty"`
	Result  *llm.ToolResult `json:"result,omitempty"`
	Refused bool            `json:"refused,omitempty"`
	// Pending are the calls awaiting a decision (approval_request).
	Pending []pendingRow `json:"pending,omitempty"`
	// Status is the run's new status ("status").
	Status Status `json:"status,omitempty"`
	// CallID, Approve, Reason and By are a decision given ("decision").
	CallID  string `json:"call_id,omitempty"`
	Approve *bool  `json:"approve,omitempty"`
	Reason  string `json:"reason,omitempty"`
	By      string `json:"by,omitempty"`
}

func fromLoop(ev loop.Event) Event {
	e := Event{Type: string(ev.Type), Step: ev.Step, Text: ev.Text, Call: ev.Call, Result: ev.ToolResult, Refused: ev.Refused}
	if len(ev.Pending) > 0 {
		e.Pending = pendingRows(ev.Pending)
	}
	return e
}

// eventLog is a run's events: the last max in memory, all appended to
// events.jsonl when the run has a directory.
type eventLog struct {
	mu      sync.Mutex
	max     int
	events  []Event
	next    int64
	stopped bool // ended or paused: nothing more until resume
	ended   bool
	changed chan struct{} // closed and replaced on every change
	file    *os.File
	dir     string
}

// openEventLog opens (and reads back) the log of the run in dir.
func openEventLog(dir string, max int) (*eventLog, error) {
	l := &eventLog{max: max, next: 1, changed: make(chan struct{}), dir: dir}
	if dir == "" {
		return l, nil
	}
	path := filepath.Join(dir, "events.jsonl")
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var e Event
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue // a line cut by a crash
			}
			l.keep(e)
			l.next = e.Seq + 1
		}
		f.Close()
	}
	return l, nil
}

func (l *eventLog) keep(e Event) {
	l.events = append(l.events, e)
	if len(l.events) > l.max {
		l.events = append(l.events[:0:0], l.events[len(l.events)-l.max:]...)
	}
}

func (l *eventLog) signal() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// add appends e, numbered and stamped.
func (l *eventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Seq = l.next
	l.next++
	e.Time = time.Now().UTC()
	l.keep(e)
	if l.dir != "" {
		if l.file == nil {
			f, err := os.OpenFile(filepath.Join(l.dir, "events.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err == nil {
				l.file = f
			}
		}
		if l.file != nil {
			b, _ := json.Marshal(e)
			l.file.Write(append(b, '\n'))
		}
	}
	l.signal()
}

// end marks the run ended: streams finish once they sent everything.
func (l *eventLog) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped, l.ended = true, true
	if l.file != nil {
		l.file.Close()
		l.file = nil
	}
	l.signal()
}

// pause marks the run paused for a decision; resume, going again.
func (l *eventLog) pause() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	l.signal()
}

func (l *eventLog) resume() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = false
	l.signal()
}

// waitStop waits until the run ends or pauses.
func (l *eventLog) waitStop(ctx context.Context) error {
	for {
		l.mu.Lock()
		stopped, ch := l.stopped, l.changed
		l.mu.Unlock()
		if stopped {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// since returns the events after seq, the first seq still kept, whether
// the run ended, and the channel closed on the next change.
func (l *eventLog) since(seq int64) (out []Event, first int64, ended bool, ch chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	first = l.next
	if len(l.events) > 0 {
		first = l.events[0].Seq
	}
	for _, e := range l.events {
		if e.Seq > seq {
			out = append(out, e)
		}
	}
	return out, first, l.ended, l.changed
}

// heartbeat is how often an idle stream sends a comment, so proxies and
// clients see it alive.
const heartbeat = 15 * time.Second

// events streams a run's events as Server-Sent Events, from the one after
// Last-Event-ID, until the run ends.
func (s *Server) events(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	ru, e := s.lookup(r.PathValue("id"))
	if e != nil {
		return e
	}
	var after int64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return badRequest("Last-Event-ID %q: want the seq of the last event received (a number)", v)
		}
		after = n
	}
	if n := s.streams.Add(1); n > int64(s.opts.MaxStreams) {
		s.streams.Add(-1)
		w.Header().Set("Retry-After", "5")
		return &apiError{http.StatusServiceUnavailable, "too_many_streams", fmt.Sprintf("%d event streams are open, the most this server keeps (MaxStreams): retry later", s.opts.MaxStreams)}
	}
	defer s.streams.Add(-1)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.MaxStreamTime)
	defer cancel()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	var buf bytes.Buffer
	for {
		evs, first, ended, ch := ru.events.since(after)
		buf.Reset()
		if first > after+1 {
			// Events were dropped (MaxEvents): say so, once.
			fmt.Fprintf(&buf, "event: truncated\ndata: {\"first_seq\":%d}\n\n", first)
			after = first - 1
		}
		for _, ev := range evs {
			b, _ := json.Marshal(ev)
			fmt.Fprintf(&buf, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, b)
			after = ev.Seq
		}
		if buf.Len() > 0 {
			rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := w.Write(buf.Bytes()); err != nil {
				return nil
			}
			if err := rc.Flush(); err != nil {
				return nil
			}
		}
		if ended {
			return nil
		}
		select {
		case <-ch:
		case <-s.done:
			return nil
		case <-tick.C:
			rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := w.Write([]byte(": ping\n\n")); err != nil {
				return nil
			}
			if rc.Flush() != nil {
				return nil
			}
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				fmt.Fprintf(w, "event: reconnect\ndata: {\"last_seq\":%d}\n\n", after)
				rc.Flush()
			}
			return nil
		}
	}
}
