package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

type cityIn struct {
	City string `json:"city"`
}

// Pre-tool hooks run in order before the guards and the policy: one
// denies, one rewrites (and the policy and the tool see the new
// arguments), a rewrite the schema refuses denies, and a failing hook
// denies; post-tool hooks transform results, and a failing one leaves the
// result.
func TestToolHooks(t *testing.T) {
	var seen []string
	weather, err := tool.New("weather", "Weather.", func(_ context.Context, in cityIn) (string, error) {
		seen = append(seen, in.City)
		return "sunny in " + in.City + ", call 555-0100", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var policySaw []string
	a := &loop.Agent{
		Provider: scripted.New(
			scripted.Turn{ToolCalls: []llm.ToolCall{
				call("a", "weather", `{"city":"oslo"}`),        // rewritten to Oslo
				call("b", "weather", `{"city":"Pyongyang"}`),   // denied by hook 1
				call("c", "weather", `{"city":"bad-rewrite"}`), // rewritten into an invalid shape
				call("d", "weather", `{"city":"panic"}`),       // hook 2 panics
			}},
			scripted.Turn{Text: "done"},
		),
		Tools: nestedRegistry(t, weather),
		Checks: loop.Checks{Policy: loop.PolicyFunc(func(_ context.Context, in *loop.PolicyInput) (loop.Decision, error) {
			policySaw = append(policySaw, string(in.Call.Arguments))
			return loop.Decision{}, nil
		}), PreToolHooks: []loop.PreToolHook{
			func(_ context.Context, c *loop.HookCall) (loop.HookDecision, error) {
				if strings.Contains(string(c.Call.Arguments), "Pyongyang") {
					return loop.HookDecision{Deny: "no weather for that city"}, nil
				}
				return loop.HookDecision{}, nil
			},
			func(_ context.Context, c *loop.HookCall) (loop.HookDecision, error) {
				var in cityIn
				json.Unmarshal(c.Call.Arguments, &in)
				switch in.City {
				case "panic":
					panic("hook bug")
				case "bad-rewrite":
					return loop.HookDecision{Arguments: json.RawMessage(`{"city":7}`)}, nil
				case "oslo":
					return loop.HookDecision{Arguments: json.RawMessage(`{"city":"Oslo"}`)}, nil
				}
				return loop.HookDecision{}, nil
			},
		}, PostToolHooks: []loop.PostToolHook{
			func(_ context.Context, _ llm.ToolCall, r *loop.HookResult) error {
				r.Content = strings.ReplaceAll(r.Content, "555-0100", "[phone]")
				return nil
			},
			func(context.Context, llm.ToolCall, *loop.HookResult) error { return errors.New("broken") },
		}},
	}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(seen, ",") != "Oslo" || strings.Join(policySaw, ",") != `{"city":"Oslo"}` {
		t.Errorf("the tool saw %v, the policy %v; want only the rewritten call", seen, policySaw)
	}
	if got := toolResultText(res.Messages, "a"); got != "sunny in Oslo, call [phone]" {
		t.Errorf("a: %q", got)
	}
	if got := toolResultText(res.Messages, "b"); got != "ToolHookDenied: no weather for that city" {
		t.Errorf("b: %q", got)
	}
	if got := toolResultText(res.Messages, "c"); !strings.Contains(got, "rewrote the arguments into ones the tool refuses") {
		t.Errorf("c: %q", got)
	}
	if got := toolResultText(res.Messages, "d"); !strings.Contains(got, "a check failed (hook 2") {
		t.Errorf("d: %q", got)
	}
	// The model's own message keeps what it asked for.
	if args := string(res.Messages[2].ToolCalls()[0].Arguments); args != `{"city":"oslo"}` {
		t.Errorf("the transcript's call: %s", args)
	}
}

// With pre-tool hooks, no call starts early (hooks see every call first).
func TestToolHooksNoEarlyStart(t *testing.T) {
	var n atomic.Int32
	echo := countingTool(t, "echo", &n, "e", tool.Flags{Idempotent: true})
	denied := 0
	var tr events
	a := &loop.Agent{
		Provider: scripted.New(scripted.Turn{ToolCalls: []llm.ToolCall{call("a", "echo", `{}`)}}, scripted.Turn{Text: "done"}),
		Tools:    nestedRegistry(t, echo),
		Tracer:   tr.tracer(),
		Checks: loop.Checks{PreToolHooks: []loop.PreToolHook{func(context.Context, *loop.HookCall) (loop.HookDecision, error) {
			denied++
			return loop.HookDecision{Deny: "no"}, nil
		}}},
	}
	for _, err := range a.Stream(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n.Load() != 0 || denied != 1 {
		t.Errorf("echo ran %d times (denied %d): a denied call started early", n.Load(), denied)
	}
	// The early start is cancelled when the hook denies the call, so it
	// may not get to run the tool: the trace says whether it began.
	if evs := tr.of(trace.ToolCallEarlyStart); len(evs) != 0 {
		t.Errorf("%d calls started early before the pre-tool hooks saw them", len(evs))
	}
}
