package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

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
	// Progress, when set, is called after each case's k runs, with the
	// cases done and the total (from one goroutine at a time).
	Progress func(done, total int)
}

// Run is one run of a case: whether it passed and why not.
type Run struct {
	Pass   bool
	Reason string // why it failed; "" when it passed
	Steps  int
	// Tokens is input+output; nil when the provider reported no usage.
	Tokens *int64
	Usage  llm.Usage
	// Result is the run's, kept for failed runs only (their trajectory).
	Result *loop.Result `json:"-"`
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
	Results  []Run     `json:"-"`
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
	results := make([][]Run, len(cases))
	for i := range results {
		results[i] = make([]Run, k)
	}
	type job struct{ c int } // one case, all its k runs
	jobs := make(chan job)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		done     int
	)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				for r := range k {
					run, err := runOne(ctx, newAgent, &cases[j.c], r)
					if err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
						break
					}
					results[j.c][r] = run
				}
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(done, len(cases))
					mu.Unlock()
				}
			}
		}()
	}
	for c := range cases {
		mu.Lock()
		stop := firstErr != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		jobs <- job{c}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return summarize(cases, results, k, opts), nil
}

func runOne(ctx context.Context, newAgent NewAgent, c *Case, r int) (Run, error) {
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
			run.Tokens = &n
		}
	}
	if err := c.Judge(res, runErr); err != nil {
		run.Reason = err.Error()
	} else {
		run.Pass = true
		run.Result = nil // a passing run's transcript is not kept
	}
	return run, nil
}

// summarize computes the report's figures from the runs.
func summarize(cases []Case, results [][]Run, k int, opts Options) *Report {
	rep := &Report{K: k, Runs: len(cases) * k}
	var passes, allPass, anyPass, budgetAll int
	var tokens int64
	var cost float64
	known := true
	for i, c := range cases {
		cr := CaseReport{ID: c.ID, Runs: k, Results: results[i]}
		var ct int64
		caseKnown, caseBudget := true, true
		for _, r := range results[i] {
			if r.Pass {
				cr.Passes++
			}
			if r.Tokens == nil {
				caseKnown, known = false, false
				caseBudget = false
			} else {
				ct += *r.Tokens
				if !r.Pass || (opts.TokenBudget > 0 && *r.Tokens > opts.TokenBudget) {
					caseBudget = false
				}
			}
			if opts.Tariff != nil {
				cost += opts.Tariff(r.Usage)
			}
		}
		for r, run := range results[i] {
			if !run.Pass {
				cr.Failures = append(cr.Failures, failureOf(r, run))
			}
		}
		if caseKnown {
			cr.Tokens = &ct
			tokens += ct
		}
		passes += cr.Passes
		if cr.Passes == k {
			allPass++
		}
		if cr.Passes > 0 {
			anyPass++
		}
		if caseBudget {
			budgetAll++
		}
		rep.Cases = append(rep.Cases, cr)
	}
	n := float64(len(cases))
	rep.PassHatCurve = make([]float64, k)
	for j := 1; j <= k; j++ {
		var sum float64
		for _, cr := range rep.Cases {
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
