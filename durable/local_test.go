package durable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/autoagent-go/autoagent/durable"
	"github.com/autoagent-go/autoagent/internal/temporaltest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// probe is a tool that records, per execution, its idempotency key and
// whether it ran as a local activity; answer gives each execution's
// result (n counts from 1).
type probe struct {
	flags  tool.Flags
	answer func(ctx context.Context, n int) (tool.Result, error)

	mu    sync.Mutex
	runs  []string // "local KEY" or "activity KEY"
	count int
}

func (p *probe) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "pay", Description: "probes", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (p *probe) Flags() tool.Flags { return p.flags }

func (p *probe) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	info, _ := loop.CallInfoFrom(ctx)
	how := "activity"
	if activity.IsActivity(ctx) && activity.GetInfo(ctx).IsLocalActivity {
		how = "local"
	}
	p.mu.Lock()
	p.count++
	n := p.count
	p.runs = append(p.runs, how+" "+info.IdempotencyKey())
	p.mu.Unlock()
	if p.answer != nil {
		return p.answer(ctx, n)
	}
	return tool.Text("paid " + string(c.Arguments)), nil
}

func (p *probe) executions() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.runs, ", ")
}

// An idempotent tool's calls run as local activities on the worker that
// runs the workflow task, and so do the agent's description and (when the
// options say LocalModelCalls) the model calls; a tool that is not
// idempotent keeps its activity (at most once, OutcomeUnknown when its
// worker is lost). Either way the result is the local run's.
func TestWorkflowLocalCalls(t *testing.T) {
	cases := []struct {
		flags       tool.Flags
		local       bool
		localModels bool
	}{
		{flags: tool.Flags{Idempotent: true}, local: true},
		{flags: tool.Flags{}},
		// A tool that declares it may take longer than a local attempt.
		{flags: tool.Flags{Idempotent: true, Timeout: time.Minute}},
		{flags: tool.Flags{Idempotent: true, Timeout: time.Second}, local: true},
		{flags: tool.Flags{Idempotent: true}, local: true, localModels: true},
		{flags: tool.Flags{}, localModels: true},
	}
	for _, c := range cases {
		idem := c.flags
		want, err := newAgent(t, &probe{flags: c.flags}, turns()...).Run(t.Context(), "pay twice")
		if err != nil {
			t.Fatal(err)
		}
		p := &probe{flags: c.flags}
		e := env(t, &durable.Activities{Agent: newAgent(t, p, turns()...)})
		var local []string
		e.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
			local = append(local, info.ActivityType.Name)
		})
		e.SetStartWorkflowOptions(startOptions("run-1"))
		opts := durable.Options{LocalModelCalls: c.localModels}
		e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "pay twice"}, Options: opts})
		got := result(t, e)
		if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
			t.Errorf("%+v %+v: the result differs from the local run's:\n got %s\nwant %s", idem, opts, g, w)
		}
		how := "activity"
		if c.local {
			how = "local"
		}
		if g, w := p.executions(), how+" run-1/c1, "+how+" run-1/c2"; g != w {
			t.Errorf("%+v %+v: executions %q, want %q", idem, opts, g, w)
		}
		// Three model calls (two tool calls, then the answer), a tool
		// call after each of the first two.
		wantLocal := []string{durable.ActivityDescribe}
		for step := range 3 {
			if c.localModels {
				wantLocal = append(wantLocal, durable.ActivityModel)
			}
			if c.local && step < 2 {
				wantLocal = append(wantLocal, durable.ActivityTool)
			}
		}
		if g, w := strings.Join(local, ","), strings.Join(wantLocal, ","); g != w {
			t.Errorf("%+v %+v: local activities %q, want %q", idem, opts, g, w)
		}
	}
}

// A local call stays within its bounds: a result over what one workflow
// task may carry, or an attempt over the time bound, makes the call run
// again as the Tool activity, under the same idempotency key, and the
// model reads that run's result; the results of the local calls of one
// workflow task count together.
func TestWorkflowLocalCallBounds(t *testing.T) {
	big := strings.Repeat("x", 600<<10)  // over the 512 KiB of a workflow task
	half := strings.Repeat("y", 300<<10) // two are over it
	cases := []struct {
		name   string
		turns  []scripted.Turn
		answer func(ctx context.Context, n int) (tool.Result, error)
		want   string
		output string
	}{{
		name:  "result over the bound",
		turns: []scripted.Turn{turns()[0], {Text: "ok"}},
		answer: func(context.Context, int) (tool.Result, error) {
			return tool.Text(big), nil
		},
		want:   "local run-1/c1, activity run-1/c1",
		output: big,
	}, {
		name: "results of one workflow task over the bound together",
		turns: []scripted.Turn{{ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "pay", Arguments: json.RawMessage(`{}`)},
			{ID: "c2", Name: "pay", Arguments: json.RawMessage(`{}`)},
		}}, {Text: "ok"}},
		answer: func(context.Context, int) (tool.Result, error) {
			return tool.Text(half), nil
		},
		want:   "local run-1/c1, local run-1/c2, activity run-1/c2",
		output: half,
	}, {
		name:  "attempt over the time bound",
		turns: []scripted.Turn{turns()[0], {Text: "ok"}},
		answer: func(ctx context.Context, n int) (tool.Result, error) {
			if n == 1 {
				// Until the local attempt's time is up.
				<-ctx.Done()
				return tool.Result{}, ctx.Err()
			}
			return tool.Text("paid late"), nil
		},
		want:   "local run-1/c1, activity run-1/c1",
		output: "paid late",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &probe{flags: tool.Flags{Idempotent: true}, answer: c.answer}
			e := env(t, &durable.Activities{Agent: newAgent(t, p, c.turns...)})
			e.SetStartWorkflowOptions(startOptions("run-1"))
			e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "pay"}})
			res := result(t, e)
			if g := p.executions(); g != c.want {
				t.Errorf("executions %q, want %q", g, c.want)
			}
			var results []string
			for _, m := range res.Messages {
				for _, part := range m.Parts {
					if part.ToolResult != nil {
						results = append(results, part.ToolResult.Content)
					}
				}
			}
			if len(results) == 0 || slices.ContainsFunc(results, func(r string) bool { return r != c.output }) {
				t.Errorf("the model read %d results, not all the tool's (%d bytes)", len(results), len(c.output))
			}
		})
	}
}

// Model answers count against what one workflow task's local calls may
// carry: after an answer over it the next model call is an activity (its
// command ends the task, and the answers before it are recorded), the
// run's result unchanged.
func TestWorkflowLocalModelBound(t *testing.T) {
	big := strings.Repeat("x", 600<<10) // over the 512 KiB of a workflow task
	agent := newAgent(t, &probe{flags: tool.Flags{Idempotent: true}}, scripted.Turn{Text: big}, scripted.Turn{Text: `{"ok":true}`})
	agent.Structured = loop.StructuredOutput{Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)}
	e := env(t, &durable.Activities{Agent: agent})
	var local, remote []string
	e.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		local = append(local, info.ActivityType.Name)
	})
	e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		remote = append(remote, info.ActivityType.Name)
	})
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "answer"}, Options: durable.Options{LocalModelCalls: true}})
	res := result(t, e)
	if string(res.Structured) != `{"ok":true}` {
		t.Errorf("result = %s", res.Output)
	}
	if g, w := strings.Join(local, ","), durable.ActivityDescribe+","+durable.ActivityModel; g != w {
		t.Errorf("local activities %q, want %q", g, w)
	}
	if g, w := strings.Join(remote, ","), durable.ActivityModel; g != w {
		t.Errorf("activities %q, want %q", g, w)
	}
}

// A call whose local attempt failed has two attempts left as the
// activity: an idempotent tool that times out on every attempt runs three
// times in all, as it did before it ran locally, and the model reads that
// it timed out.
func TestWorkflowLocalCallAttempts(t *testing.T) {
	p := &probe{flags: tool.Flags{Idempotent: true}}
	e := env(t, &durable.Activities{Agent: newAgent(t, p, turns()[0], scripted.Turn{Text: "ok"})})
	var local, remote int
	e.OnActivity(durable.ActivityTool, mockAny, mockAny).Return(func(ctx context.Context, in durable.ToolInput) (*durable.ToolOutput, error) {
		if activity.GetInfo(ctx).IsLocalActivity {
			local++
		} else {
			remote++
		}
		return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil)
	})
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "pay"}})
	res := result(t, e)
	if local != 1 || remote != 2 {
		t.Errorf("%d local and %d activity attempts, want 1 and 2", local, remote)
	}
	if tr := jsonOf(t, res.Messages); !strings.Contains(tr, "ToolTimeout") {
		t.Errorf("transcript = %s", tr)
	}
}

// On a real server a run's idempotent tool calls are local activities,
// and so are its model calls under LocalModelCalls: its history has a
// marker where a call was, no activity but the model calls' (none under
// LocalModelCalls), and replays (recorded to testdata with -record, so a
// change that breaks runs in flight fails TestRecordedHistoriesReplay).
func TestDevServerLocalCalls(t *testing.T) {
	srv := temporaltest.Start(t)
	c := dial(t, srv)
	cases := []struct {
		id     string
		opts   durable.Options
		models int // model calls that are activities
	}{
		// The version marker, the description and two tool calls are
		// markers; three model calls are activities.
		{"run-local", durable.Options{}, 3},
		// Three model calls are markers too.
		{"run-local-models", durable.Options{LocalModelCalls: true}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			p := &probe{flags: tool.Flags{Idempotent: true}}
			queue := "q-" + tc.id
			startWorker(t, c, queue, &durable.Activities{Agent: newAgent(t, p, turns()...)})
			dc := &durable.Client{Temporal: c, TaskQueue: queue}
			id, err := dc.Start(t.Context(), tc.id, durable.RunInput{Prompt: "pay twice"}, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			res, err := dc.Result(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("local %s/c1, local %s/c2", id, id); res.Output != "paid twice" || p.executions() != want {
				t.Fatalf("result %s, executions %s", jsonOf(t, res), p.executions())
			}
			h := history(t, c, id)
			counts := map[enumspb.EventType]int{}
			for _, ev := range h.Events {
				counts[ev.EventType]++
				if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.ActivityType.GetName() != durable.ActivityModel {
					t.Errorf("an activity %s: only model calls may be", a.ActivityType.GetName())
				}
			}
			if n := counts[enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]; n != tc.models {
				t.Errorf("%d model activities, want %d", n, tc.models)
			}
			if n, want := counts[enumspb.EVENT_TYPE_MARKER_RECORDED], 4+3-tc.models; n != want {
				t.Errorf("%d markers, want %d", n, want)
			}
			replay(t, h, id)
			if *record {
				recordHistory(t, h, id)
			}
		})
	}
}
