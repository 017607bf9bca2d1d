package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
	"time"
)

// emitAs calls EmitPayload with p as its own family's type (not as a
// Payload), as the agent loop does.
func emitAs(tr *Tracer, ev Event, p Payload) string {
	switch p := p.(type) {
	case Run:
		return EmitPayload(tr, ev, p)
	case ModelCall:
		return EmitPayload(tr, ev, p)
	case ToolCall:
		return EmitPayload(tr, ev, p)
	case Guard:
		return EmitPayload(tr, ev, p)
	case Hook:
		return EmitPayload(tr, ev, p)
	case Memory:
		return EmitPayload(tr, ev, p)
	case Sandbox:
		return EmitPayload(tr, ev, p)
	case Synth:
		return EmitPayload(tr, ev, p)
	case Fields:
		return EmitPayload(tr, ev, p)
	}
	return EmitPayload(tr, ev, p) // nil: P is Payload
}

// EmitPayload writes what Emit writes, to a JSONL sink (which it gives
// the payload apart) and to any other sink (which it gives an Event),
// redaction included, for every family.
func TestEmitPayloadWritesWhatEmitWrites(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 11, 12, 5, time.UTC)
	secret := realisticSecrets[0]
	payloads := []Payload{nil, Fields(nil), secretFields(secret.text), Fields{"n": 1, "s": "x"}}
	for _, zero := range families {
		payloads = append(payloads, zero, fill(t, zero, awkward), fill(t, zero, secret.text))
	}
	for _, p := range payloads {
		t.Run(fmt.Sprintf("%T", p), func(t *testing.T) {
			emit := func(f func(*Tracer, Event) string) (string, []Event) {
				var buf bytes.Buffer
				var seen []Event
				tr := NewWithOptions(Options{
					Sinks: []Sink{JSONL(&buf), SinkFunc(func(ev Event) { seen = append(seen, ev) }), JSONL(&buf)},
					Clock: func() time.Time { return at },
				})
				id := f(tr, Event{Type: ToolCallEnd, SpanID: "s1", ParentID: "p", RunID: "r", Payload: ModelCall{Step: 9}})
				if id != "s1" {
					t.Fatalf("span id %q", id)
				}
				return buf.String(), seen
			}
			want, wantSeen := emit(func(tr *Tracer, ev Event) string {
				ev.Payload = p
				return tr.Emit(ev)
			})
			got, gotSeen := emit(func(tr *Tracer, ev Event) string { return emitAs(tr, ev, p) })
			if got != want {
				t.Errorf("JSONL differs:\n got  %s\n want %s", got, want)
			}
			if !reflect.DeepEqual(gotSeen, wantSeen) {
				t.Errorf("sink saw\n %+v\nwant\n %+v", gotSeen, wantSeen)
			}
			if bytes.Contains([]byte(got), []byte(secret.secret)) {
				t.Errorf("secret written: %s", got)
			}
		})
	}
}

// A JSONL sink's failure and panic are kept as Emit keeps them.
func TestEmitPayloadKeepsJSONLFailures(t *testing.T) {
	tr := New(JSONL(failWriter{}))
	EmitPayload(tr, Event{Type: RunStart}, Run{Model: "m"})
	if err := tr.Err(); err == nil || err.Error() != "trace: sink failed: disk full" {
		t.Fatalf("Err = %v", err)
	}
	tr = New(JSONL(failWriter{panics: true}))
	EmitPayload(tr, Event{Type: RunStart}, Run{Model: "m"}) // must not panic
	if err := tr.Err(); err == nil || err.Error() != "trace: sink panicked: writer bug" {
		t.Fatalf("Err = %v", err)
	}
	tr.Close()
	EmitPayload(tr, Event{Type: RunEnd}, Run{}) // after Close: dropped, no panic
	var none *Tracer
	if id := EmitPayload(none, Event{Type: RunStart}, Run{}); id != "" {
		t.Errorf("nil tracer returned span %q", id)
	}
}

type failWriter struct{ panics bool }

func (w failWriter) Write([]byte) (int, error) {
	if w.panics {
		panic("writer bug")
	}
	return 0, errors.New("disk full")
}

// EmitPayload's reason to be: with only JSONL sinks, an event whose span
// id and time are given costs no allocation (its payload is not copied to
// the heap); any number of other sinks share one copy.
func TestEmitPayloadDoesNotCopyThePayload(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	step := 0
	emit := func(tr *Tracer) func() {
		return func() {
			step++ // not a constant, so the payload is built at run time
			EmitPayload(tr, Event{Type: ToolCallEnd, SpanID: "s", ParentID: "p", RunID: "r", Time: at},
				ToolCall{Step: step, Name: "fetch", CallID: "c1", Status: "ok", DurationMS: 1.25, Content: "a result"})
		}
	}
	jsonl := New(JSONL(io.Discard), JSONL(io.Discard))
	if n := testing.AllocsPerRun(100, emit(jsonl)); n != 0 {
		t.Errorf("JSONL sinks only: %v allocations per event, want 0", n)
	}
	nop := SinkFunc(func(Event) {})
	mixed := New(JSONL(io.Discard), nop, nop)
	if n := testing.AllocsPerRun(100, emit(mixed)); n != 1 {
		t.Errorf("two other sinks: %v allocations per event, want 1 (the payload's copy)", n)
	}
}
