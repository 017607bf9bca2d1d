package loop_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// Past Bounds.MaxToolCalls calls are refused, the next model call may not
// call tools (tool_choice none, and told why), and the wind-down is traced.
func TestMaxToolCallsWindsDown(t *testing.T) {
	var n atomic.Int32
	echo := countingTool(t, "echo", &n, "e", tool.Flags{})
	model := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("a", "echo", `{}`), call("b", "echo", `{}`), call("c", "echo", `{}`)}},
		scripted.Turn{ToolCalls: []llm.ToolCall{call("d", "echo", `{}`)}}, // ignores tool_choice none
		scripted.Turn{Text: "done"},
	)
	var events []trace.Event
	a := &loop.Agent{
		Provider: model, Tools: nestedRegistry(t, echo),
		Bounds: loop.Bounds{MaxToolCalls: 2},
		Tracer: trace.New(familySink(func(ev trace.Event) { events = append(events, ev) })),
	}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() != 2 || res.State.ToolCalls != 2 {
		t.Fatalf("echo ran %d times, ToolCalls %d; want 2 and 2", n.Load(), res.State.ToolCalls)
	}
	for _, id := range []string{"c", "d"} {
		if got := toolResultText(res.Messages, id); !strings.HasPrefix(got, "ToolCallLimit:") {
			t.Errorf("call %s: %q", id, got)
		}
	}
	reqs := model.Requests()
	if len(reqs) != 3 || reqs[0].ToolChoice.Mode != "" || reqs[1].ToolChoice.Mode != llm.ToolChoiceNone || reqs[2].ToolChoice.Mode != llm.ToolChoiceNone {
		t.Fatalf("tool choices: %+v", reqs)
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if len(reqs[1].Tools) == 0 || last.Role != llm.RoleUser || !strings.Contains(last.Text(), "tool calls are spent") {
		t.Errorf("the wind-down request: %d tools, last message %+v", len(reqs[1].Tools), last)
	}
	// The note is in what the model was sent, not in the transcript.
	for _, m := range res.Messages {
		if strings.Contains(m.Text(), "tool calls are spent") {
			t.Error("the note entered the transcript")
		}
	}
	disabled := 0
	for _, ev := range events {
		if ev.Type == trace.ToolsDisabled {
			disabled++
		}
	}
	if disabled < 2 {
		t.Errorf("%d tools_disabled events, want the refusals and the wind-down", disabled)
	}
	// The count is part of the state.
	b, _ := json.Marshal(res.State)
	if st, err := loop.DecodeState(b); err != nil || st.ToolCalls != 2 {
		t.Errorf("state round trip: %v, %d", err, st.ToolCalls)
	}
	if err := (loop.Bounds{MaxToolCalls: -1}).Validate(); err == nil {
		t.Error("a negative MaxToolCalls is valid")
	}
}

// A tool past its time limit ends with an error result naming the limit,
// even when it ignores its context; the context it was given is cancelled.
func TestToolTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	stuck, err := tool.New("stuck", "Ignores its context.", func(context.Context, struct{}) (string, error) {
		<-release
		return "late", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sawCancel := make(chan error, 1)
	polite, err := tool.New("polite", "Heeds its context.", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		sawCancel <- ctx.Err()
		return "", ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	quick, _ := tool.New("quick", "Fast.", func(context.Context, struct{}) (string, error) { return "fine", nil })
	a := &loop.Agent{
		Provider: scripted.New(
			scripted.Turn{ToolCalls: []llm.ToolCall{call("s", "stuck", `{}`), call("p", "polite", `{}`), call("q", "quick", `{}`)}},
			scripted.Turn{Text: "done"},
		),
		// stuck has a limit of its own, below the run's.
		Tools:  nestedRegistry(t, tool.WithFlags(stuck, tool.Flags{Timeout: 20 * time.Millisecond}), polite, quick),
		Bounds: loop.Bounds{ToolTimeout: 50 * time.Millisecond},
	}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolResultText(res.Messages, "s"); !strings.Contains(got, "ToolTimeout: `stuck` did not finish within its time limit of 20ms") {
		t.Errorf("stuck: %q", got)
	}
	if got := toolResultText(res.Messages, "p"); !strings.Contains(got, "time limit of 50ms") {
		t.Errorf("polite: %q", got)
	}
	if err := <-sawCancel; err != context.DeadlineExceeded {
		t.Errorf("polite's context ended with %v", err)
	}
	if got := toolResultText(res.Messages, "q"); got != "fine" {
		t.Errorf("quick: %q", got)
	}
}
