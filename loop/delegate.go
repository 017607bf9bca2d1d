package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/autoagent-go/autoagent/internal/loopwire"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/tool"
)

type asToolIn struct {
	Request string `json:"request" jsonschema:"The request to handle, in natural language."`
}

// AsTool returns a tool that hands a request to a as a sub-agent: each call
// is a fresh, stateless run of a (its system prompt, then the request).
//
// The sub-run's token spend is reported to the calling run (see
// [ReportUsage]) and counts in its budget, failed runs included. A
// sub-agent failure (provider error, a bound) is an error result the
// calling model sees, never a failure of the calling run. A sub-run that
// ingested untrusted content taints the caller, and its output is framed
// as untrusted there. With a shared Tracer, the sub-run's events are
// children of the tool call that started it.
//
// The tool's SubAgent method returns a, for an engine that runs the
// sub-agent its own way (a durable run makes it a child workflow).
func (a *Agent) AsTool(name, description string) (tool.Tool, error) {
	t, err := tool.New(name, description, func(ctx context.Context, in asToolIn) (tool.Result, error) {
		if strings.TrimSpace(in.Request) == "" {
			return tool.Errorf("`request` is empty: say what the sub-agent should do"), nil
		}
		sub := runSub(ctx, a, "agent", in.Request)
		if sub.have {
			ReportUsage(ctx, sub.spent)
		}
		if sub.tainted {
			tool.ReportTaint(ctx)
		}
		if sub.paused {
			return tool.Result{}, refusal.New(refusal.ApprovalRequired, "sub-agent %s paused: a call it made awaits a person's decision; the run pauses after this call and the sub-agent continues once it is decided.", name)
		}
		if sub.err != nil {
			return tool.Errorf("sub-agent %s failed: %v", name, sub.err), nil
		}
		u, have, _ := spendOf(sub.res, nil)
		return loopwire.SubAgentResult(sub.res.Output, sub.res.Steps, u, have), nil
	})
	if err != nil {
		return nil, err
	}
	return subAgentTool{t, a}, nil
}

// subAgentTool is AsTool's tool.
type subAgentTool struct {
	tool.Tool
	agent *Agent
}

// SubAgent returns the agent the tool runs.
func (t subAgentTool) SubAgent() *Agent { return t.agent }

// subRun is what one execution of a tool call got from a sub-agent's run.
type subRun struct {
	res *Result
	err error
	// spent is the spend of this execution only (have: some was
	// reported): a run continued after a pause reports what it spent
	// since, a run answered from the record nothing.
	spent   llm.Usage
	have    bool
	tainted bool
	// paused: the sub-run awaits a decision for one of its calls; the
	// calling run pauses after the turn.
	paused bool
}

// runSub runs a on prompt as a sub-agent of the tool call running with
// ctx; key names the sub-run among the call's (a Delegate call makes
// several).
//
// The sub-run inherits the caller's taint. When it pauses for approval,
// its pending calls become the calling run's (id "<call id>/<key>/<its
// call id>", Parent the call's id), its state is kept in the calling
// run's record (RunState.Subruns), and the calling tool's result is not
// kept: the run pauses after the turn. When the call runs again on
// resume, the sub-run continues from its state with the decisions given
// for its calls, each applied once; a sub-run that finished before the
// pause is answered from its state, not run again.
func runSub(ctx context.Context, a *Agent, key, prompt string) subRun {
	cc, ok := ctx.Value(callKey{}).(*callCtx)
	if !ok || cc.run == nil {
		res, err := a.Run(ctx, prompt)
		u, have, tainted := spendOf(res, err)
		return subRun{res: res, err: err, spent: u, have: have, tainted: tainted}
	}
	r := cc.run
	prefix := cc.info.CallID + "/" + key
	var before llm.Usage
	var res *Result
	var err error
	if st, ok := r.record.subrun(prefix); ok {
		before = st.Usage
		var opts []ResumeOption
		for id, d := range r.st.Decisions {
			sub, ok := strings.CutPrefix(id, prefix+"/")
			if !ok {
				continue
			}
			if d.Verdict == VerdictApprove {
				opts = append(opts, Approve(sub))
			} else {
				opts = append(opts, Reject(sub, d.Reason))
			}
		}
		res, err = a.Resume(ctx, st, opts...)
	} else {
		res, err = a.Run(ctx, prompt)
	}
	u, have, tainted := spendOf(res, err)
	spent := llm.Usage{InputTokens: u.InputTokens - before.InputTokens, OutputTokens: u.OutputTokens - before.OutputTokens,
		CachedTokens: u.CachedTokens - before.CachedTokens, TotalTokens: u.TotalTokens - before.TotalTokens}
	out := subRun{res: res, err: err, spent: spent, have: have && spent != (llm.Usage{}), tainted: tainted}
	var se *StopError
	switch {
	case errors.As(err, &se) && se.Reason == StopApprovalRequired && res != nil && res.State != nil:
		r.record.keepSubrun(prefix, res.State)
		for _, p := range res.State.Pending {
			p.Call.ID = prefix + "/" + p.Call.ID
			p.Parent = cc.info.CallID
			r.record.pend(p)
		}
		cc.paused.Store(true)
		out.paused = true
	case err == nil && res != nil && res.State != nil:
		// Kept until the turn is done: a Delegate call that runs again
		// because another specialist paused answers this one from it.
		r.record.keepSubrun(prefix, res.State)
	default:
		r.record.keepSubrun(prefix, nil)
	}
	return out
}

// spendOf returns the usage and taint of a finished or failed run.
func spendOf(res *Result, err error) (llm.Usage, bool, bool) {
	if res != nil {
		return res.Usage, res.UsageReported, res.Tainted
	}
	var re *RunError
	if errors.As(err, &re) && re.State != nil {
		return re.State.Usage, re.State.HaveUsage, re.State.Tainted
	}
	return llm.Usage{}, false, false
}

// DelegateOptions configures [Delegate]. The zero value works.
type DelegateOptions struct {
	// Name is the tool's name; "" means "delegate".
	Name string
	// Description is the tool's description; "" lists the specialists and
	// asks the model to group its requests in one call.
	Description string
	// MaxParallel bounds the specialists working at once; 0 means 4.
	MaxParallel int
}

type delegateIn struct {
	Requests []delegateRequest `json:"requests" jsonschema:"The requests, each for one specialist. Group every request of this step in one call."`
}

type delegateRequest struct {
	Specialist string `json:"specialist" jsonschema:"The specialist's name."`
	Request    string `json:"request" jsonschema:"What the specialist should do, in natural language."`
}

type delegateResponse struct {
	Specialist string `json:"specialist"`
	Output     string `json:"output,omitempty"`
	Steps      int    `json:"steps,omitempty"`
	Tokens     *int64 `json:"tokens,omitempty"`
	Error      string `json:"error,omitempty"`
}

type delegateOut struct {
	Responses []delegateResponse `json:"responses"`
	Tokens    *int64             `json:"tokens"`
}

// Delegate returns one tool that sends requests to several specialist
// agents at once: {"requests": [{"specialist": "...", "request": "..."}]}.
// Requests to different specialists run concurrently (at most MaxParallel),
// requests to the same specialist one after the other; the call returns
// when all are done, with the responses in request order. An unknown
// specialist or a failed run is an error entry, not a failure of the whole
// call. Spend and taint flow to the calling run as with [Agent.AsTool]: when
// any specialist's run was tainted, the whole result is framed as untrusted.
func Delegate(specialists map[string]*Agent, opts DelegateOptions) (tool.Tool, error) {
	if len(specialists) == 0 {
		return nil, errors.New("loop: Delegate needs at least one specialist")
	}
	names := make([]string, 0, len(specialists))
	for n, a := range specialists {
		if a == nil {
			return nil, fmt.Errorf("loop: Delegate: specialist %q is nil", n)
		}
		names = append(names, n)
	}
	slices.Sort(names)
	if opts.Name == "" {
		opts.Name = "delegate"
	}
	if opts.Description == "" {
		opts.Description = fmt.Sprintf("Hand requests to specialist agents, who work in parallel. Specialists: %s. Group all the requests you have now in one call.", strings.Join(names, ", "))
	}
	if opts.MaxParallel <= 0 {
		opts.MaxParallel = 4
	}
	t, err := tool.New(opts.Name, opts.Description, func(ctx context.Context, in delegateIn) (tool.Result, error) {
		d, bad := newDelegation(in, names)
		if bad != nil {
			return *bad, nil
		}
		sem := make(chan struct{}, opts.MaxParallel)
		var wg sync.WaitGroup
		for _, group := range d.Groups() {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				for _, r := range group {
					d.done(r.Index, runSub(ctx, specialists[r.Specialist], fmt.Sprintf("request%d", r.Index), r.Request))
				}
			}()
		}
		wg.Wait()
		if d.paused {
			res := d.Result(ctx)
			return tool.Result{}, refusal.New(refusal.ApprovalRequired, "a specialist paused: a call it made awaits a person's decision; the run pauses after this call and the specialists continue once it is decided. So far: %s", res.Text())
		}
		return d.Result(ctx), nil
	})
	if err != nil {
		return nil, err
	}
	return delegateTool{t, specialists}, nil
}

// delegateTool is Delegate's tool.
type delegateTool struct {
	tool.Tool
	specialists map[string]*Agent
}

// Specialists returns the agents the tool delegates to, by name, for an
// engine that runs them its own way (a durable run makes each request a
// child workflow, see loopwire.ParseDelegation).
func (t delegateTool) Specialists() map[string]*Agent { return t.specialists }

// delegation is one call of a Delegate tool: its requests grouped by
// specialist, and the responses so far.
type delegation struct {
	in      delegateIn
	out     delegateOut
	groups  [][]loopwire.DelegatedRequest
	mu      sync.Mutex
	total   llm.Usage
	have    bool
	tainted bool
	paused  bool // a specialist's run awaits a decision (see runSub)
}

var _ loopwire.Delegation = (*delegation)(nil)

// parseDelegation is loopwire.ParseDelegation (see there).
func parseDelegation(args json.RawMessage, specialists []string) (loopwire.Delegation, *tool.Result) {
	var in delegateIn
	if err := json.Unmarshal(args, &in); err != nil {
		res := tool.Errorf("invalid arguments: %v", err)
		return nil, &res
	}
	names := slices.Sorted(slices.Values(specialists))
	d, bad := newDelegation(in, names)
	if bad != nil {
		return nil, bad
	}
	return d, nil
}

func newDelegation(in delegateIn, names []string) (*delegation, *tool.Result) {
	if len(in.Requests) == 0 {
		res := tool.Errorf("`requests` must be a non-empty list")
		return nil, &res
	}
	available := strings.Join(names, ", ")
	d := &delegation{in: in, out: delegateOut{Responses: make([]delegateResponse, len(in.Requests))}}
	group := map[string]int{}
	for i, r := range in.Requests {
		d.out.Responses[i].Specialist = r.Specialist
		if !slices.Contains(names, r.Specialist) {
			d.out.Responses[i].Error = "Unknown specialist. Available: " + available + "."
			continue
		}
		g, ok := group[r.Specialist]
		if !ok {
			g = len(d.groups)
			group[r.Specialist] = g
			d.groups = append(d.groups, nil)
		}
		d.groups[g] = append(d.groups[g], loopwire.DelegatedRequest{Index: i, Specialist: r.Specialist, Request: r.Request})
	}
	return d, nil
}

// Groups returns the requests to run, one group per specialist in the
// order first named.
func (d *delegation) Groups() [][]loopwire.DelegatedRequest { return d.groups }

// Done records the outcome of request i, as an engine that ran it saw it.
func (d *delegation) Done(i int, o loopwire.Outcome) {
	d.done(i, subRun{res: &Result{Output: o.Output, Steps: o.Steps}, err: o.Err, spent: o.Usage, have: o.HaveUsage, tainted: o.Tainted})
}

func (d *delegation) done(i int, s subRun) {
	d.mu.Lock()
	defer d.mu.Unlock()
	resp := &d.out.Responses[i]
	switch {
	case s.paused:
		resp.Error = "paused: a call of this specialist awaits a person's decision"
		d.paused = true
	case s.err != nil:
		resp.Error = s.err.Error()
	default:
		resp.Output, resp.Steps = s.res.Output, s.res.Steps
	}
	if s.have {
		tokens := s.spent.TotalTokens
		resp.Tokens = &tokens
		d.total, d.have = d.total.Add(s.spent), true
	}
	d.tainted = d.tainted || s.tainted
}

// Result reports the delegation's spend and taint to the calling run (ctx
// is the tool call's) and returns the tool's result: the responses in
// request order.
func (d *delegation) Result(ctx context.Context) tool.Result {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.have {
		ReportUsage(ctx, d.total)
		total := d.total.TotalTokens
		d.out.Tokens = &total
	}
	if d.tainted {
		// The calling loop frames the whole result as untrusted.
		tool.ReportTaint(ctx)
	}
	res, err := tool.JSON(d.out)
	if err != nil {
		return tool.Errorf("delegate result: %v", err)
	}
	return res
}
