package trace

import (
	"io"
	"testing"
)

// BenchmarkEmitJSONL is the cost of one traced event: redaction's fast
// path, the hand-written encoder, one write.
func BenchmarkEmitJSONL(b *testing.B) {
	tr := New(JSONL(io.Discard))
	b.ReportAllocs()
	step := 0
	for b.Loop() {
		step++ // not a constant, so the payload is built at run time as the loop's are
		tr.Emit(Event{Type: ToolCallEnd, ParentID: "p", RunID: "r", Payload: ToolCall{Step: step, Name: "fetch", CallID: "c1", Status: "ok", DurationMS: 1.25, Content: "a result of some length, nothing sensitive in it"}})
	}
}

// BenchmarkEmitJSONLPayload is BenchmarkEmitJSONL through EmitPayload, as
// the agent loop emits: the payload is not copied to the heap.
func BenchmarkEmitJSONLPayload(b *testing.B) {
	tr := New(JSONL(io.Discard))
	b.ReportAllocs()
	step := 0
	for b.Loop() {
		step++
		EmitPayload(tr, Event{Type: ToolCallEnd, ParentID: "p", RunID: "r"}, ToolCall{Step: step, Name: "fetch", CallID: "c1", Status: "ok", DurationMS: 1.25, Content: "a result of some length, nothing sensitive in it"})
	}
}

// BenchmarkRedactPlain is redaction's fast path on the strings of a
// traced event with nothing secret in it.
func BenchmarkRedactPlain(b *testing.B) {
	ss := []string{"tool_call_end", "p", "r", "fetch", "c1", "ok", "a result of some length, nothing sensitive in it", `{"city":"Oslo","units":"metric"}`}
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range ss {
			Redact(s)
		}
	}
}
