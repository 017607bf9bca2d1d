package durable

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/internal/loopwire"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/policy"
	"github.com/autoagent-go/autoagent/tool"
)

// WorkflowInput is the workflow's argument.
type WorkflowInput struct {
	RunInput
	Options Options `json:"options"`
	// State continues a run (continue-as-new): the loop resumes it.
	State *loop.RunState `json:"state,omitempty"`
	// Decisions given before the run continued as new, not yet applied.
	Decisions []Decision `json:"decisions,omitempty"`
	// Agent is the path of the agent the run runs: "" for the worker's,
	// a sub-agent's for a child workflow (see ModelInput).
	Agent string `json:"agent,omitempty"`
}

// maxHistory is the history length past which a run continues as new, at
// the next checkpoint (Temporal's own limit is 51,200 events).
const maxHistory = 10_000

// maxHistoryBytes is the history size past which a run continues as new
// (each model call's request holds the transcript so far; Temporal's limit
// is 50 MiB).
const maxHistoryBytes = 20 << 20

// errContinue stops the loop at a checkpoint so the run continues as new.
var errContinue = errors.New("durable: the history is long: continuing as new")

// wfKey carries the workflow's context through the loop to the
// activities' stand-ins (a *wfValue).
type wfKey struct{}

type wfValue struct {
	ctx        workflow.Context
	cancel     context.CancelFunc // ends the loop's context
	activities int                // activities this execution scheduled
	// localBytes are the results of the local tool calls of this
	// workflow task (bounded by maxLocalResults).
	localBytes int
}

// wctx returns the workflow's context, counting the activity about to be
// scheduled with it.
func wctx(ctx context.Context) workflow.Context {
	v := ctx.Value(wfKey{}).(*wfValue)
	v.activities++
	return v.ctx
}

// eventsPerActivity is what an activity adds to the history at least
// (scheduled, started, completed, and the workflow task that reads it).
const eventsPerActivity = 6

// run is one workflow execution.
type run struct {
	in        WorkflowInput
	status    Status
	decisions []Decision // given by the update, until applied
	desc      *Description
	history   int // continue-as-new bound
	wf        *wfValue
	// local: this execution runs the description and the calls of
	// idempotent tools as local activities (see localCalls); localModels:
	// its model calls too (Options.LocalModelCalls, from localCalls on).
	local, localModels bool
}

// Run is the workflow: the agent loop, run in the workflow with each model
// call, tool call and (for a Go policy) policy decision an activity, so
// that the run's state is the workflow's and survives any worker. Register
// it under [WorkflowName] (see [NewWorker]).
func Run(ctx workflow.Context, in WorkflowInput) (*loop.Result, error) {
	r := &run{in: in, history: in.Options.MaxHistory}
	if r.history <= 0 {
		r.history = maxHistory
	}
	return r.execute(ctx)
}

func (r *run) execute(ctx workflow.Context) (*loop.Result, error) {
	info := workflow.GetInfo(ctx)
	r.status = Status{RunID: info.WorkflowExecution.ID, State: "running"}
	if st := r.in.State; st != nil {
		r.status.RunID, r.status.Step, r.status.Usage, r.status.Messages = st.RunID, st.Step, st.Usage, st.Messages
	}
	r.decisions = r.in.Decisions
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (Status, error) { return r.status, nil }); err != nil {
		return nil, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateDecide,
		func(ctx workflow.Context, ds []Decision) (Status, error) {
			r.decisions = append(r.decisions, ds...)
			return r.status, nil
		},
		workflow.UpdateHandlerOptions{Validator: r.validate},
	); err != nil {
		return nil, err
	}

	r.wf = &wfValue{ctx: ctx}
	r.local = workflow.GetVersion(ctx, localCalls, workflow.DefaultVersion, 1) >= 1
	r.localModels = r.local && r.in.Options.LocalModelCalls
	var desc Description
	if err := r.describe(ctx, &desc); err != nil {
		return nil, r.failed(err)
	}
	r.desc = &desc
	agent, err := r.agent(ctx)
	if err != nil {
		return nil, r.failed(err)
	}

	// The loop's context: ends when the workflow is cancelled (a
	// coroutine of the workflow, so replays see it end at the same point).
	gctx, cancel := context.WithCancel(context.WithValue(context.Background(), wfKey{}, r.wf))
	defer cancel()
	r.wf.cancel = cancel
	workflow.Go(ctx, func(c workflow.Context) {
		c.Done().Receive(c, nil)
		cancel()
	})

	var res *loop.Result
	switch {
	case r.in.State != nil:
		res, err = agent.Resume(gctx, r.in.State)
	case len(r.in.Messages) > 0:
		res, err = agent.RunMessages(gctx, r.in.Messages)
	default:
		res, err = agent.Run(gctx, r.in.Prompt)
	}
	for {
		var stop *loop.StopError
		var rerr *loop.RunError
		switch {
		case errors.As(err, &rerr) && errors.Is(err, errContinue):
			in := r.in
			in.State, in.Decisions, in.Prompt, in.Messages = rerr.State, r.decisions, "", nil
			return nil, workflow.NewContinueAsNewError(ctx, WorkflowName, in)
		case errors.As(err, &stop) && stop.Reason == loop.StopApprovalRequired:
			r.pause(stop)
			if err := workflow.Await(ctx, r.decided); err != nil {
				// Cancelled while waiting: the run ends cancelled.
				r.status.State, r.status.Pending = string(loop.StopCancelled), nil
				st := stop.State
				return &loop.Result{Steps: st.Step, Usage: st.Usage, Messages: st.Messages, StopReason: loop.StopCancelled}, nil
			}
			opts := r.take()
			res, err = agent.Resume(gctx, stop.State, opts...)
			continue
		case err != nil && res == nil:
			return nil, r.failed(err)
		}
		break
	}
	r.status.State = string(res.StopReason)
	r.status.Pending = nil
	r.observe(res.State)
	return res, nil
}

// localCalls is the change (workflow.GetVersion) from which a run reads
// its agent's description, and calls its idempotent tools (and its model,
// under Options.LocalModelCalls), through local activities: a history
// recorded before it replays with the activities it recorded.
const localCalls = "local-calls"

// describe reads the agent's description: a local activity (it has no
// effect, so a worker lost before the marker is recorded reads it again),
// or, for a history from before localCalls, the activity it recorded.
func (r *run) describe(ctx workflow.Context, desc *Description) error {
	if !r.local {
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		return workflow.ExecuteActivity(actx, ActivityDescribe, r.in.Agent).Get(ctx, desc)
	}
	lo := workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute, ScheduleToCloseTimeout: 10 * time.Minute}
	return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, lo), ActivityDescribe, r.in.Agent).Get(ctx, desc)
}

// agent is the loop's agent for this run: the worker's description, with
// stand-ins for its model, tools and policy that run activities.
func (r *run) agent(ctx workflow.Context) (*loop.Agent, error) {
	d := r.desc
	bounds := d.Bounds
	// Tool time limits are the activities' (a stand-in never times out in
	// the workflow, where the loop must not start goroutines).
	toolTimeout := cmp.Or(bounds.ToolTimeout, r.in.Options.ToolTimeout, 10*time.Minute)
	bounds.ToolTimeout = 0
	a := &loop.Agent{
		Provider: modelStandIn{run: r, opts: r.in.Options, agent: r.in.Agent}, System: d.System, Model: d.Model, Temperature: d.Temperature, MaxTokens: d.MaxTokens,
		Bounds: bounds, Checks: loop.Checks{MaxCorrections: d.MaxCorrections}, MaxParallelTools: 1,
		Structured: loop.StructuredOutput{Schema: d.OutputSchema, Name: d.OutputSchemaName, Strict: d.OutputStrict, Retries: d.OutputRetries},
		NewRunID:   func() string { return r.status.RunID },
	}
	a.Checkpoint = func(_ context.Context, st *loop.RunState) error {
		r.observe(st)
		if r.longHistory(ctx) && st.PendingTurn() == nil {
			return errContinue
		}
		return nil
	}
	if len(d.Tools) > 0 {
		var tools []tool.Tool
		for _, ti := range d.Tools {
			if len(ti.Specialists) > 0 {
				tools = append(tools, &delegateStandIn{standIn: standIn{ti}, path: path(r.in.Agent, ti.Spec.Name), opts: r.in.Options})
				continue
			}
			if ti.SubAgent {
				tools = append(tools, &subAgentStandIn{standIn: standIn{ti}, path: path(r.in.Agent, ti.Spec.Name), opts: r.in.Options})
				continue
			}
			tools = append(tools, &toolStandIn{standIn: standIn{ti}, run: r, agent: r.in.Agent, timeout: cmp.Or(ti.Flags.Timeout, toolTimeout), heartbeat: cmp.Or(r.in.Options.Heartbeat, defaultHeartbeat)})
		}
		reg, err := tool.NewRegistry(tools...)
		if err != nil {
			return nil, err
		}
		a.Tools = reg
	}
	if d.CodeMode != codemode.Off {
		a.CodeMode = codemode.Config{Mode: d.CodeMode, MaxCalls: d.CodeModeMaxCalls, Runner: &programStandIn{
			run: r, agent: r.in.Agent, maxCalls: d.CodeModeMaxCalls, languages: d.CodeModeLanguages,
			timeout: toolTimeout, heartbeat: cmp.Or(r.in.Options.Heartbeat, defaultHeartbeat),
		}}
	}
	switch {
	case len(d.Policy) > 0:
		p, err := policy.Parse(d.Policy)
		if err != nil {
			return nil, fmt.Errorf("durable: the worker's policy: %w", err)
		}
		a.Checks.Policy = p
	case d.HasPolicy:
		agent := r.in.Agent
		a.Checks.Policy = loop.PolicyFunc(func(ctx context.Context, in *loop.PolicyInput) (loop.Decision, error) {
			return policyStandIn(ctx, agent, in)
		})
	}
	return a, nil
}

// longHistory reports that the run should continue as new: the server
// suggests it, or the history (as the server counts it, or as this
// execution's activities make it at least) is past the bound, or past 20
// MiB.
func (r *run) longHistory(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	n := max(info.GetCurrentHistoryLength(), r.wf.activities*eventsPerActivity)
	return info.GetContinueAsNewSuggested() || n > r.history || info.GetCurrentHistorySize() > maxHistoryBytes
}

// observe copies what the query shows from the loop's state.
func (r *run) observe(st *loop.RunState) {
	if st == nil {
		return
	}
	r.status.Step, r.status.Usage = st.Step, st.Usage
	r.status.Messages = slices.Clone(st.Messages)
}

func (r *run) pause(stop *loop.StopError) {
	r.observe(stop.State)
	r.status.State = "awaiting_approval"
	r.status.Pending = slices.Clone(stop.Pending)
}

// validate refuses decisions that do not answer a pending call, before
// they enter the history.
func (r *run) validate(ds []Decision) error {
	if r.status.State != "awaiting_approval" {
		return fmt.Errorf("the run is %s: it awaits no decision", r.status.State)
	}
	if len(ds) == 0 {
		return errors.New("no decision given")
	}
	for _, d := range ds {
		if !slices.ContainsFunc(r.status.Pending, func(p loop.PendingCall) bool { return p.Call.ID == d.CallID }) {
			return fmt.Errorf("call %q is not awaiting a decision (pending: %s)", d.CallID, pendingIDs(r.status.Pending))
		}
	}
	return nil
}

func pendingIDs(ps []loop.PendingCall) string {
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.Call.ID)
	}
	return fmt.Sprint(ids)
}

// decided reports that every pending call has a decision.
func (r *run) decided() bool {
	for _, p := range r.status.Pending {
		if !slices.ContainsFunc(r.decisions, func(d Decision) bool { return d.CallID == p.Call.ID }) {
			return false
		}
	}
	return len(r.status.Pending) > 0
}

// take turns the decisions given into the loop's resume options and
// clears them; each is applied exactly once.
func (r *run) take() []loop.ResumeOption {
	var opts []loop.ResumeOption
	for _, d := range r.decisions {
		if d.Approved {
			opts = append(opts, loop.Approve(d.CallID))
		} else {
			opts = append(opts, loop.Reject(d.CallID, d.Reason))
		}
	}
	r.decisions = nil
	r.status.State, r.status.Pending = "running", nil
	return opts
}

func (r *run) failed(err error) error {
	r.status.State = "failed"
	r.status.Error = err.Error()
	var rerr *loop.RunError
	if errors.As(err, &rerr) {
		r.observe(rerr.State)
	}
	return err
}

// modelStandIn is the loop's provider in the workflow: each call is the
// Model activity, a local one when the run's options say LocalModelCalls
// (see RATIONALE.md, "Why are model calls activities, and local ones
// only on request?").
type modelStandIn struct {
	run   *run
	opts  Options
	agent string
}

func (m modelStandIn) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	wc := wctx(ctx)
	in := ModelInput{Agent: m.agent, Request: req}
	if err := checkPayload("the model request", in); err != nil {
		return nil, err
	}
	attempts := m.opts.ModelAttempts
	if attempts <= 0 {
		attempts = 5
	}
	timeout := cmp.Or(m.opts.ModelTimeout, 5*time.Minute)
	retry := &temporal.RetryPolicy{MaximumAttempts: attempts, InitialInterval: time.Second, BackoffCoefficient: 2}
	wf := m.run.wf
	var resp llm.Response
	if m.run.localModels && wf.localBytes < maxLocalResults {
		lo := workflow.LocalActivityOptions{
			StartToCloseTimeout: timeout,
			// A local activity's attempts end at ScheduleToClose, which
			// is StartToClose when unset: room for every attempt and
			// its backoff (at most 100 s, the policy's default cap).
			ScheduleToCloseTimeout: time.Duration(attempts) * (timeout + 100*time.Second),
			RetryPolicy:            retry,
		}
		if err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(wc, lo), ActivityModel, in).Get(wc, &resp); err != nil {
			return nil, activityError(ctx, err)
		}
		size, err := payloadSize(&resp)
		if err != nil {
			return nil, err
		}
		wf.localBytes += size
		return &resp, nil
	}
	wf.localBytes = 0 // the workflow task ends here
	ao := workflow.ActivityOptions{
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    cmp.Or(m.opts.Heartbeat, defaultHeartbeat),
		RetryPolicy:         retry,
	}
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(wc, ao), ActivityModel, in).Get(wc, &resp); err != nil {
		return nil, activityError(ctx, err)
	}
	return &resp, nil
}

// Stream is Complete's answer, adapted: the workflow does not stream.
func (m modelStandIn) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, m.Complete)
}

// activityError turns an activity's failure into the loop's terms: a
// cancellation is the context's, a provider's refusal its ProviderError.
func activityError(ctx context.Context, err error) error {
	var cerr *temporal.CanceledError
	if errors.As(err, &cerr) {
		// The workflow was cancelled: the loop's context ends now, before
		// the coroutine that watches for it runs, so the loop stops as
		// cancelled.
		ctx.Value(wfKey{}).(*wfValue).cancel()
		return ctx.Err()
	}
	var aerr *temporal.ApplicationError
	if errors.As(err, &aerr) && aerr.HasDetails() {
		var pe llm.ProviderError
		if aerr.Details(&pe) == nil && pe.Message != "" {
			return &pe
		}
	}
	return err
}

// toolStandIn is one of the worker's tools in the workflow: a call is the
// Tool activity. An idempotent tool's activity is retried; any other runs
// at most once, and one whose worker was lost mid-call is reported
// OutcomeUnknown, never run again.
type toolStandIn struct {
	standIn
	run       *run
	agent     string
	timeout   time.Duration
	heartbeat time.Duration
}

// standIn is what every tool stand-in shows the loop: the worker's spec
// and flags, without a time limit (the activity's or the child's, see
// run.agent).
type standIn struct{ info ToolInfo }

func (t *standIn) Spec() llm.ToolSpec { return t.info.Spec }

func (t *standIn) Flags() tool.Flags {
	f := t.info.Flags
	f.Timeout = 0
	f.Permissions = slices.Clone(f.Permissions)
	return f
}

func (t *toolStandIn) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	ci, _ := loop.CallInfoFrom(ctx)
	in := ToolInput{Agent: t.agent, RunID: ci.RunID, Step: ci.Step, CallID: c.ID, Name: c.Name, Arguments: c.Arguments, Tainted: tool.Tainted(ctx)}
	local, done, lerr := t.callLocal(ctx, in)
	if done {
		if lerr != nil {
			return tool.Result{}, lerr
		}
		return t.report(ctx, local), nil
	}
	wc := wctx(ctx)
	t.run.wf.localBytes = 0 // the workflow task ends here
	attempts := int32(1)
	switch {
	case t.info.Flags.Idempotent && lerr != nil:
		// The local attempt was the first of three.
		attempts = 2
	case t.info.Flags.Idempotent:
		attempts = 3
	}
	ao := workflow.ActivityOptions{
		StartToCloseTimeout: t.timeout,
		HeartbeatTimeout:    t.heartbeat,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: attempts, InitialInterval: time.Second},
	}
	var out ToolOutput
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(wc, ao), ActivityTool, in).Get(wc, &out)
	if err != nil {
		var aerr *temporal.ApplicationError
		var terr *temporal.TimeoutError
		switch {
		case errors.As(err, &aerr) && aerr.Type() == "unknown_tool":
			return tool.Errorf("%s", aerr.Message()), nil
		case errors.As(err, &terr) && !t.info.Flags.Idempotent:
			// The worker was lost, or the call outlived its limit: whether
			// it took effect is unknown.
			return tool.Result{}, refusal.Unknown(c.Name)
		case errors.As(err, &terr):
			return tool.Result{}, refusal.Timeout(c.Name, t.timeout)
		}
		return tool.Result{}, activityError(ctx, err)
	}
	return t.report(ctx, &out), nil
}

// report passes on what the tool reported, and returns its result.
func (t *toolStandIn) report(ctx context.Context, out *ToolOutput) tool.Result {
	if out.Report.Tainted {
		tool.ReportTaint(ctx)
	}
	if out.Report.HaveUsage {
		loop.ReportUsage(ctx, out.Report.Usage)
	}
	return out.Result
}

// A call of an idempotent tool runs first as a local activity, on the
// worker that runs the workflow task, within these bounds: maxLocalTool
// for the attempt (under the workflow task's timeout of 10 s, so a local
// call never holds a task past it), and maxLocalResults for the results
// of the local calls of one workflow task (their markers travel in the
// task's completion, which gRPC bounds at 4 MiB). See RATIONALE.md, "Why
// are an idempotent tool's calls local activities?".
const (
	maxLocalTool    = 5 * time.Second
	maxLocalResults = 512 << 10
)

// errLocalTooLarge is the type of the Tool activity's error for a local
// call whose output is over its bound (ToolInput.MaxResult).
const errLocalTooLarge = "local_result_too_large"

// errLocalFailed is callLocal's error for a local attempt that failed:
// the call runs as an activity, with one attempt fewer.
var errLocalFailed = errors.New("durable: the local attempt failed")

// callLocal runs the call as a local activity when the tool is
// idempotent, declares no time limit over maxLocalTool (a slow tool would
// waste its local attempt), the run is past localCalls, and the workflow
// task has room for its result. done is false when the call must run as
// an activity instead: not eligible (err nil), or the local attempt failed
// (errLocalFailed: over its time or size bound, a worker error). Running
// it again is sound: the tool is idempotent, and it gets the same
// idempotency key.
func (t *toolStandIn) callLocal(ctx context.Context, in ToolInput) (out *ToolOutput, done bool, err error) {
	wf := t.run.wf
	if !t.run.local || !t.info.Flags.Idempotent || t.info.Flags.Timeout > maxLocalTool || wf.localBytes >= maxLocalResults {
		return nil, false, nil
	}
	wc := wctx(ctx)
	in.MaxResult = maxLocalResults - wf.localBytes
	lo := workflow.LocalActivityOptions{
		StartToCloseTimeout: min(t.timeout, maxLocalTool),
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	}
	var res ToolOutput
	f := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(wc, lo), ActivityTool, in)
	if err := f.Get(wc, &res); err != nil {
		var aerr *temporal.ApplicationError
		var cerr *temporal.CanceledError
		switch {
		case errors.As(err, &cerr):
			return nil, true, activityError(ctx, err)
		case errors.As(err, &aerr) && aerr.Type() == "unknown_tool":
			r := tool.Errorf("%s", aerr.Message())
			return &ToolOutput{Result: r}, true, nil
		}
		return nil, false, errLocalFailed
	}
	size, err := payloadSize(&res)
	if err != nil {
		return nil, true, err
	}
	wf.localBytes += size
	return &res, true, nil
}

// policyStandIn asks the worker's policy (a local activity: recorded, so
// a replay reads the same decision).
func policyStandIn(ctx context.Context, agent string, in *loop.PolicyInput) (loop.Decision, error) {
	wc := wctx(ctx)
	lo := workflow.LocalActivityOptions{StartToCloseTimeout: 30 * time.Second}
	var d loop.Decision
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(wc, lo), ActivityPolicy, PolicyArgs{Agent: agent, Input: in}).Get(wc, &d)
	return d, err
}

// maxPayload bounds what the workflow hands an activity, and an activity
// returns: Temporal refuses payloads over 2 MiB (the server's default
// limit), and a workflow whose command it refuses is stuck retrying it.
// A run whose transcript outgrows it fails with ErrPayloadTooLarge
// instead; bound it with Bounds.MaxToolResultChars and pruning.
const maxPayload = 1536 << 10

// ErrPayloadTooLarge is wrapped by the error of a run whose model request
// or tool result is over the payload limit (1.5 MiB).
var ErrPayloadTooLarge = errors.New("durable: over Temporal's payload limit")

func checkPayload(what string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("durable: %s: %w", what, err)
	}
	if len(data) > maxPayload {
		return payloadError(what, len(data))
	}
	return nil
}

func payloadError(what string, size int) error {
	return fmt.Errorf("%w: %s is %d KiB, over %d KiB: bound the transcript (Bounds.MaxToolResultChars, PruneToolResultsAfter) or the tool's output", ErrPayloadTooLarge, what, size>>10, maxPayload>>10)
}

// defaultHeartbeat is how long a model or tool activity may go without a
// heartbeat before its worker is taken for lost.
const defaultHeartbeat = 30 * time.Second

func path(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "/" + name
}

// subAgentStandIn is a sub-agent of the worker's agent (loop's AsTool):
// each call is a child workflow running the sub-agent's loop, whose
// spend counts in this run and whose taint taints it, as AsTool's do.
// The child's ID is this run's and the call's ("RUN/CALL"): a decision
// for a call the sub-agent makes is sent to that run.
type subAgentStandIn struct {
	standIn
	path string
	opts Options
}

func (t *subAgentStandIn) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	var in struct {
		Request string `json:"request"`
	}
	if err := json.Unmarshal(c.Arguments, &in); err != nil || strings.TrimSpace(in.Request) == "" {
		return tool.Errorf("`request` is empty: say what the sub-agent should do"), nil
	}
	wc := wctx(ctx)
	ci, _ := loop.CallInfoFrom(ctx)
	co := workflow.ChildWorkflowOptions{WorkflowID: ci.IdempotencyKey()}
	child := WorkflowInput{RunInput: RunInput{Prompt: in.Request}, Options: t.opts, Agent: t.path}
	var res loop.Result
	if err := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(wc, co), WorkflowName, child).Get(wc, &res); err != nil {
		var cerr *temporal.CanceledError
		if errors.As(err, &cerr) {
			return tool.Result{}, activityError(ctx, err)
		}
		return tool.Errorf("sub-agent %s failed: %v", t.info.Spec.Name, err), nil
	}
	have := res.Usage != (llm.Usage{})
	if have {
		loop.ReportUsage(ctx, res.Usage)
	}
	if loop.IsTainted(res.Messages) {
		tool.ReportTaint(ctx)
	}
	if res.StopReason != loop.StopDone {
		return tool.Errorf("sub-agent %s failed: %s", t.info.Spec.Name, res.StopReason), nil
	}
	return loopwire.SubAgentResult(res.Output, res.Steps, res.Usage, have), nil
}

// childOutcome is a child run's outcome as a delegation takes it.
func childOutcome(res *loop.Result, err error) loopwire.Outcome {
	if err != nil {
		return loopwire.Outcome{Err: err}
	}
	o := loopwire.Outcome{Usage: res.Usage, HaveUsage: res.Usage != (llm.Usage{}), Tainted: loop.IsTainted(res.Messages)}
	if res.StopReason != loop.StopDone {
		o.Err = &loop.RunError{Step: res.Steps, Err: fmt.Errorf("run stopped: %s", res.StopReason)}
		return o
	}
	o.Output, o.Steps = res.Output, res.Steps
	return o
}

// delegateStandIn is a Delegate tool of the worker's agent: each request
// is a child workflow ("RUN/CALL/N" for the call's Nth request) running
// the specialist's loop; the requests to different specialists run at
// once, those to one specialist one after the other, as Delegate does.
type delegateStandIn struct {
	standIn
	path string
	opts Options
}

func (t *delegateStandIn) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	d, bad := loopwire.ParseDelegation(c.Arguments, t.info.Specialists)
	if bad != nil {
		return *bad, nil
	}
	wc := wctx(ctx)
	ci, _ := loop.CallInfoFrom(ctx)
	wg := workflow.NewWaitGroup(wc)
	var cancelled error
	for _, group := range d.Groups() {
		wg.Add(1)
		workflow.Go(wc, func(gc workflow.Context) {
			defer wg.Done()
			for _, r := range group {
				co := workflow.ChildWorkflowOptions{WorkflowID: fmt.Sprintf("%s/%d", ci.IdempotencyKey(), r.Index)}
				child := WorkflowInput{RunInput: RunInput{Prompt: r.Request}, Options: t.opts, Agent: t.path + "/" + r.Specialist}
				var res loop.Result
				err := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(gc, co), WorkflowName, child).Get(gc, &res)
				var cerr *temporal.CanceledError
				if errors.As(err, &cerr) {
					cancelled = err
					return
				}
				d.Done(r.Index, childOutcome(&res, err))
			}
		})
	}
	wg.Wait(wc)
	if cancelled != nil {
		return tool.Result{}, activityError(ctx, cancelled)
	}
	return d.Result(ctx), nil
}
