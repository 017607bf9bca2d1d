package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/autoagent-go/autoagent/trace"
)

// traceLog is a run's trace: the trace events its agent emits (runs,
// model calls, tool calls, refusals, guardrail verdicts, approvals,
// checkpoints), all appended to trace.jsonl when the run has a directory,
// the last max kept in memory otherwise.
type traceLog struct {
	dir string // "" without Options.Dir

	mu      sync.Mutex
	max     int
	events  []trace.Event
	dropped int // events no longer kept in memory
}

func (l *traceLog) path() string { return filepath.Join(l.dir, "trace.jsonl") }

// tracer returns the tracer of one launch of the run: it writes to the
// run's trace and hands every event on to next (the agent's own tracer,
// when it has one). Close it when the launch ends.
func (l *traceLog) tracer(next *trace.Tracer) (*trace.Tracer, error) {
	var sinks []trace.Sink
	var closers []io.Closer
	if l.dir != "" {
		f, err := os.OpenFile(l.path(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("serve: the run's trace: %w", err)
		}
		sinks, closers = append(sinks, trace.JSONL(f)), append(closers, f)
	} else {
		sinks = append(sinks, trace.SinkFunc(l.keep))
	}
	if next != nil {
		// Another tracer, so no lock of this one is held twice.
		sinks = append(sinks, trace.SinkFunc(func(ev trace.Event) { next.Emit(ev) }))
	}
	return trace.NewWithOptions(trace.Options{Sinks: sinks, Closers: closers}), nil
}

func (l *traceLog) keep(ev trace.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = keepLast(append(l.events, ev), l.max, &l.dropped)
}

// keepLast cuts evs to its last max events once it holds twice as many,
// counting those cut in dropped: amortised, a copy per max events.
func keepLast(evs []trace.Event, max int, dropped *int) []trace.Event {
	if len(evs) <= 2*max {
		return evs
	}
	over := len(evs) - max
	*dropped += over
	return append(evs[:0:0], evs[over:]...)
}

// last returns the last max of evs, counting the others in dropped.
func last(evs []trace.Event, max int, dropped *int) []trace.Event {
	if over := len(evs) - max; over > 0 {
		*dropped += over
		return evs[over:]
	}
	return evs
}

// traceView is the answer of GET /v1/runs/{id}/trace.
type traceView struct {
	// Events are the run's trace events, the last MaxEvents of them.
	Events []trace.Event `json:"events"`
	// Dropped counts the earlier events not in Events.
	Dropped int `json:"dropped"`
	// Summary is what `autoagent trace summarize --json` says of the
	// trace: of all its events with Dir, of those kept without.
	Summary *trace.Summary `json:"summary"`
}

// read returns the trace: from trace.jsonl with a directory, from memory
// without.
func (l *traceLog) read() (*traceView, error) {
	if l.dir == "" {
		l.mu.Lock()
		dropped := l.dropped
		evs := append([]trace.Event{}, last(l.events, l.max, &dropped)...)
		l.mu.Unlock()
		var buf bytes.Buffer
		sink := trace.JSONL(&buf)
		for _, ev := range evs {
			sink.WriteEvent(ev)
		}
		sum, err := trace.Summarize(&buf)
		if err != nil {
			return nil, err
		}
		return &traceView{Events: evs, Dropped: dropped, Summary: sum}, nil
	}
	f, err := os.Open(l.path())
	if errors.Is(err, os.ErrNotExist) {
		// Nothing traced yet: the run waits for its turn.
		sum, _ := trace.Summarize(bytes.NewReader(nil))
		return &traceView{Events: []trace.Event{}, Summary: sum}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sum, err := trace.Summarize(f)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	v := &traceView{Events: []trace.Event{}, Summary: sum}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var ev trace.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type == "" {
			continue // a line cut by a crash: the summary counts it
		}
		v.Events = keepLast(append(v.Events, ev), l.max, &v.Dropped)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	v.Events = last(v.Events, l.max, &v.Dropped)
	return v, nil
}

// getTrace answers a run's trace events and their summary.
func (s *Server) getTrace(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	ru, e := s.lookup(r.PathValue("id"))
	if e != nil {
		return e
	}
	v, err := ru.trace.read()
	if err != nil {
		return internalError(fmt.Errorf("run %s: its trace: %w", ru.rec.ID, err))
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}
