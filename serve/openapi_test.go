package serve

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// Every /v1 route is in openapi.json with its method, and every
// operation of openapi.json is a route: the document cannot drift from
// the server.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	s, err := New(Options{Agent: &loop.Agent{Provider: scripted.New()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	var documented, served []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, p := range s.patterns {
		if method, path, ok := strings.Cut(p, " "); ok && strings.HasPrefix(path, "/v1/") {
			served = append(served, method+" "+path)
		}
	}
	slices.Sort(documented)
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		t.Fatalf("openapi.json describes\n  %s\nthe server serves\n  %s", strings.Join(documented, "\n  "), strings.Join(served, "\n  "))
	}
	for _, want := range []string{"GET /v1/runs/{id}/trace", "POST /v1/evals", "GET /v1/evals", "GET /v1/evals/{id}", "GET /v1/evals/{id}/report.html"} {
		if !slices.Contains(served, want) {
			t.Fatalf("no route %s", want)
		}
	}
}
