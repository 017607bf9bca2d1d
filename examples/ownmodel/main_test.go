package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/weighttest"
)

// The agent runs on the program's own model: it calls the Go tool, then
// answers with its result.
func TestOwnModelCallsTheTool(t *testing.T) {
	for _, tt := range []struct{ prompt, want string }{
		{"What is the weather in Oslo?", "It is sunny, 21°C in Oslo."},
		{"What is the weather in  ?", "Ask me about the weather in a city."},
		{"hello", "Ask me about the weather in a city."},
	} {
		var out bytes.Buffer
		if err := run(context.Background(), &out, tt.prompt); err != nil {
			t.Fatalf("%q: %v", tt.prompt, err)
		}
		if got := strings.TrimSpace(out.String()); got != tt.want {
			t.Errorf("%q: the answer %q, want %q", tt.prompt, got, tt.want)
		}
	}
}

// The front door's weight (issue 42): an agent with one Go tool through
// package autoagent, its model the program's own, links at most 200
// packages into at most 15 MB. Measured (linux/amd64, go1.26): 167
// packages, 7.7 MiB; with the providers by name in the root it was 240
// and 12.6 MiB. A dependency that pulls the HTTP client, the WASM host,
// MCP, a database, RPC or an exporter into the root crosses them.
const (
	maxPackages = 200
	maxBytes    = 15_000_000
)

func TestFrontDoorWeight(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not building the program to weigh the front door")
	}
	weighttest.Check(t, weighttest.Limits{Packages: maxPackages, Bytes: maxBytes, Forbidden: []string{
		"net/http", "github.com/autoagent-go/autoagent/providers/catalog", "modernc.org/sqlite", "google.golang.org/grpc",
		"github.com/hashicorp/go-plugin", "go.opentelemetry.io/otel/sdk", "github.com/tetratelabs/wazero", "github.com/autoagent-go/autoagent/host",
		"github.com/autoagent-go/autoagent/mcp", "github.com/autoagent-go/autoagent/synth"}})
}
