package autoagent_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/providers/scripted"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Config.OTel exports the run's spans over OTLP/HTTP to the endpoint of
// OTEL_EXPORTER_OTLP_ENDPOINT; Close flushes them. The collector here
// decodes what it receives.
func TestRuntimeExportsSpansOverOTLP(t *testing.T) {
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
	rt, err := autoagent.New(ctx, autoagent.Config{
		Model: scripted.New(calls(tc("c1", "nope", `{}`)), scripted.Turn{Text: "done"}),
		OTel:  true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Run(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(ctx); err != nil {
		t.Fatal(err)
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
