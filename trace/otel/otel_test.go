package otel

import (
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/trace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func setup(t *testing.T, opts Options) (*trace.Tracer, *Exporter, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	exp, err := New(tp, opts)
	if err != nil {
		t.Fatal(err)
	}
	return trace.New(exp), exp, rec
}

func attr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func TestSpanTreeAndAttributes(t *testing.T) {
	tr, _, rec := setup(t, Options{})
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := tr.Emit(trace.Event{Type: trace.RunStart, RunID: "r1", Time: t0, Payload: trace.Run{Model: "m", MaxSteps: 8}})
	llm := tr.Emit(trace.Event{Type: trace.LLMRequest, ParentID: run, Time: t0.Add(time.Millisecond), Payload: trace.ModelCall{Step: 1}})
	tr.Emit(trace.Event{Type: trace.LLMResponse, ParentID: llm, Time: t0.Add(3 * time.Millisecond), Payload: trace.ModelCall{Step: 1, InputTokens: 12, OutputTokens: 3}})
	call := tr.Emit(trace.Event{Type: trace.ToolCallStart, ParentID: llm, Payload: trace.ToolCall{Name: "fetch", CallID: "c1", Arguments: `{"url":"x?key=abcdef123456"}`}})
	tr.Emit(trace.Event{Type: trace.TrifectaBlock, ParentID: llm, Payload: trace.Guard{Name: "send"}})
	tr.Emit(trace.Event{Type: trace.Checkpoint, ParentID: "not-open"})
	tr.Emit(trace.Event{Type: trace.ToolCallEnd, ParentID: call, Payload: trace.ToolCall{Name: "fetch", Status: "error", Error: "timeout"}})
	tr.Emit(trace.Event{Type: trace.RunEnd, ParentID: run, Payload: trace.Run{Status: "max_steps", Steps: 8}})

	ended := rec.Ended()
	if len(ended) != 3 {
		t.Fatalf("%d spans ended, want 3", len(ended))
	}
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range ended {
		byName[s.Name()] = s
	}
	runSpan, llmSpan, toolSpan := byName["agent.run"], byName["llm"], byName["tool.fetch"]
	if runSpan == nil || llmSpan == nil || toolSpan == nil {
		t.Fatalf("span names: %v", byName)
	}
	if llmSpan.Parent().SpanID() != runSpan.SpanContext().SpanID() || toolSpan.Parent().SpanID() != llmSpan.SpanContext().SpanID() {
		t.Error("span tree does not follow parent ids")
	}
	if !runSpan.StartTime().Equal(t0) || llmSpan.EndTime().Sub(llmSpan.StartTime()) != 2*time.Millisecond {
		t.Error("span times do not come from event times")
	}
	if v, ok := attr(llmSpan, "autoagent.input_tokens"); !ok || v.AsInt64() != 12 {
		t.Errorf("input tokens attribute = %v", v)
	}
	if v, _ := attr(toolSpan, "autoagent.arguments_preview"); v.AsString() != `{"url":"x?key=***REDACTED***"}` {
		t.Errorf("arguments = %q (must arrive redacted)", v.AsString())
	}
	if toolSpan.Status().Code != codes.Error || runSpan.Status().Code != codes.Error {
		t.Errorf("statuses: tool %v run %v", toolSpan.Status(), runSpan.Status())
	}
	if evs := runSpan.Events(); len(evs) != 1 || evs[0].Name != "trifecta_block" {
		t.Errorf("run span events = %+v", evs)
	}
	if v, _ := attr(runSpan, "autoagent.run_id"); v.AsString() != "r1" {
		t.Error("run id attribute missing")
	}
}

func TestGenAIConventionAndClose(t *testing.T) {
	tr, exp, rec := setup(t, Options{Semconv: GenAI})
	run := tr.Emit(trace.Event{Type: trace.RunStart, Payload: trace.Run{Model: "gpt-x"}})
	call := tr.Emit(trace.Event{Type: trace.ToolCallStart, ParentID: run, Payload: trace.ToolCall{Name: "fetch", CallID: "c9"}})
	tr.Emit(trace.Event{Type: trace.ToolCallEnd, ParentID: call, Payload: trace.ToolCall{Name: "fetch", Status: "ok"}})
	ended := rec.Ended()
	if len(ended) != 1 || ended[0].Name() != "execute_tool fetch" || ended[0].Status().Code != codes.Ok {
		t.Fatalf("ended = %v", ended)
	}
	if v, _ := attr(ended[0], "gen_ai.tool.call.id"); v.AsString() != "c9" {
		t.Error("gen_ai.tool.call.id missing")
	}
	if v, _ := attr(ended[0], "autoagent.name"); v.AsString() != "fetch" {
		t.Error("autoagent attributes replaced instead of added to")
	}
	_ = exp.Close() // the run never ended
	ended = rec.Ended()
	if len(ended) != 2 || ended[1].Name() != "invoke_agent" || ended[1].Status().Code != codes.Error {
		t.Fatalf("Close did not end the open run span: %v", ended)
	}
	if v, _ := attr(ended[1], "gen_ai.request.model"); v.AsString() != "gpt-x" {
		t.Error("gen_ai.request.model missing")
	}
}

func TestOpenSpanBound(t *testing.T) {
	tr, exp, rec := setup(t, Options{MaxOpenSpans: 2})
	for range 5 {
		tr.Emit(trace.Event{Type: trace.RunStart})
	}
	if exp.Dropped() != 3 || len(rec.Started()) != 2 {
		t.Fatalf("dropped %d started %d", exp.Dropped(), len(rec.Started()))
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(nil, Options{}); err == nil {
		t.Error("nil provider accepted")
	}
	tp := sdktrace.NewTracerProvider()
	if _, err := New(tp, Options{Semconv: "otel"}); err == nil {
		t.Error("unknown semconv accepted")
	}
}

// Every family's keys become attributes as the trace file holds them: a
// sandbox_call's attributes nest under "attrs", with numbers and booleans
// as themselves (format 2), and its call id is gen_ai's.
func TestPayloadFamiliesAsAttributes(t *testing.T) {
	tr, _, rec := setup(t, Options{Semconv: GenAI})
	call := tr.Emit(trace.Event{Type: trace.ToolCallStart, Payload: trace.ToolCall{Name: "fetch", CallID: "c1"}})
	tr.Emit(trace.Event{Type: trace.SandboxCall, ParentID: call, Payload: trace.Sandbox{Name: "fetch", CallID: "c1", Module: "fetch", MemoryPeak: 2097152, Pooled: true, Grants: []string{"clock"}}})
	tr.Emit(trace.Event{Type: trace.Guardrail, ParentID: call, Payload: trace.Guard{Name: "pii", Status: "redact", Stage: "tool_result", Tool: "fetch"}})
	tr.Emit(trace.Event{Type: trace.ToolCallEnd, ParentID: call, Payload: trace.ToolCall{Name: "fetch", Status: "ok"}})
	ended := rec.Ended()
	if len(ended) != 1 || len(ended[0].Events()) != 2 {
		t.Fatalf("ended = %v", ended)
	}
	evAttr := func(i int, key string) string {
		for _, kv := range ended[0].Events()[i].Attributes {
			if string(kv.Key) == key {
				return kv.Value.String()
			}
		}
		return ""
	}
	if got, want := evAttr(0, "autoagent.attrs"), `{"abi":"","grants":["clock"],"grants_used":[],"memory_peak":2097152,"module":"fetch","outcome":"","pooled":true,"sha256":""}`; got != want {
		t.Errorf("sandbox_call attrs = %s, want %s", got, want)
	}
	if got := evAttr(0, "gen_ai.tool.call.id"); got != "c1" {
		t.Errorf("sandbox_call gen_ai.tool.call.id = %q", got)
	}
	if got := evAttr(1, "autoagent.attrs"); got != `{"stage":"tool_result","tool":"fetch"}` {
		t.Errorf("guardrail attrs = %s", got)
	}
}
