package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/internal/weighttest"
)

// The quickstart runs offline: the scripted model calls the Go tool and
// answers.
func TestQuickstartOffline(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, autoagent.Config{LLM: offline()}, "What is the weather in Oslo?"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != "It is sunny and 21°C in Oslo." {
		t.Errorf("the answer %q", got)
	}
}

// The front door's weight: what a program with one Go tool links through
// package autoagent. The limits are where the front door stands with the
// light features only (RATIONALE: "Why are plugins, MCP and code mode not
// fields of Config?"), with some headroom for the toolchain; a dependency
// that pulls in the WASM host, MCP, a database, RPC or an exporter again
// crosses them. Measured for issue 42 (linux/amd64, go1.26.8): 558
// packages and 40.8 MiB at first; 343 and 21.8 MiB with the sandbox and
// MCP in the root; 234 and 12.1 MiB (12.7 MB) without them; 239 and 12.6 MiB
// (13.2 MB) with rule files, skills and the response cache (issue 45); 241
// and 12.8 MiB with the model built by the program through
// providers/catalog (the root itself is 166: examples/ownmodel holds an
// agent without a provider's HTTP client under the 200).
//
// The floor is 222 packages: the loop with the providers by name (go list
// -deps ./loop ./providers/catalog), of which net/http alone is 185. No
// program that talks to a real provider through this module's loop links
// fewer; the root's light features (policy, memory tools, sessions,
// workspace, manifest, the agent file's YAML) add about 20 more.
const (
	maxPackages = 250
	maxBytes    = 14 << 20 // 14.7 MB, under the 15 MB
)

func TestFrontDoorWeight(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not building the quickstart to weigh the front door")
	}
	weighttest.Check(t, weighttest.Limits{Packages: maxPackages, Bytes: maxBytes, Forbidden: []string{
		"modernc.org/sqlite", "google.golang.org/grpc", "github.com/hashicorp/go-plugin", "go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters",
		"github.com/tetratelabs/wazero", "github.com/autoagent-go/autoagent/host", "github.com/autoagent-go/autoagent/mcp", "github.com/autoagent-go/autoagent/synth", "github.com/autoagent-go/autoagent/serve"}})
}
