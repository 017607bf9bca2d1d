package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
)

// Options configures RunK. The zero value runs every case once, one at a
// time.
type Options struct {
	// K is how many times each case runs (1 when 0).
	K int
	// Concurrency bounds the runs at once (1 when 0).
	Concurrency int
	// Tariff, when set, prices a run's usage (in the caller's currency):
	// the report then has a cost per success.
	Tariff func(llm.Usage) float64
	// TokenBudget, when positive, is the pass^k at that budget: a run
	// passes only when it passed and spent at most that many tokens.
	TokenBudget int64
	// KeepResults keeps every run in CaseReport.Results, with each failed
	// run's whole Result (Run.Result), for analyses of your own; without
	// it a case keeps its counts and its failures' timelines only.
	KeepResults bool
	// Progress, when set, is called after each case's k runs, with the
	// cases done and the total (from one goroutine at a time).
	Progress func(done, total int)
}

// Run is one run of a case: whether it passed and why not.
type Run struct {
	Pass   bool
	Reason string // why it failed; "" when it passed
	Steps  int
	// Tokens is input+output; UsageKnown is false when the provider
	// reported no usage (Tokens is then 0, and unknown).
	Tokens     int64
	UsageKnown bool
	Usage      llm.Usage
	// Result is the run's, for failed runs (with Options.KeepResults).
	Result *loop.Result `json:"-"`

	msgs []llm.Message // a failed run's transcript, until its case's report is made
}

// CaseReport is one case over its k runs.
type CaseReport struct {
	ID     string `json:"id"`
	Passes int    `json:"passes"`
	Runs   int    `json:"runs"`
	// Tokens sums the runs' tokens; nil when any run's usage is unknown.
	Tokens *int64 `json:"tokens"`
	// Failures are the failed runs, in run order, with their timelines.
	Failures []Failure `json:"failures,omitempty"`
	// Results are the k runs, kept with Options.KeepResults only (a
	// case's runs are reduced to this report as soon as they end, so a
	// large suite holds little memory).
	Results []Run `json:"-"`

	cost                float64 // the runs' cost at the tariff
	known, budgetPassed bool    // every run's usage known; every run passed within the budget
}

// Report is what RunK measured. A figure that needs usage is nil when any
// run's usage is unknown: never a zero that was not reported.
type Report struct {
	K    int `json:"k"`
	Runs int `json:"runs"`
	// PassAt1 is the mean over all runs; PassHatK the share of cases
	// whose k runs all passed; PassAtK the share with at least one pass.
	PassAt1  float64 `json:"pass_at_1"`
	PassHatK float64 `json:"pass_hat_k"`
	PassAtK  float64 `json:"pass_at_k"`
	// TokensPerSuccess is all runs' tokens over the successful runs (the
	// failures are paid too); nil with unknown usage or no success.
	TokensPerSuccess *float64 `json:"tokens_per_success"`
	// CostPerSuccess is the same with Options.Tariff; nil without one.
	CostPerSuccess *float64 `json:"cost_per_success,omitempty"`
	// PassHatKAtBudget is pass^k counting a run over Options.TokenBudget
	// as failed; nil without a budget or with unknown usage.
	PassHatKAtBudget *float64 `json:"pass_hat_k_at_budget,omitempty"`
	// PassHatCurve[j-1] is pass^j for j = 1..K, estimated from each
	// case's k runs without bias: the chance that j runs drawn from its k
	// all passed, C(passes, j) / C(k, j), averaged over the cases.
	// PassHatCurve[0] is PassAt1 and PassHatCurve[K-1] is PassHatK.
	PassHatCurve []float64    `json:"pass_hat_curve"`
	Cases        []CaseReport `json:"cases"`
}

// NewAgent builds the agent of one run: run is its index among the
// case's k runs (0-based). It must return a fresh agent (or one that
// carries nothing over between runs: no memory, no recorder), so runs are
// independent trials.
type NewAgent func(ctx context.Context, c *Case, run int) (*loop.Agent, error)

// ErrNoCases is returned by RunK without cases.
var ErrNoCases = errors.New("eval: no cases")

// RunK runs every case opts.K times, each run with an agent newAgent
// returns (a fresh one per run: nothing carries over), and judges it. A
// case with a Recording replays it instead (newAgent may then be nil). An
// error of newAgent stops everything; a run's own failure is a failed run.
func RunK(ctx context.Context, newAgent NewAgent, cases []Case, opts Options) (*Report, error) {
	if len(cases) == 0 {
		return nil, ErrNoCases
	}
	k := max(opts.K, 1)
	conc := max(opts.Concurrency, 1)
	reports := make([]CaseReport, len(cases))
	// Workers take the next case (all its k runs) from a counter: no
	// goroutine hands jobs out, so every core runs runs.
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		next     atomic.Int64
		failed   atomic.Bool
		firstErr error
		done     int
	)
	for range min(conc, len(cases)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs := make([]Run, k) // this worker's, reused case after case
			var parts reportParts  // this worker's cases' failures
			for !failed.Load() && ctx.Err() == nil {
				c := int(next.Add(1) - 1)
				if c >= len(cases) {
					return
				}
				for r := range k {
					run, err := runOne(ctx, newAgent, &cases[c], r, opts.KeepResults)
					if err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
						failed.Store(true)
						return
					}
					runs[r] = run
				}
				reports[c] = caseReport(&cases[c], runs, opts, &parts)
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(done, len(cases))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return summarize(reports, k, opts), nil
}

func runOne(ctx context.Context, newAgent NewAgent, c *Case, r int, keep bool) (Run, error) {
	var (
		res    *loop.Result
		runErr error
	)
	if c.Recording != nil {
		res, runErr = c.Recording.Replay(ctx, loop.ReplayOptions{})
	} else {
		if newAgent == nil {
			return Run{}, fmt.Errorf("eval: case %s: no agent factory (RunK's newAgent is nil)", c.ID)
		}
		a, err := newAgent(ctx, c, r)
		if err != nil {
			return Run{}, fmt.Errorf("eval: case %s: building the agent: %w", c.ID, err)
		}
		if len(c.Messages) == 0 {
			res, runErr = a.Run(ctx, c.Prompt) // with the agent's system prompt
		} else {
			res, runErr = a.RunMessages(ctx, caseMessages(a, c))
		}
	}
	run := Run{Result: res}
	if res != nil {
		run.Steps, run.Usage = res.Steps, res.Usage
		if res.UsageReported {
			n := res.Usage.InputTokens + res.Usage.OutputTokens
			run.Tokens, run.UsageKnown = n, true
		}
	}
	reason, err := c.judge(res, runErr)
	if err != nil {
		reason = err.Error()
	}
	if reason != "" || err != nil {
		run.Reason = reason
		if res != nil {
			run.msgs = res.Messages
		}
	} else {
		run.Pass = true
	}
	if run.Pass || !keep {
		run.Result = nil // the transcript is not kept
	}
	return run, nil
}

// reportParts hands out the slices of the failures' reports from larger
// blocks, so that a suite's thousands of failures are a few allocations
// (each costs the runs around it time in the collector), not two per
// case. A block is kept for as long as any of its cases' reports is.
type reportParts struct {
	fails []Failure
	steps []TimelineStep
}

// partsBlock is how many elements a block of reportParts holds at least.
const partsBlock = 256

// take returns slices of length 0 and capacities nf and ns.
func (p *reportParts) take(nf, ns int) ([]Failure, []TimelineStep) {
	if cap(p.fails)-len(p.fails) < nf {
		p.fails = make([]Failure, 0, max(nf, partsBlock))
	}
	if cap(p.steps)-len(p.steps) < ns {
		p.steps = make([]TimelineStep, 0, max(ns, partsBlock))
	}
	f := p.fails[len(p.fails) : len(p.fails) : len(p.fails)+nf]
	st := p.steps[len(p.steps) : len(p.steps) : len(p.steps)+ns]
	p.fails, p.steps = p.fails[:len(p.fails)+nf], p.steps[:len(p.steps)+ns]
	return f, st
}

// caseReport reduces a case's k runs to its report, its failures' parts
// taken from parts.
func caseReport(c *Case, runs []Run, opts Options, parts *reportParts) CaseReport {
	cr := CaseReport{ID: c.ID, Runs: len(runs), known: true, budgetPassed: true}
	fails, turns := 0, 0
	for r := range runs {
		if !runs[r].Pass {
			fails++
			turns += assistantTurns(runs[r].msgs)
		}
	}
	var steps []TimelineStep
	if fails > 0 {
		// With their final capacities: a Failure's Tokens points at its
		// own tokens field, which no append then moves.
		cr.Failures, steps = parts.take(fails, turns)
	}
	var tokens int64
	for r := range runs {
		run := &runs[r]
		if run.Pass {
			cr.Passes++
		} else {
			cr.Failures = append(cr.Failures, Failure{Run: r, Reason: run.Reason, Steps: run.Steps})
			f := &cr.Failures[len(cr.Failures)-1]
			if run.UsageKnown {
				f.tokens = run.Tokens
				f.Tokens = &f.tokens
			}
			start := len(steps)
			steps = appendTimeline(steps, run.msgs)
			f.Timeline = steps[start:len(steps):len(steps)]
			run.msgs = nil
		}
		if !run.UsageKnown {
			cr.known, cr.budgetPassed = false, false
		} else {
			tokens += run.Tokens
			if !run.Pass || (opts.TokenBudget > 0 && run.Tokens > opts.TokenBudget) {
				cr.budgetPassed = false
			}
		}
		if opts.Tariff != nil {
			cr.cost += opts.Tariff(run.Usage)
		}
	}
	if cr.known {
		cr.Tokens = &tokens
	}
	if opts.KeepResults {
		cr.Results = slices.Clone(runs)
	}
	return cr
}

// summarize computes the report's figures from the cases' reports.
func summarize(cases []CaseReport, k int, opts Options) *Report {
	rep := &Report{K: k, Runs: len(cases) * k, Cases: cases}
	var passes, allPass, anyPass, budgetAll int
	var tokens int64
	var cost float64
	known := true
	for _, cr := range cases {
		passes += cr.Passes
		if cr.Passes == k {
			allPass++
		}
		if cr.Passes > 0 {
			anyPass++
		}
		if cr.budgetPassed {
			budgetAll++
		}
		if cr.known {
			tokens += *cr.Tokens
		} else {
			known = false
		}
		cost += cr.cost
	}
	n := float64(len(cases))
	rep.PassHatCurve = make([]float64, k)
	for j := 1; j <= k; j++ {
		var sum float64
		for _, cr := range cases {
			sum += allOf(cr.Passes, k, j)
		}
		rep.PassHatCurve[j-1] = sum / n
	}
	rep.PassAt1 = float64(passes) / float64(rep.Runs)
	rep.PassHatK = float64(allPass) / n
	rep.PassAtK = float64(anyPass) / n
	if known && passes > 0 {
		t := float64(tokens) / float64(passes)
		rep.TokensPerSuccess = &t
		if opts.Tariff != nil {
			c := cost / float64(passes)
			rep.CostPerSuccess = &c
		}
	}
	if opts.TokenBudget > 0 && known {
		b := float64(budgetAll) / n
		rep.PassHatKAtBudget = &b
	}
	return rep
}

// allOf is the chance that j runs drawn without replacement from n, of
// which c passed, all passed: C(c, j) / C(n, j).
func allOf(c, n, j int) float64 {
	p := 1.0
	for i := range j {
		if c-i <= 0 {
			return 0
		}
		p *= float64(c-i) / float64(n-i)
	}
	return p
}

// caseMessages is a case's prior messages, then its prompt, led by the
// agent's system prompt unless the messages bring their own.
func caseMessages(a *loop.Agent, c *Case) []llm.Message {
	var msgs []llm.Message
	if c.Messages[0].Role != llm.RoleSystem {
		msgs = append(msgs, llm.SystemText(cmp.Or(a.System, loop.DefaultSystemPrompt)))
	}
	msgs = append(msgs, c.Messages...)
	if c.Prompt != "" {
		msgs = append(msgs, llm.UserText(c.Prompt))
	}
	return msgs
}
