package synth

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/internal/enginetest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// TestMain builds the JavaScript engines when they are missing (make test
// builds them first; a bare `go test` builds them once, into the same
// place: see internal/enginetest), so no test silently skips the
// JavaScript back-end.
func TestMain(m *testing.M) {
	for _, file := range []string{EngineFile, BridgeEngineFile} {
		if _, err := enginetest.Ensure(file); err != nil {
			fmt.Fprintf(os.Stderr, "synth tests: %v\n", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

var (
	sharedHostOnce sync.Once
	sharedHost     *host.Host
	sharedHostErr  error
)

// testHost is one host for the package's tests: the engine is compiled
// (or read from the disk cache) once per test binary.
func testHost(t testing.TB) *host.Host {
	t.Helper()
	sharedHostOnce.Do(func() {
		ctx := context.Background()
		sharedHost, sharedHostErr = host.New(ctx, host.Options{})
		if sharedHostErr != nil {
			return
		}
		// Keep the compiled engine in memory for the whole test binary:
		// each Builder's own probe comes and goes with the Builder.
		path, err := FindEngine(EngineFile)
		if err != nil {
			sharedHostErr = err
			return
		}
		_, sharedHostErr = WarmEngine(ctx, sharedHost, path, os.Stderr)
	})
	if sharedHostErr != nil {
		t.Fatalf("host.New: %v", sharedHostErr)
	}
	return sharedHost
}

// newBuilder returns a Builder over the shared host with staging in a
// temporary directory; mutate adjusts the options.
func newBuilder(t testing.TB, writer llm.Provider, mutate func(*Options)) *Builder {
	t.Helper()
	opts := Options{Host: testHost(t), Writer: writer, StagingDir: filepath.Join(t.TempDir(), "staging")}
	if mutate != nil {
		mutate(&opts)
	}
	b, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	return b
}

// draft is a writer answer.
type draft struct {
	Name         string           `json:"name"`
	Description  string           `json:"description"`
	InputSchema  json.RawMessage  `json:"input_schema,omitempty"`
	Capabilities []string         `json:"capabilities,omitempty"`
	Source       string           `json:"source"`
	SelfTests    []map[string]any `json:"self_tests,omitempty"`
}

// turn is a scripted writer answer holding d, reporting usage.
func turn(d draft) scripted.Turn {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	return scripted.Turn{Text: string(b), Usage: &llm.Usage{InputTokens: 300, OutputTokens: 120}}
}

// requestText is everything a request sends the model, as one string.
func requestText(r *llm.Request) string {
	var s strings.Builder
	for _, m := range r.Messages {
		for _, p := range m.Parts {
			s.WriteString(p.Text)
			s.WriteByte('\n')
		}
	}
	b, _ := json.Marshal(r)
	s.Write(b)
	return s.String()
}

// events collects a Builder's events.
type events struct {
	mu sync.Mutex
	ev []Event
}

func (e *events) observe(ev Event) {
	e.mu.Lock()
	e.ev = append(e.ev, ev)
	e.mu.Unlock()
}

func (e *events) stages() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.ev {
		out = append(out, string(ev.Stage)+":"+ev.Status)
	}
	return out
}

func manifestGrants(ss []string) ([]manifest.Grant, error) { return manifest.ParseGrants(ss) }
