package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestNilTracerIsANoOp(t *testing.T) {
	var tr *Tracer
	if id := tr.Emit(Event{Type: RunStart}); id != "" {
		t.Errorf("nil tracer returned span %q", id)
	}
	if tr.Err() != nil || tr.Close() != nil {
		t.Error("nil tracer reported an error")
	}
}

func TestEmitStampsAndReturnsSpanID(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	var got []Event
	tr := NewWithOptions(Options{Sinks: []Sink{SinkFunc(func(ev Event) { got = append(got, ev) })}, Clock: func() time.Time { return at }})
	root := tr.Emit(Event{Type: RunStart, RunID: "r1"})
	child := tr.Emit(Event{Type: LLMRequest, ParentID: root, RunID: "r1", Payload: ModelCall{Step: 1}})
	if len(root) != 16 || root == child {
		t.Fatalf("span ids %q %q", root, child)
	}
	if len(got) != 2 || got[1].ParentID != root || got[1].SpanID != child || !got[0].Time.Equal(at) {
		t.Fatalf("events = %+v", got)
	}
	fixed := tr.Emit(Event{Type: RunEnd, SpanID: "given"})
	if fixed != "given" {
		t.Errorf("explicit span id replaced: %q", fixed)
	}
}

func TestSinkFailuresNeverReachTheEmitter(t *testing.T) {
	boom := errors.New("disk full")
	var after []Event
	tr := New(
		SinkFunc(func(Event) { panic("callback bug") }),
		sinkErr{boom},
		SinkFunc(func(ev Event) { after = append(after, ev) }),
	)
	tr.Emit(Event{Type: RunStart})
	tr.Emit(Event{Type: RunEnd})
	if len(after) != 2 {
		t.Fatalf("a failing sink stopped the others: %d events", len(after))
	}
	if err := tr.Err(); err == nil || err.Error() != "trace: sink panicked: callback bug" {
		t.Fatalf("Err = %v (want the first failure)", err)
	}
	clockPanics := NewWithOptions(Options{Clock: func() time.Time { panic("clock") }})
	clockPanics.Emit(Event{Type: RunStart}) // must not panic
}

type sinkErr struct{ err error }

func (s sinkErr) WriteEvent(Event) error { return s.err }

func TestJSONLOrderUnderConcurrentEmitters(t *testing.T) {
	var buf bytes.Buffer
	var order []string
	tr := New(JSONL(&buf), SinkFunc(func(ev Event) { order = append(order, ev.SpanID) }))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				tr.Emit(Event{Type: ToolCallEnd, Payload: ToolCall{Name: "g" + strconv.Itoa(g), Step: i + 1}})
			}
		}()
	}
	wg.Wait()
	sc := bufio.NewScanner(&buf)
	i := 0
	last := map[string]int{}
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %d is not an event: %v", i+1, err)
		}
		if ev.SpanID != order[i] {
			t.Fatalf("line %d: file order differs from emission order", i+1)
		}
		p := ev.Payload.(ToolCall)
		if p.Step <= last[p.Name] {
			t.Fatalf("events of one emitter out of order")
		}
		last[p.Name] = p.Step
		i++
	}
	if i != 1600 {
		t.Fatalf("%d lines, want 1600", i)
	}
}

func TestOpenFileAppendsAndCloses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	for range 2 {
		tr, err := OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tr.Emit(Event{Type: RunStart})
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
		if err := tr.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		tr.Emit(Event{Type: RunEnd}) // after Close: dropped, no panic
	}
	data, _ := os.ReadFile(path)
	if n := bytes.Count(data, []byte("\n")); n != 2 {
		t.Fatalf("%d lines, want 2 (append mode)", n)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if _, err := OpenFile(filepath.Join(t.TempDir(), "missing", "x.jsonl")); err == nil {
		t.Error("opening in a missing directory succeeded")
	}
}
