package trace

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"time"
)

// Sink receives trace events.
//
// The [Tracer] calls WriteEvent once per event, in emission order, never
// concurrently, after redaction. An error is recorded (see [Tracer.Err]) and
// otherwise ignored: tracing never fails a run. WriteEvent must not call
// Emit on the same Tracer (the Tracer holds its lock) and should return
// quickly, since emitters wait for it.
type Sink interface {
	WriteEvent(ev Event) error
}

// SinkFunc adapts a function to a [Sink].
type SinkFunc func(ev Event)

// WriteEvent calls f(ev).
func (f SinkFunc) WriteEvent(ev Event) error {
	f(ev)
	return nil
}

// Options configures a [Tracer]. The zero value works (no sink: events are
// built and dropped).
type Options struct {
	// Sinks receive every event, in the order given.
	Sinks []Sink
	// Clock stamps events; nil means time.Now.
	Clock func() time.Time
	// Closers are closed by [Tracer.Close] (the files the sinks write to).
	Closers []io.Closer
}

// Tracer emits events to its sinks. It is safe for concurrent use, and a
// nil *Tracer is a valid tracer that does nothing, at the cost of a nil
// check.
type Tracer struct {
	mu      sync.Mutex
	sinks   []Sink
	clock   func() time.Time
	closers []io.Closer
	err     error
	closed  bool
}

// New returns a tracer writing to sinks.
func New(sinks ...Sink) *Tracer { return NewWithOptions(Options{Sinks: sinks}) }

// NewWithOptions returns a tracer configured by opts.
func NewWithOptions(opts Options) *Tracer {
	t := &Tracer{sinks: append([]Sink(nil), opts.Sinks...), clock: opts.Clock, closers: append([]io.Closer(nil), opts.Closers...)}
	if t.clock == nil {
		t.clock = time.Now
	}
	return t
}

// OpenFile returns a tracer appending JSONL to the file at path (created
// with mode 0600: traces hold prompts and tool output), plus any extra
// sinks. Close closes the file.
func OpenFile(path string, extra ...Sink) (*Tracer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return NewWithOptions(Options{Sinks: append([]Sink{JSONL(f)}, extra...), Closers: []io.Closer{f}}), nil
}

// Emit stamps ev (a new SpanID unless one is set, the time unless set),
// redacts every string in it, hands it to each sink and returns its span
// id. It never fails and never panics; on a nil Tracer it returns "".
func (t *Tracer) Emit(ev Event) string {
	p := ev.Payload
	ev.Payload = nil
	return EmitPayload(t, ev, p)
}

// EmitPayload is [Tracer.Emit] of ev with the payload p in place of
// ev.Payload: the same event, stamped and redacted the same way, reaches
// the same sinks. It differs in cost only. An Event holds its payload as
// an interface, so a payload stored in one is copied to the heap; a
// [JSONL] sink is given p as it is, and only a sink of another kind
// receives an Event (holding p, copied once for all of them). The agent
// loop emits its events this way: with JSONL sinks, tracing an event
// allocates its span id and nothing else. Emit is EmitPayload with P
// the Payload interface, where there is nothing left to copy.
func EmitPayload[P Payload](t *Tracer, ev Event, p P) string {
	if t == nil {
		return ""
	}
	if ev.SpanID == "" {
		ev.SpanID = NewSpanID()
	}
	if ev.Time.IsZero() {
		ev.Time = t.now()
	}
	ev.Payload = nil
	redactEvent(&ev)
	// boxed is what a sink given an Event gets: the redacted copy when
	// redaction changed something (then a JSONL sink gets it too, rare),
	// p otherwise, stored in ev by the first such sink.
	var boxed Payload
	direct := any(p) != nil
	if direct {
		if r := p.redacted(); r != nil {
			boxed, direct = r, false
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ev.SpanID
	}
	for _, s := range t.sinks {
		if j, ok := s.(*jsonlSink); ok && direct {
			writeJSONL(t, j, &ev, p)
			continue
		}
		if ev.Payload == nil {
			switch {
			case boxed != nil:
				ev.Payload = boxed
			case direct:
				ev.Payload = p
			}
		}
		t.write(s, ev)
	}
	return ev.SpanID
}

// write calls one sink, keeping the first failure and surviving a panic.
func (t *Tracer) write(s Sink, ev Event) {
	defer t.recoverSink()
	t.sinkFailed(s.WriteEvent(ev))
}

// writeJSONL is write for a JSONL sink given ev's payload p apart, which
// it encodes without storing it in ev.
func writeJSONL[P Payload](t *Tracer, s *jsonlSink, ev *Event, p P) {
	defer t.recoverSink()
	t.sinkFailed(s.writeLine(appendEventPayload(s.buf[:0], ev, p)))
}

// sinkFailed keeps err, a sink's failure, if it is the first. The caller
// holds t.mu.
func (t *Tracer) sinkFailed(err error) {
	if err != nil && t.err == nil {
		t.err = fmt.Errorf("trace: sink failed: %w", err)
	}
}

// recoverSink, deferred around a sink's call, turns its panic into the
// tracer's error (the first one kept). The caller holds t.mu.
func (t *Tracer) recoverSink() {
	if p := recover(); p != nil && t.err == nil {
		t.err = fmt.Errorf("trace: sink panicked: %v", p)
	}
}

func (t *Tracer) now() (ts time.Time) {
	defer func() {
		if recover() != nil {
			ts = time.Now()
		}
	}()
	return t.clock()
}

// Err returns the first error a sink reported, if any. Emit never returns
// errors, so a host that must know its trace file is complete checks Err
// (or the error of Close) after the run.
func (t *Tracer) Err() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// Close stops emission, closes the closers given at construction, and
// returns the first sink or close error. It is idempotent.
func (t *Tracer) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return t.err
	}
	t.closed = true
	errs := []error{t.err}
	for _, c := range t.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// NewSpanID returns a random 16-hex-digit span id.
func NewSpanID() string {
	var b [8]byte
	v := rand.Uint64()
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return hex.EncodeToString(b[:])
}

type spanKey struct{}

// span is what WithSpan and WithSpanOf put in a context.
type span struct {
	id string
	tr *Tracer
}

// WithSpan returns ctx carrying spanID as the current span, so events
// emitted by code called with ctx (a sub-agent run, a tool that traces)
// become its children.
func WithSpan(ctx context.Context, spanID string) context.Context {
	return context.WithValue(ctx, spanKey{}, span{id: spanID})
}

// WithSpanOf is WithSpan naming the tracer the span belongs to, so code
// called with ctx (the sandbox's record of a module's call) emits into the
// trace of the run that made the call, which may not be the tracer it was
// built with (a served run's own trace).
func WithSpanOf(ctx context.Context, tr *Tracer, spanID string) context.Context {
	return context.WithValue(ctx, spanKey{}, span{id: spanID, tr: tr})
}

// SpanFromContext returns the span set by [WithSpan], or "".
func SpanFromContext(ctx context.Context) string {
	s, _ := ctx.Value(spanKey{}).(span)
	return s.id
}

// TracerFromContext returns the tracer [WithSpanOf] named, or nil.
func TracerFromContext(ctx context.Context) *Tracer {
	s, _ := ctx.Value(spanKey{}).(span)
	return s.tr
}

// redactEvent redacts the strings of ev outside its payload, in place;
// EmitPayload redacts the payload itself (a redacted copy when anything
// changed: the caller's slices and maps are never modified).
func redactEvent(ev *Event) {
	ev.Type = Type(Redact(string(ev.Type)))
	ev.SpanID = Redact(ev.SpanID)
	ev.ParentID = Redact(ev.ParentID)
	ev.RunID = Redact(ev.RunID)
}
