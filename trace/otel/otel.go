// Package otel exports autoagent trace events as OpenTelemetry spans.
//
//	exp, err := otel.New(tracerProvider, otel.Options{Semconv: otel.GenAI})
//	if err != nil {
//		return err
//	}
//	defer exp.Close()
//	agent := &loop.Agent{Provider: p, Tracer: trace.New(exp)}
//
// # Mapping
//
// run_start, llm_request and tool_call_start open spans ("agent.run",
// "llm", "tool.NAME"; with [GenAI]: "invoke_agent", "chat", "execute_tool
// NAME"), children of the open span their event names as parent (or roots).
// run_end, llm_response and tool_call_end end the span they refer to, adding
// their payload as attributes; the status is Error when the payload status
// is error, cancelled, max_steps or token_budget, and Ok for run_end and
// tool_call_end otherwise. Every other event becomes a span event on the span
// it refers to, or on its nearest ancestor still open (a guard event refers
// to a model call that has ended), and is dropped when none is open.
//
// Attributes are "autoagent.KEY" for each key of the payload as the trace
// file holds it (arrays and objects, such as a sandbox_call's "attrs", as
// JSON text). [GenAI] adds, never replaces, the gen_ai semantic
// convention attributes: gen_ai.operation.name, gen_ai.request.model,
// gen_ai.usage.input_tokens, gen_ai.usage.output_tokens, gen_ai.tool.name
// and gen_ai.tool.call.id.
//
// Events arrive already redacted by the [trace.Tracer], so spans carry no
// secret the trace file would not. This package needs only the
// OpenTelemetry API; trace/otel/otlp brings the SDK and the OTLP exporter.
package otel

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/autoagent-go/autoagent/trace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// Semconv chooses span names and extra attributes.
type Semconv string

// The supported conventions.
const (
	// Autoagent names spans agent.run, llm and tool.NAME.
	Autoagent Semconv = "autoagent"
	// GenAI follows the OpenTelemetry gen_ai semantic conventions.
	GenAI Semconv = "gen_ai"
)

// Options configures an [Exporter]. The zero value works.
type Options struct {
	// TracerName is the instrumentation name; "" means "autoagent".
	TracerName string
	// Semconv is Autoagent (the default) or GenAI.
	Semconv Semconv
	// MaxOpenSpans bounds the spans remembered for runs that have not ended,
	// so a trace that never closes its runs cannot grow memory without
	// limit; 0 means 10 000. Openers beyond the bound are dropped and counted
	// in [Exporter.Dropped].
	MaxOpenSpans int
}

// Exporter is a [trace.Sink] that turns events into spans. It is safe for
// concurrent use.
type Exporter struct {
	tracer  oteltrace.Tracer
	semconv Semconv
	max     int

	mu      sync.Mutex
	open    map[string]oteltrace.Span
	known   map[string]spanRef  // every span of runs not yet ended
	byRun   map[string][]string // run id → its span ids, to forget them at run_end
	dropped int
}

// spanRef remembers a span after it ended: a tool call's parent (the model
// call) has usually ended by the time the tool starts, and events refer to
// spans that have ended too.
type spanRef struct {
	sc     oteltrace.SpanContext
	parent string
}

var _ trace.Sink = (*Exporter)(nil)

// New returns an exporter creating spans with tp.
func New(tp oteltrace.TracerProvider, opts Options) (*Exporter, error) {
	if tp == nil {
		return nil, fmt.Errorf("otel: nil TracerProvider")
	}
	switch opts.Semconv {
	case "":
		opts.Semconv = Autoagent
	case Autoagent, GenAI:
	default:
		return nil, fmt.Errorf("otel: unknown semconv %q (want %q or %q)", opts.Semconv, Autoagent, GenAI)
	}
	if opts.TracerName == "" {
		opts.TracerName = "autoagent"
	}
	if opts.MaxOpenSpans <= 0 {
		opts.MaxOpenSpans = 10000
	}
	return &Exporter{
		tracer:  tp.Tracer(opts.TracerName),
		semconv: opts.Semconv,
		max:     opts.MaxOpenSpans,
		open:    map[string]oteltrace.Span{},
		known:   map[string]spanRef{},
		byRun:   map[string][]string{},
	}, nil
}

// WriteEvent maps one event (see the package doc). It never fails.
func (e *Exporter) WriteEvent(ev trace.Event) error {
	attrs := e.attributes(&ev)
	e.mu.Lock()
	defer e.mu.Unlock()
	switch ev.Type {
	case trace.RunStart, trace.LLMRequest, trace.ToolCallStart:
		if len(e.known) >= e.max {
			e.dropped++
			return nil
		}
		ctx := context.Background()
		if parent, ok := e.known[ev.ParentID]; ok {
			ctx = oteltrace.ContextWithSpanContext(ctx, parent.sc)
		}
		_, span := e.tracer.Start(ctx, e.spanName(&ev), oteltrace.WithTimestamp(ev.Time), oteltrace.WithAttributes(attrs...))
		e.open[ev.SpanID] = span
		e.known[ev.SpanID] = spanRef{sc: span.SpanContext(), parent: ev.ParentID}
		e.byRun[ev.RunID] = append(e.byRun[ev.RunID], ev.SpanID)
	case trace.RunEnd, trace.LLMResponse, trace.ToolCallEnd:
		span, ok := e.open[ev.ParentID]
		if !ok {
			return nil
		}
		delete(e.open, ev.ParentID)
		span.SetAttributes(attrs...)
		switch status, msg := outcome(ev.Payload); status {
		case "error", "cancelled", "max_steps", "token_budget":
			span.SetStatus(codes.Error, status+describe(msg))
		default:
			if ev.Type != trace.LLMResponse {
				span.SetStatus(codes.Ok, "")
			}
		}
		span.End(oteltrace.WithTimestamp(ev.Time))
		if ev.Type == trace.RunEnd && ev.RunID != "" {
			for _, id := range e.byRun[ev.RunID] {
				delete(e.known, id)
			}
			delete(e.byRun, ev.RunID)
		}
	default:
		// Attach to the referenced span, or its nearest ancestor still open.
		for id, hops := ev.ParentID, 0; id != "" && hops < 64; hops++ {
			if span, ok := e.open[id]; ok {
				span.AddEvent(string(ev.Type), oteltrace.WithTimestamp(ev.Time), oteltrace.WithAttributes(attrs...))
				break
			}
			id = e.known[id].parent
		}
	}
	return nil
}

// outcome returns the status and error of a closer's payload.
func outcome(p trace.Payload) (status, msg string) {
	switch p := p.(type) {
	case trace.Run:
		return p.Status, p.Error
	case trace.ModelCall:
		return p.Status, p.Error
	case trace.ToolCall:
		return p.Status, p.Error
	}
	return "", ""
}

func describe(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

func (e *Exporter) spanName(ev *trace.Event) string {
	gen := e.semconv == GenAI
	switch ev.Type {
	case trace.RunStart:
		if gen {
			return "invoke_agent"
		}
		return "agent.run"
	case trace.LLMRequest:
		if gen {
			return "chat"
		}
		return "llm"
	default:
		p, _ := ev.Payload.(trace.ToolCall)
		if gen {
			return "execute_tool " + p.Name
		}
		return "tool." + p.Name
	}
}

// attributes turns the keys of the payload's JSON form into autoagent.*
// attributes, plus the gen_ai ones when configured: the attributes are
// those of the trace file, whatever the payload's family.
func (e *Exporter) attributes(ev *trace.Event) []attribute.KeyValue {
	raw, err := json.Marshal(ev.Payload)
	if err != nil {
		return nil
	}
	var fields map[string]any
	if json.Unmarshal(raw, &fields) != nil {
		return nil
	}
	keys := slices.Sorted(maps.Keys(fields))
	attrs := make([]attribute.KeyValue, 0, len(keys)+6)
	if ev.RunID != "" {
		attrs = append(attrs, attribute.String("autoagent.run_id", ev.RunID))
	}
	for _, k := range keys {
		key := "autoagent." + k
		switch v := fields[k].(type) {
		case string:
			attrs = append(attrs, attribute.String(key, v))
		case bool:
			attrs = append(attrs, attribute.Bool(key, v))
		case float64:
			if v == float64(int64(v)) {
				attrs = append(attrs, attribute.Int64(key, int64(v)))
			} else {
				attrs = append(attrs, attribute.Float64(key, v))
			}
		default:
			b, _ := json.Marshal(v)
			attrs = append(attrs, attribute.String(key, string(b)))
		}
	}
	if e.semconv == GenAI {
		switch ev.Type {
		case trace.LLMRequest, trace.LLMResponse:
			attrs = append(attrs, attribute.String("gen_ai.operation.name", "chat"))
		case trace.ToolCallStart, trace.ToolCallEnd:
			attrs = append(attrs, attribute.String("gen_ai.operation.name", "execute_tool"))
		case trace.RunStart:
			attrs = append(attrs, attribute.String("gen_ai.operation.name", "invoke_agent"))
		}
		if model, _ := fields["model"].(string); model != "" {
			attrs = append(attrs, attribute.String("gen_ai.request.model", model))
		}
		in, _ := fields["input_tokens"].(float64)
		out, _ := fields["output_tokens"].(float64)
		if in != 0 || out != 0 {
			attrs = append(attrs, attribute.Int64("gen_ai.usage.input_tokens", int64(in)), attribute.Int64("gen_ai.usage.output_tokens", int64(out)))
		}
		if name, _ := fields["name"].(string); name != "" && (ev.Type == trace.ToolCallStart || ev.Type == trace.ToolCallEnd) {
			attrs = append(attrs, attribute.String("gen_ai.tool.name", name))
		}
		if id, _ := fields["call_id"].(string); id != "" {
			attrs = append(attrs, attribute.String("gen_ai.tool.call.id", id))
		}
	}
	return attrs
}

// Dropped returns the number of span openers dropped by the open-span bound.
func (e *Exporter) Dropped() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dropped
}

// Close ends every span still open (a run that crashed or is still going)
// and returns nil. It is idempotent.
func (e *Exporter) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for id, span := range e.open {
		span.SetStatus(codes.Error, "span left open: the run did not finish")
		span.End()
		delete(e.open, id)
	}
	clear(e.known)
	clear(e.byRun)
	return nil
}
