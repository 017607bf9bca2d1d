package loop

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// PreToolHook sees a tool call of the model before the guards, the policy
// and any person do. Return the zero HookDecision to let it go as it is,
// Deny to refuse it (the model reads "ToolHookDenied: " and the reason),
// or Arguments to replace its arguments: they are validated against the
// tool's input schema, and everything after (guards, policy, approval,
// the tool, the journal) sees the new ones. The model's message keeps what
// it asked for. An error or a panic denies the call (fail-closed).
//
//	redactPaths := func(_ context.Context, c *loop.HookCall) (loop.HookDecision, error) {
//		if c.Call.Name == "read_file" && strings.Contains(string(c.Call.Arguments), "..") {
//			return loop.HookDecision{Deny: "paths may not climb out of the workspace"}, nil
//		}
//		return loop.HookDecision{}, nil
//	}
//
// Hooks run one at a time, once per call of a turn (again when a paused
// turn resumes: keep them deterministic), on the model's calls and on the
// calls tools make through CallNested alike (from the calling tool's
// goroutine). Calls of a run with PreToolHooks do not start early.
type PreToolHook func(ctx context.Context, c *HookCall) (HookDecision, error)

// HookCall is what a PreToolHook sees: the call (with the arguments the
// hooks before it left), the tool's spec and flags (zero for an unknown
// tool), the step and the run.
type HookCall struct {
	Call  llm.ToolCall
	Spec  llm.ToolSpec
	Flags tool.Flags
	Known bool
	Step  int
	RunID string
}

// HookDecision is a PreToolHook's verdict.
type HookDecision struct {
	Deny      string          // non-empty: refuse the call with this reason
	Arguments json.RawMessage // non-nil: the call's new arguments
}

// PostToolHook may transform a result before the model sees it (redact,
// shorten, annotate), and a result a tool gets through CallNested before
// the tool sees it: it edits r in place. An error or a panic leaves the
// result as the tool gave it, and is traced. Results replayed from the
// journal go through the hooks as well.
type PostToolHook func(ctx context.Context, c llm.ToolCall, r *HookResult) error

// HookResult is a result as PostToolHooks see and edit it.
type HookResult struct {
	Content string
	IsError bool
}

// preHooks runs the pre-tool hooks on p's call, in order: it returns the
// refusal of a denial or a failure, and sets p.call's arguments on a
// rewrite.
func (r *runner) preHooks(step int, llmSpan string, p *plan) refusal.Refusal {
	ev := trace.Hook{Step: step, Name: p.call.Name, CallID: p.call.ID}
	for i, h := range r.a.Checks.PreToolHooks {
		in := &HookCall{Call: p.call, Flags: p.flags, Known: p.tool != nil, Step: step, RunID: r.st.RunID}
		if p.tool != nil {
			in.Spec = p.tool.Spec()
		}
		var d HookDecision
		err := protect("pre-tool hook", func() (err error) {
			d, err = h(r.ctx, in)
			return err
		})
		switch {
		case err != nil:
			ev.Status, ev.Error = "error", err.Error()
			traceEvent(r, trace.ToolHook, llmSpan, ev)
			return refusal.New(refusal.HookDenied, "the call was refused because a check failed (hook %d: %v).", i+1, err)
		case d.Deny != "":
			ev.Status, ev.Reason = "deny", d.Deny
			traceEvent(r, trace.ToolHook, llmSpan, ev)
			return refusal.New(refusal.HookDenied, "%s", d.Deny)
		case d.Arguments != nil:
			if err := validateArguments(p, d.Arguments); err != nil {
				ev.Status, ev.Error = "error", err.Error()
				traceEvent(r, trace.ToolHook, llmSpan, ev)
				return refusal.New(refusal.HookDenied, "hook %d rewrote the arguments into ones the tool refuses: %v", i+1, err)
			}
			p.call.Arguments = append(json.RawMessage(nil), d.Arguments...)
			ev.Status = "rewrite"
			traceEvent(r, trace.ToolHook, llmSpan, ev)
		}
	}
	return refusal.Refusal{}
}

// validateArguments checks rewritten arguments against the tool's schema.
func validateArguments(p *plan, args json.RawMessage) error {
	if !json.Valid(args) {
		return fmt.Errorf("not JSON")
	}
	if p.tool == nil {
		return nil
	}
	s, err := tool.CompileSchema(p.tool.Spec().InputSchema)
	if err != nil {
		return fmt.Errorf("the tool's schema: %v", err)
	}
	return s.Validate(args)
}

// postHooks runs the post-tool hooks on a result, in order.
func (r *runner) postHooks(step int, llmSpan string, c llm.ToolCall, raw *rawResult) {
	for i, h := range r.a.Checks.PostToolHooks {
		res := HookResult{Content: raw.text, IsError: raw.isError}
		err := protect("post-tool hook", func() error { return h(r.ctx, c, &res) })
		if err != nil {
			traceEvent(r, trace.ToolHook, llmSpan, trace.Hook{Step: step, Name: c.Name, CallID: c.ID, Status: "error", Error: fmt.Sprintf("post-tool hook %d: %v", i+1, err)})
			continue
		}
		raw.text, raw.isError = res.Content, res.IsError
	}
}
