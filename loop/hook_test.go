package loop_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

func TestPostTurnCorrectionCap(t *testing.T) {
	save := &counter{name: "save"}
	p := scripted.New(
		text("Here is the report."),                  // forgot to save
		calls(call("", "save", `{"name":"report"}`)), // after the correction
		text("Saved."),
		text("extra turn that must not be needed"),
	)
	var seen []*loop.Turn
	a := &loop.Agent{Provider: p, Tools: registry(t, save), Checks: loop.Checks{MaxCorrections: 2}}
	a.Checks.PostTurn = func(_ context.Context, turn *loop.Turn) (*llm.Message, error) {
		seen = append(seen, turn)
		if save.count() == 0 {
			m := llm.UserText("You did not save the report. Call save now.")
			m.Role = ""
			return &m, nil
		}
		return nil, nil
	}
	var events []string
	var final *loop.Result
	for ev, err := range a.Stream(context.Background(), "write and save a report") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == loop.EventCorrection {
			events = append(events, ev.Text)
		}
		if ev.Type == loop.EventDone {
			final = ev.Result
		}
	}
	if save.count() != 1 || final.Output != "Saved." || final.Steps != 3 {
		t.Fatalf("saves %d, result %+v", save.count(), final)
	}
	if len(events) != 1 || !strings.Contains(events[0], "did not save") {
		t.Errorf("correction events %v", events)
	}
	// The hook ran twice: the second time it saw the turn since the correction.
	if len(seen) != 2 || seen[1].Corrections != 1 || len(seen[1].ToolCalls) != 1 || seen[1].ToolCalls[0].Name != "save" {
		t.Fatalf("hook turns = %+v", seen)
	}
	if seen[1].New[0].Role != llm.RoleAssistant {
		t.Errorf("turn should start after the correction, got %s first", seen[1].New[0].Role)
	}
	// The correction was a user message in the transcript.
	if m := final.Messages[3]; m.Role != llm.RoleUser || !strings.Contains(m.Text(), "did not save") {
		t.Errorf("correction message = %+v", m)
	}
}

func TestPostTurnCapReachedEndsTheRun(t *testing.T) {
	p := scripted.New(text("v1"), text("v2"), text("v3"), text("v4"))
	calls := 0
	a := &loop.Agent{Provider: p, Checks: loop.Checks{MaxCorrections: 2, PostTurn: func(context.Context, *loop.Turn) (*llm.Message, error) {
		calls++
		m := llm.UserText("try again")
		return &m, nil
	}}}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "v3" || calls != 2 || p.Calls() != 3 {
		t.Fatalf("output %q, hook calls %d, model calls %d", res.Output, calls, p.Calls())
	}
	// Negative disables, failures are fail-open.
	p.Reset()
	a.Checks.MaxCorrections = -1
	if res, _ := a.Run(context.Background(), "go"); res.Output != "v1" {
		t.Errorf("disabled hook still corrected: %q", res.Output)
	}
	for _, hook := range []loop.PostTurnHook{
		func(context.Context, *loop.Turn) (*llm.Message, error) { return nil, errors.New("checker down") },
		func(context.Context, *loop.Turn) (*llm.Message, error) { panic("bug") },
		func(context.Context, *loop.Turn) (*llm.Message, error) { return &llm.Message{Role: "robot"}, nil },
	} {
		p.Reset()
		a.Checks.MaxCorrections, a.Checks.PostTurn = 0, hook
		res, err := a.Run(context.Background(), "go")
		if err != nil || res.Output != "v1" {
			t.Errorf("failing hook: %+v, %v", res, err)
		}
	}
}

// fakeMemory keeps the last message only and reports its own spend.
type fakeMemory struct {
	calls int
	err   error
}

func (m *fakeMemory) Compact(_ context.Context, msgs []llm.Message) ([]llm.Message, *llm.Usage, error) {
	m.calls++
	u := &llm.Usage{InputTokens: 40, OutputTokens: 8}
	if m.err != nil {
		return nil, u, m.err
	}
	return []llm.Message{llm.SystemText("[summary] earlier talk"), msgs[len(msgs)-1]}, u, nil
}

func (m *fakeMemory) Recall(context.Context, string, int) ([]llm.Message, error) { return nil, nil }

func TestMemoryCompactsOncePerRunAndCountsUsage(t *testing.T) {
	mem := &fakeMemory{}
	p := scripted.New(calls(call("", "echo", `{"text":"a"}`)), scripted.Turn{Text: "ok", Usage: usage(10, 1)})
	a := &loop.Agent{Provider: p, Tools: registry(t, echo(t)), Knowledge: loop.Knowledge{Memory: mem}, Bounds: loop.Bounds{MaxSteps: 1}}
	history := []llm.Message{llm.SystemText("sys"), llm.UserText("old 1"), llm.AssistantText("old 2"), llm.UserText("now")}
	res, err := a.RunMessages(context.Background(), history)
	var se *loop.StopError
	if !errors.As(err, &se) {
		t.Fatal(err)
	}
	if mem.calls != 1 || len(p.Requests()[0].Messages) != 2 {
		t.Fatalf("compactions %d, sent %d messages", mem.calls, len(p.Requests()[0].Messages))
	}
	if res.Usage.InputTokens != 40 || !res.UsageReported {
		t.Errorf("memory spend not counted: %+v", res.Usage)
	}
	a.Bounds.MaxSteps = 2
	res, err = a.Resume(context.Background(), se.State)
	if err != nil {
		t.Fatal(err)
	}
	if mem.calls != 1 {
		t.Error("memory compacted again on resume")
	}
	if res.Usage.InputTokens != 50 {
		t.Errorf("usage after resume = %+v", res.Usage)
	}
	// A failing memory is fail-open: the run goes on with the original
	// messages, and the spend it reported still counts.
	p.Reset()
	failing := &fakeMemory{err: errors.New("store unavailable")}
	b := &loop.Agent{Provider: scripted.New(text("fine")), Knowledge: loop.Knowledge{Memory: failing}}
	res, err = b.RunMessages(context.Background(), history)
	if err != nil || res.Output != "fine" || len(res.Messages) != 5 || res.Usage.InputTokens != 40 {
		t.Fatalf("failing memory: %+v, %v", res, err)
	}
}

// A correction is checkpointed before the model is called again: a crash
// then resumes with the correction sent and counted, not asked again.
func TestCorrectionIsCheckpointed(t *testing.T) {
	var states []*loop.RunState
	a := &loop.Agent{
		Provider: scripted.New(text("draft"), text("final")),
		Checks: loop.Checks{PostTurn: func(_ context.Context, turn *loop.Turn) (*llm.Message, error) {
			if turn.Corrections == 0 {
				m := llm.UserText("try again")
				return &m, nil
			}
			return nil, nil
		}},
		Checkpoint: func(_ context.Context, st *loop.RunState) error {
			states = append(states, st.Clone())
			return nil
		},
	}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	for _, st := range states {
		if st.Step == 1 && st.Corrections == 1 && st.Messages[len(st.Messages)-1].Text() == "try again" {
			return
		}
	}
	t.Errorf("no checkpoint holds the correction before step 2: %d states", len(states))
}
