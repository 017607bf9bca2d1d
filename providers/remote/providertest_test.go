package remote

import (
	"context"
	"encoding/json"
	"iter"
	"os"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/providertest"
)

// testScenarioEnv carries a providertest.Scenario, as JSON, to a backend
// started in "scenario" mode.
const testScenarioEnv = "AUTOAGENT_TEST_SCENARIO"

// TestConformance runs the provider conformance suite against a provider
// served through go-plugin: every check goes host → gRPC → backend process
// → provider and back.
func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		NewProvider: func(t *testing.T, s providertest.Scenario) llm.Provider {
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			p, err := New(context.Background(), Options{Path: os.Args[0], Name: "scenario",
				Env: []string{testBackendEnv + "=scenario", testScenarioEnv + "=" + string(b), "GORACE=atexit_sleep_ms=0"}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			return p
		},
	})
}

// scenarioProvider answers every call with a conformance scenario, the way
// a provider with native streaming would: reasoning and text in small
// deltas, each tool call once complete, then done.
type scenarioProvider struct{ s providertest.Scenario }

func newScenarioProvider() *scenarioProvider {
	var s providertest.Scenario
	if err := json.Unmarshal([]byte(os.Getenv(testScenarioEnv)), &s); err != nil {
		panic("bad scenario: " + err.Error())
	}
	return &scenarioProvider{s: s}
}

func (p *scenarioProvider) Name() string { return "scenario" }

func (p *scenarioProvider) err() error {
	e := *p.s.Error
	e.Provider = "scenario"
	e.Retryable = e.Status == 429 || e.Status >= 500
	return &e
}

func (p *scenarioProvider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if p.s.Error != nil {
		return nil, p.err()
	}
	a := p.s.Answer
	return &a, nil
}

func (p *scenarioProvider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		if p.s.Error != nil {
			yield(llm.StreamEvent{}, p.err())
			return
		}
		a := p.s.Answer
		for _, piece := range runeChunks(a.Message.Reasoning(), 7) {
			if !yield(llm.StreamEvent{Type: llm.StreamReasoning, Text: piece}, nil) {
				return
			}
		}
		for i, piece := range runeChunks(a.Message.Text(), 5) {
			if !yield(llm.StreamEvent{Type: llm.StreamText, Text: piece}, nil) {
				return
			}
			if p.s.Stall && i == 0 {
				<-ctx.Done()
				yield(llm.StreamEvent{}, ctx.Err())
				return
			}
		}
		for _, c := range a.Message.ToolCalls() {
			if !yield(llm.StreamEvent{Type: llm.StreamToolCall, ToolCall: &c}, nil) {
				return
			}
		}
		yield(llm.StreamEvent{Type: llm.StreamDone, Response: &a}, nil)
	}
}

// runeChunks splits s into pieces of n runes.
func runeChunks(s string, n int) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}
