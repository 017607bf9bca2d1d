// Package otlp sends an agent's trace as OpenTelemetry spans over
// OTLP/HTTP, with the gen_ai semantic conventions (trace/otel's GenAI).
// It is the one package that links the OpenTelemetry SDK and its
// exporter, so a program that does not export spans does not carry them.
//
//	exp, err := otlp.NewExporter(ctx) // OTEL_EXPORTER_OTLP_* name the endpoint
//	if err != nil {
//		return err
//	}
//	defer exp.Close(ctx) // after the runtime's Close: flushes the spans
//	rt, err := autoagent.New(ctx, autoagent.Config{TraceSinks: []trace.Sink{exp} /* … */})
package otlp

import (
	"context"
	"errors"
	"fmt"

	"github.com/autoagent-go/autoagent/trace"
	"github.com/autoagent-go/autoagent/trace/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Exporter is a trace.Sink that turns events into spans and batches them
// to an OTLP/HTTP collector. Close it after the tracer that feeds it.
type Exporter struct {
	spans *otel.Exporter
	tp    *sdktrace.TracerProvider
}

var _ trace.Sink = (*Exporter)(nil)

// NewExporter starts the export to the endpoint the standard
// OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) variable names,
// default http://localhost:4318. Nothing is sent until a span ends.
func NewExporter(ctx context.Context) (*Exporter, error) {
	client, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(client))
	spans, err := otel.New(tp, otel.Options{Semconv: otel.GenAI})
	if err != nil {
		_ = tp.Shutdown(ctx)
		return nil, fmt.Errorf("OpenTelemetry: %w", err)
	}
	return &Exporter{spans: spans, tp: tp}, nil
}

// WriteEvent implements trace.Sink.
func (e *Exporter) WriteEvent(ev trace.Event) error { return e.spans.WriteEvent(ev) }

// Close ends the spans still open and flushes the batch to the collector,
// waiting for it as long as ctx allows. It is safe to call more than once.
func (e *Exporter) Close(ctx context.Context) error {
	return errors.Join(e.spans.Close(), e.tp.Shutdown(ctx))
}
