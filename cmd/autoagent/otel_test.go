package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// run --otel sends the run's spans to the OTLP endpoint the standard
// variable names: the command builds the exporter (trace/otel/otlp), gives
// it to the runtime as a trace sink and flushes it after the run.
func TestRunOTelExportsSpans(t *testing.T) {
	var mu sync.Mutex
	var names []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
			http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	e := newCLIEnv(t)
	script := e.writeScript(`{"text":"Traced."}`)
	if r := e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--otel", "hi"); r.stdout != "Traced.\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(names, "invoke_agent") {
		t.Errorf("the collector received spans %q; want invoke_agent, flushed before the command returned", names)
	}
}
