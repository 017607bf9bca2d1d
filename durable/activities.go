package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/internal/loopwire"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/policy"
	"github.com/autoagent-go/autoagent/tool"
)

// Activities are the worker's half of a run: the model, the tools and the
// policy of one agent, which the workflow reaches only through them. A
// worker holds the keys and the sandbox; the client that starts a run
// needs neither.
type Activities struct {
	// Agent is the worker's agent: its Provider answers the model calls,
	// its Tools run the tool calls (a plugins directory's tools verify
	// their module's hash before each call), its Policy decides.
	Agent *loop.Agent
}

// unsupported names the agent features a durable run cannot carry.
func unsupported(ag *loop.Agent) error {
	var what []string
	if ag.Checks.PostTurn != nil {
		what = append(what, "PostTurn")
	}
	if len(ag.Checks.PreToolHooks) > 0 || len(ag.Checks.PostToolHooks) > 0 {
		what = append(what, "tool hooks")
	}
	if ag.Knowledge.Memory != nil {
		what = append(what, "Memory")
	}
	if len(what) == 0 {
		return nil
	}
	return fmt.Errorf("durable: the worker's agent uses %v, which a durable run does not carry yet: run it without them, or locally", what)
}

// subAgent is a tool made by loop.Agent.AsTool.
type subAgent interface{ SubAgent() *loop.Agent }

// delegator is a tool made by loop.Delegate.
type delegator interface {
	Specialists() map[string]*loop.Agent
}

// agentAt returns the agent at path: the worker's, or one of its
// sub-agents ("research", "a/b").
func (a *Activities) agentAt(path string) (*loop.Agent, error) {
	ag := a.Agent
	if ag == nil || ag.Provider == nil {
		return nil, temporal.NewNonRetryableApplicationError("durable: the worker has no agent with a provider", "config", nil)
	}
	if path == "" {
		return ag, nil
	}
	parts := strings.Split(path, "/")
	for i := 0; i < len(parts); i++ {
		var t tool.Tool
		if ag.Tools != nil {
			t, _ = ag.Tools.Get(parts[i])
		}
		next, ok := (*loop.Agent)(nil), false
		switch t := t.(type) {
		case subAgent:
			next, ok = t.SubAgent(), true
		case delegator:
			if i+1 < len(parts) {
				i++
				next, ok = t.Specialists()[parts[i]]
			}
		}
		if !ok || next == nil {
			return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: this worker's agent has no sub-agent %q", path), "unknown_tool", nil)
		}
		ag = next
	}
	if ag.Provider == nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: sub-agent %q has no provider", path), "config", nil)
	}
	return ag, nil
}

// Describe returns what the workflow needs of the agent at path.
func (a *Activities) Describe(ctx context.Context, path string) (*Description, error) {
	ag, err := a.agentAt(path)
	if err != nil {
		return nil, err
	}
	if err := unsupported(ag); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "config", nil)
	}
	d := &Description{
		System: ag.System, Model: ag.Model, Temperature: ag.Temperature, MaxTokens: ag.MaxTokens,
		Bounds: ag.Bounds, MaxCorrections: ag.Checks.MaxCorrections,
		OutputSchema: ag.Structured.Schema, OutputSchemaName: ag.Structured.Name, OutputStrict: ag.Structured.Strict, OutputRetries: ag.Structured.Retries,
	}
	if ag.SystemFunc != nil {
		s, err := ag.SystemFunc(ctx)
		if err != nil {
			return nil, fmt.Errorf("durable: the system prompt: %w", err)
		}
		d.System = s
	}
	switch p := ag.Checks.Policy.(type) {
	case nil:
	case *policy.Spec:
		raw, err := json.Marshal(p)
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError("durable: the policy: "+err.Error(), "config", nil)
		}
		d.Policy = raw
	default:
		d.HasPolicy = true
	}
	if cm := ag.CodeMode; cm.Mode != codemode.Off {
		if cm.Runner == nil {
			return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: the worker's agent has code mode %s but no Runner to run its programs (jsprogram.New makes one)", cm.Mode), "config", nil)
		}
		d.CodeMode, d.CodeModeMaxCalls = cm.Mode, cm.MaxCalls
		if langs := codemode.Languages(cm.Runner); len(langs) != 1 || langs[0] != codemode.JavaScript {
			d.CodeModeLanguages = langs
		}
	}
	if ag.Tools != nil {
		for _, t := range ag.Tools.Tools() {
			_, sub := t.(subAgent)
			ti := ToolInfo{Spec: t.Spec(), Flags: tool.FlagsOf(t), SubAgent: sub}
			if dt, ok := t.(delegator); ok {
				ti.Specialists = slices.Sorted(maps.Keys(dt.Specialists()))
			}
			d.Tools = append(d.Tools, ti)
		}
	}
	return d, nil
}

// Model answers one model call. A provider error the provider calls
// retryable (429, 5xx, a broken connection) is retried by the workflow's
// retry policy; any other is final.
func (a *Activities) Model(ctx context.Context, in ModelInput) (*llm.Response, error) {
	ag, err := a.agentAt(in.Agent)
	if err != nil {
		return nil, err
	}
	stop := heartbeat(ctx)
	defer stop()
	resp, err := ag.Provider.Complete(ctx, in.Request)
	if err == nil {
		return resp, nil
	}
	if llm.IsRetryable(err) || ctx.Err() != nil {
		return nil, err
	}
	var pe *llm.ProviderError
	if errors.As(err, &pe) {
		// The details are a value: a local activity's error reaches the
		// workflow undecoded, and activityError reads an llm.ProviderError.
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "provider", err, *pe)
	}
	return nil, temporal.NewNonRetryableApplicationError(err.Error(), "provider", err)
}

// Tool runs one tool call with the call's identity in its context (so
// loop.CallInfoFrom gives the run's idempotency key), and returns its
// result and what it reported. A Go error from the tool is an
// infrastructure failure the model reads, as in the loop; an unknown
// tool is refused (a worker whose manifest lacks the module).
func (a *Activities) Tool(ctx context.Context, in ToolInput) (*ToolOutput, error) {
	ag, err := a.agentAt(in.Agent)
	if err != nil {
		return nil, err
	}
	if ag.Tools == nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: this worker has no tools, so not %q", in.Name), "unknown_tool", nil)
	}
	t, ok := ag.Tools.Get(in.Name)
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: this worker has no tool %q (is its module approved in this worker's manifest?)", in.Name), "unknown_tool", nil)
	}
	stop := heartbeat(ctx)
	defer stop()
	cctx, report := loopwire.RemoteCallContext(ctx, loopwire.Call{RunID: in.RunID, Step: in.Step, CallID: in.CallID, Name: in.Name}, in.Tainted)
	res, err := tool.SafeCall(cctx, t, tool.Call{ID: in.CallID, Name: in.Name, Arguments: in.Arguments})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		res = tool.Errorf("tool %s failed: %v", in.Name, err)
	}
	out := &ToolOutput{Result: res, Report: report()}
	size, err := payloadSize(out)
	switch {
	case err != nil:
		out.Result = tool.Errorf("durable: the result of %s: %v", in.Name, err)
	case in.MaxResult > 0 && size > in.MaxResult:
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("durable: the result of %s is %d bytes, over the %d a local call may return", in.Name, size, in.MaxResult), errLocalTooLarge, nil)
	case size > maxPayload:
		// The model reads why, and the run goes on.
		out.Result = tool.Errorf("%v", payloadError("the result of "+in.Name, size))
	}
	return out, nil
}

// Program runs a code-mode program once with the runner of the worker's
// agent, its calls answered from the record (loopwire.ReplayProgramContext):
// it returns the program's result, or the first call it made past the
// record, which the workflow passes through the run's gate and adds to
// the record before it runs the program again. The program has no effect
// of its own (its runner must give it none: jsprogram's is sandboxed,
// with a fixed clock and a seeded random source), so the activity may
// always be retried: a worker lost mid-program costs a re-run, nothing
// more.
func (a *Activities) Program(ctx context.Context, in ProgramInput) (*ProgramOutput, error) {
	ag, err := a.agentAt(in.Agent)
	if err != nil {
		return nil, err
	}
	if ag.CodeMode.Mode == codemode.Off || ag.CodeMode.Runner == nil {
		return nil, temporal.NewNonRetryableApplicationError("durable: this worker's agent runs no programs (its CodeMode is off or has no Runner)", "config", nil)
	}
	stop := heartbeat(ctx)
	defer stop()
	pctx, end := loopwire.ReplayProgramContext(ctx, loopwire.Call{RunID: in.RunID, Step: in.Step, CallID: in.CallID, Name: codemode.ToolName}, in.Tainted, in.Record)
	res, err := ag.CodeMode.Runner.Run(pctx, in.Program)
	replay := end()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	out := &ProgramOutput{Report: replay.Report}
	switch {
	case replay.Next != nil:
		// Whatever the program did after its call past the record, it did
		// with a refusal for an answer: it runs again.
		out.Call = replay.Next
	case err != nil:
		return nil, fmt.Errorf("durable: running the program: %w", err)
	default:
		out.Result = &res
	}
	if err := checkPayload("the program's output", out); err != nil {
		// The program asked for more than a workflow can carry: it ends
		// here, and the model reads why.
		r := tool.Errorf("%v", err)
		out.Result, out.Call = &r, nil
	}
	return out, nil
}

// Policy asks the worker's agent's policy about one call (a policy that
// is not a policy file).
func (a *Activities) Policy(ctx context.Context, in PolicyArgs) (loop.Decision, error) {
	ag, err := a.agentAt(in.Agent)
	if err != nil {
		return loop.Decision{}, err
	}
	if ag.Checks.Policy == nil {
		return loop.Decision{Verdict: loop.VerdictAllow}, nil
	}
	return ag.Checks.Policy.Decide(ctx, in.Input)
}

// heartbeat records the activity's heartbeats while a tool runs, so that
// a lost worker is noticed within the heartbeat timeout and a cancelled
// run's cancellation reaches the call (through ctx).
func heartbeat(ctx context.Context) (stop func()) {
	if activity.GetInfo(ctx).IsLocalActivity {
		// A local activity has no heartbeat: the workflow task's timeout
		// stands for it.
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		every := time.Second
		if info := activity.GetInfo(ctx); info.HeartbeatTimeout > 0 {
			every = max(info.HeartbeatTimeout/4, 50*time.Millisecond)
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}
