package otlp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/autoagent-go/autoagent/trace/otel/otlp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// The exporter sends a run's spans over OTLP/HTTP to the endpoint of
// OTEL_EXPORTER_OTLP_ENDPOINT; Close flushes them. The collector here
// decodes what it receives.
func TestExporterSendsSpansOverOTLP(t *testing.T) {
	var mu sync.Mutex
	var names []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" {
			http.NotFound(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Errorf("the export is not OTLP protobuf: %v", err)
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
		w.Write(nil)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	ctx := context.Background()
	exp, err := otlp.NewExporter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr := trace.New(exp)
	agent := &loop.Agent{
		Provider: scripted.New(scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "nope", Arguments: []byte(`{}`)}}}, scripted.Turn{Text: "done"}),
		Tracer:   tr,
	}
	if _, err := agent.Run(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	// Close flushes the batch to the collector.
	if err := exp.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := exp.Close(ctx); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]bool{"invoke_agent": false, "execute_tool nope": false}
	for _, n := range names {
		if _, ok := want[n]; ok {
			want[n] = true
		}
	}
	for n, seen := range want {
		if !seen {
			t.Errorf("no span %q among %q", n, names)
		}
	}
}
