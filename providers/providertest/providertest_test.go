package providertest_test

import (
	"context"
	"iter"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/providertest"
)

// defectEnv names the defect a helper process gives its provider.
const defectEnv = "PROVIDERTEST_DEFECT"

// fakeProvider answers every call with its scenario, the way a conforming
// provider does, unless defect names one way of breaking the contract.
type fakeProvider struct {
	s      providertest.Scenario
	defect string
}

func (p *fakeProvider) Name() string { return "fake" }

func (p *fakeProvider) err() error {
	e := *p.s.Error
	e.Provider = "fake"
	e.Retryable = e.Status == 429 || e.Status >= 500
	if p.defect == "retryable_lost" {
		e.Retryable = false
	}
	return &e
}

func (p *fakeProvider) answer() *llm.Response {
	a := p.s.Answer
	if p.defect == "usage_dropped" {
		a.Usage = nil
	}
	return &a
}

func (p *fakeProvider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if p.s.Error != nil {
		return nil, p.err()
	}
	if p.defect == "request_modified" {
		req.Messages = append(req.Messages, llm.UserText("added by the provider"))
	}
	return p.answer(), nil
}

func (p *fakeProvider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		if p.s.Error != nil {
			yield(llm.StreamEvent{}, p.err())
			return
		}
		a := p.answer()
		if r := a.Message.Reasoning(); r != "" && !yield(llm.StreamEvent{Type: llm.StreamReasoning, Text: r}, nil) {
			return
		}
		if t := a.Message.Text(); t != "" {
			if !yield(llm.StreamEvent{Type: llm.StreamText, Text: t}, nil) {
				return
			}
			if p.defect == "text_repeated" && !yield(llm.StreamEvent{Type: llm.StreamText, Text: t}, nil) {
				return
			}
			if p.s.Stall && p.defect != "stall_ignored" {
				<-ctx.Done()
				yield(llm.StreamEvent{}, ctx.Err())
				return
			}
		}
		for _, c := range a.Message.ToolCalls() {
			if !yield(llm.StreamEvent{Type: llm.StreamToolCall, ToolCall: &c}, nil) {
				return
			}
			if p.defect == "call_repeated" && !yield(llm.StreamEvent{Type: llm.StreamToolCall, ToolCall: &c}, nil) {
				return
			}
		}
		if !yield(llm.StreamEvent{Type: llm.StreamDone, Response: a}, nil) {
			return
		}
		if p.defect == "event_after_done" {
			yield(llm.StreamEvent{Type: llm.StreamText, Text: "late"}, nil)
		}
	}
}

func harness(defect string) providertest.Harness {
	return providertest.Harness{NewProvider: func(t *testing.T, s providertest.Scenario) llm.Provider {
		return &fakeProvider{s: s, defect: defect}
	}}
}

// TestConformingProviderPasses runs the whole suite against a provider
// that keeps the contract.
func TestConformingProviderPasses(t *testing.T) {
	providertest.Run(t, harness(""))
}

// TestSuiteCatchesDefects runs one check of the suite, in a child process,
// against a provider with one defect each, and requires that check to fail
// with a message naming what is wrong: a suite that passed a broken
// provider would be worse than none.
func TestSuiteCatchesDefects(t *testing.T) {
	tests := []struct {
		defect, check, want string
	}{
		{"usage_dropped", providertest.CheckUsage, "usage = nil"},
		{"text_repeated", providertest.CheckText, "text deltas add up to"},
		{"call_repeated", providertest.CheckStreamTools, "tool_call events"},
		{"event_after_done", providertest.CheckText, "event after the done event"},
		{"request_modified", providertest.CheckToolCall, "Complete modified the request"},
		{"retryable_lost", providertest.CheckErrors, "Retryable = false, want true for HTTP 429"},
		{"stall_ignored", providertest.CheckCancel, "stream completed although the server stalled"},
	}
	for _, tt := range tests {
		t.Run(tt.defect, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestDefectiveProvider$/^"+tt.check+"$", "-test.v")
			cmd.Env = append(os.Environ(), defectEnv+"="+tt.defect)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the %s check passed a provider with defect %s:\n%s", tt.check, tt.defect, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestDefectiveProvider/"+tt.check) || !strings.Contains(string(out), tt.want) {
				t.Errorf("the %s check did not fail with %q:\n%s", tt.check, tt.want, out)
			}
		})
	}
}

// TestDefectiveProvider is the child process of TestSuiteCatchesDefects.
func TestDefectiveProvider(t *testing.T) {
	defect := os.Getenv(defectEnv)
	if defect == "" {
		t.Skip("helper process for TestSuiteCatchesDefects; runs only when " + defectEnv + " is set")
	}
	providertest.Run(t, harness(defect))
}
