package durable

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/internal/loopwire"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/tool"
)

// programStandIn is code mode's runner in the workflow. The program runs
// on a worker (the Program activity) against the record of the calls it
// made so far, and stops at its first call past it; that call passes the
// run's gate here, through loop.CallNested, as the calls of a local
// program do (policy, guards, approval, taint), and runs as the tool
// activity of any call (at most once unless idempotent, OutcomeUnknown
// when its worker is lost). Its result joins the record, and the program
// runs again, until it needs no call. See RATIONALE.md, "Why does a
// durable program run as one activity per call it makes?".
type programStandIn struct {
	run       *run
	agent     string
	maxCalls  int
	timeout   time.Duration
	heartbeat time.Duration
	languages []string // the worker's runner's, when not JavaScript alone
}

var _ codemode.Runner = (*programStandIn)(nil)

// Languages are the languages the worker's runner runs (nil: JavaScript),
// which run_program declares (codemode.Languages).
func (s *programStandIn) Languages() []string { return s.languages }

// programAttempts is how many times a run of a program is tried: it has
// no effect of its own, so a lost worker's is simply run again.
const programAttempts = 3

// Run runs p, one Program activity per call it makes, plus one. It stops
// early when a call awaits approval (the run pauses; after the decision
// the loop runs p again, and the calls made before are answered from the
// run's record), when p goes on calling past its call limit, and when its
// record would no longer fit the workflow's history.
func (s *programStandIn) Run(ctx context.Context, p codemode.Program) (tool.Result, error) {
	ci, _ := loop.CallInfoFrom(ctx)
	limit := cmp.Or(s.maxCalls, codemode.DefaultMaxCalls)
	ao := workflow.ActivityOptions{
		StartToCloseTimeout: s.timeout,
		HeartbeatTimeout:    s.heartbeat,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: programAttempts, InitialInterval: time.Second},
	}
	// The taint before the program's first call: the record says which of
	// its results tainted it after.
	tainted := tool.Tainted(ctx)
	var record []loopwire.RecordedCall
	var sizes programSize
	for {
		in := ProgramInput{Agent: s.agent, RunID: ci.RunID, Step: ci.Step, CallID: ci.CallID, Program: p, Record: record, Tainted: tainted}
		size, err := sizes.of(in)
		if err != nil {
			return tool.Result{}, err
		}
		if size > maxPayload {
			return tool.Result{}, refusal.New(refusal.ProgramTooLarge, "the program was stopped after %s: their results come to %d KiB, over the %d KiB a durable run can hand a worker (Temporal's payload limit). Do less in one program, or ask the tools for less.", madeCalls(record), size>>10, maxPayload>>10)
		}
		wc := wctx(ctx)
		s.run.wf.localBytes = 0 // the workflow task ends here
		if s.run.historyFull(wc, size) {
			return tool.Result{}, refusal.New(refusal.ProgramTooLong, "the program was stopped after %s: running it again with their results would overflow this durable run's history. Do the rest in another program.", madeCalls(record))
		}
		var out ProgramOutput
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(wc, ao), ActivityProgram, in).Get(wc, &out); err != nil {
			return programFailure(ctx, err, record, s.timeout)
		}
		if out.Report.Tainted {
			tool.ReportTaint(ctx)
		}
		if out.Report.HaveUsage {
			loop.ReportUsage(ctx, out.Report.Usage)
		}
		if out.Call == nil {
			if out.Result == nil {
				return tool.Result{}, errors.New("durable: the Program activity returned neither a result nor a call")
			}
			return *out.Result, nil
		}
		if len(record) > limit {
			// The call past the limit was refused, and the program went on
			// calling: the engine stops at that refusal; another runner
			// may not.
			return tool.Result{}, refusal.New(refusal.ProgramCallLimit, "a program may make %d tool calls; this one went on calling after that and was stopped (%s).", limit, madeCalls(record))
		}
		c := tool.Call{Name: out.Call.Name, Arguments: out.Call.Arguments}
		before := tool.Tainted(ctx)
		res, err := loop.CallNested(ctx, c)
		if err != nil {
			return tool.Result{}, err
		}
		rc := loopwire.RecordedCall{Name: c.Name, Arguments: c.Arguments, Result: res, Untrusted: !before && tool.Tainted(ctx)}
		if err := sizes.add(rc); err != nil {
			return tool.Result{}, err
		}
		record = append(record, rc)
		if loopwire.NestedPaused(ctx) {
			// The run pauses after this call; its later calls would be
			// refused until the decision.
			return res, nil
		}
	}
}

// programFailure is what the model reads when a run of a program failed
// on every attempt (a Go error for a cancellation, which stops the run).
func programFailure(ctx context.Context, err error, record []loopwire.RecordedCall, timeout time.Duration) (tool.Result, error) {
	var cerr *temporal.CanceledError
	var terr *temporal.TimeoutError
	var aerr *temporal.ApplicationError
	switch {
	case errors.As(err, &cerr):
		return tool.Result{}, activityError(ctx, err)
	case errors.As(err, &terr):
		return tool.Result{}, refusal.New(refusal.ProgramTimeout, "the program did not finish on a worker within %v (tried %d times) after %s.", timeout, programAttempts, madeCalls(record))
	case errors.As(err, &aerr):
		return tool.Errorf("the program could not run on a worker after %s: %s", madeCalls(record), aerr.Message()), nil
	}
	return tool.Result{}, activityError(ctx, err)
}

// madeCalls says which calls a program stopped mid-way made: they ran (or
// were refused), and the model should know.
func madeCalls(record []loopwire.RecordedCall) string {
	if len(record) == 0 {
		return "no tool call"
	}
	names := make([]string, len(record))
	for i, c := range record {
		names[i] = c.Name
	}
	return fmt.Sprintf("%d tool calls, which took place (%s)", len(record), strings.Join(names, ", "))
}

// programSize is the encoded size of a program's ProgramInput, kept as
// its record grows: the workflow encodes each recorded call once, not the
// whole record before each run of the program (quadratic work in
// workflow code, where a busy worker's task must yield within
// Temporal's deadlock detector's second).
type programSize struct {
	base    int // the input without its record
	calls   int // the recorded calls, encoded
	n       int // how many
	hasBase bool
}

// recordField is what a record adds to an input besides its calls: the
// field's name, the array's brackets.
const recordField = len(`,"record":[]`)

// of returns the encoded size of in, whose record holds the calls added.
func (s *programSize) of(in ProgramInput) (int, error) {
	if len(in.Record) != s.n {
		return 0, fmt.Errorf("durable: the program's record holds %d calls, %d were sized", len(in.Record), s.n)
	}
	if !s.hasBase {
		in.Record = nil
		b, err := payloadSize(in)
		if err != nil {
			return 0, err
		}
		s.base, s.hasBase = b, true
	}
	if s.n == 0 {
		return s.base, nil
	}
	return s.base + recordField + s.calls + s.n - 1, nil
}

// add sizes a call about to join the record.
func (s *programSize) add(rc loopwire.RecordedCall) error {
	b, err := payloadSize(rc)
	if err != nil {
		return err
	}
	s.calls += b
	s.n++
	return nil
}

func payloadSize(v any) (int, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return 0, fmt.Errorf("durable: %w", err)
	}
	return len(data), nil
}

// A program's runs are activities of one step, so the run cannot continue
// as new between them; they may grow the history past the bound of a step
// boundary (Options.MaxHistory, maxHistoryBytes), up to these, which stay
// clear of Temporal's own limits (51,200 events, 50 MiB), where the server
// ends the workflow.
const (
	programHistoryFactor   = 4
	maxProgramHistory      = 40_000
	maxProgramHistoryBytes = 40 << 20
)

// historyFull reports that a run of a program with input of size bytes,
// and its call, could take the history past what a program may fill.
func (r *run) historyFull(ctx workflow.Context, size int) bool {
	info := workflow.GetInfo(ctx)
	events := max(info.GetCurrentHistoryLength(), r.wf.activities*eventsPerActivity) + 2*eventsPerActivity
	bytes := info.GetCurrentHistorySize() + 2*size
	return events > min(programHistoryFactor*r.history, maxProgramHistory) || bytes > maxProgramHistoryBytes
}
