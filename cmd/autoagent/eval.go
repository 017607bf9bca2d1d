package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/autoagent-go/autoagent/eval"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/spf13/cobra"
)

func init() { addCommand(newEvalCmd) }

// evalFlags are eval's own flags; the run flags are agentFlags'.
type evalFlags struct {
	k, concurrency int
	html           string
	minPassHatK    float64
	recordings     []string
	tariff         string
	costUnit       string
	atBudget       int64
}

func newEvalCmd() *cobra.Command {
	var (
		f  agentFlags
		ef evalFlags
	)
	c := &cobra.Command{
		Use:   "eval [flags] CASES.jsonl",
		Short: "Measure how reliably the agent does its job: every case k times, pass@1, pass^k, pass@k, tokens per success",
		Long: `Run every case of CASES.jsonl k times, each run with a fresh agent built from
the run flags (--provider, --model, --script, --agent, --plugins, --policy, …),
judge each run with the case's deterministic checks, and report pass@1 (the
mean over all runs), pass^k (the cases whose k runs all passed), pass@k (the
cases with at least one pass) and tokens per success (all runs' tokens over the
successes: failures are paid too). Usage a provider did not report stays
unknown (null), never zero.

A case is one JSON object per line:
  {"id": "refund-1", "prompt": "...", "messages": [...prior messages...],
   "expect": {"output_equals": "...", "output_contains": "..." or [...],
              "output_regex": "...", "structured_equals": VALUE,
              "json_path": {"$.a.b": VALUE}, "tool_called": "name" or
              {"name": "...", "args": {...subset}}, "tool_not_called": ...,
              "tool_order": [names], "max_steps": N, "max_tokens": N,
              "stop_reason": "done"},
   "scripts": ["run1.json", "run2.json"]}
Every listed matcher must hold; an unknown key is an error naming the line.
"scripts" serve --provider scripted: run r of the case plays scripts[r mod n]
(paths relative to the case file), so a scripted suite can fail on some runs.

--from-recording FILE (repeatable) adds a run recorded with run --record as a
case: each of its runs replays the recording offline and must end as it did.

Output: a table (case, passes/k, tokens) and the figures; --json prints
  {"k", "runs", "pass_at_1", "pass_hat_k", "pass_at_k", "tokens_per_success",
   "pass_hat_curve": [pass^1..pass^k], "cases": [{"id", "passes", "runs",
   "tokens", "failures": [{"run", "reason", "steps", "tokens", "timeline"}]}]}
and --html FILE writes one self-contained page with the pass^k curve and
each failing run's timeline.

Exit status: 0 when the suite ran (whatever the score), 1 when it could not
(or pass^k is below --min-pass-hat-k), 2 on a usage error.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := ef.validate(c, &f, args); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runEval(ctx, c, &f, &ef, args)
		},
	}
	f.register(c.Flags())
	c.Flags().Lookup("json").Usage = "print the report as one JSON object"
	c.Flags().IntVar(&ef.k, "k", 1, "runs of each case")
	c.Flags().IntVar(&ef.concurrency, "concurrency", 1, "cases run at once (each case's k runs run one after another)")
	c.Flags().StringVar(&ef.html, "html", "", "also write the report as one self-contained HTML page to `FILE`")
	c.Flags().Float64Var(&ef.minPassHatK, "min-pass-hat-k", 0, "exit 1 when pass^k is below `X` (0..1), for CI")
	c.Flags().StringArrayVar(&ef.recordings, "from-recording", nil, "add a run recorded with run --record as a case that replays offline (repeatable)")
	c.Flags().StringVar(&ef.tariff, "tariff", "", "price per million tokens as `IN,OUT` (e.g. 3,15): the report adds cost per success")
	c.Flags().StringVar(&ef.costUnit, "cost-unit", "", "the tariff's currency, shown in the HTML report (e.g. USD)")
	c.Flags().Int64Var(&ef.atBudget, "at-budget", 0, "also report pass^k counting a run over `N` tokens as failed")
	return c
}

// refusedInEval are run flags that would make runs share state (or write
// one file from many runs): an eval's runs are independent trials.
var refusedInEval = map[string]string{
	"record":      "record one run with autoagent run --record, then add it with --from-recording",
	"memory":      "memory carries the conversation across runs, and each run must start fresh",
	"memory-dir":  "memory carries the conversation across runs, and each run must start fresh",
	"create-tool": "tools written in one run would be offered to the next",
	"stream":      "runs run at once: there is no one answer to stream",
	"cache":       "every run after the first would replay the first's answers, so the trials would not be independent",
	"cache-ttl":   "every run after the first would replay the first's answers, so the trials would not be independent",
}

func (ef *evalFlags) validate(c *cobra.Command, f *agentFlags, args []string) error {
	if err := f.validate(); err != nil {
		return err
	}
	for name, why := range refusedInEval {
		if c.Flags().Changed(name) {
			return usageError(fmt.Errorf("--%s is not for eval: %s", name, why))
		}
	}
	switch {
	case len(args) == 0 && len(ef.recordings) == 0:
		return usageError(errors.New("give a case file (CASES.jsonl) or --from-recording FILE"))
	case ef.k < 1:
		return usageError(fmt.Errorf("--k must be 1 or more, got %d", ef.k))
	case ef.concurrency < 1:
		return usageError(fmt.Errorf("--concurrency must be 1 or more, got %d", ef.concurrency))
	case ef.minPassHatK < 0 || ef.minPassHatK > 1:
		return usageError(fmt.Errorf("--min-pass-hat-k is a share between 0 and 1, got %v", ef.minPassHatK))
	case ef.atBudget < 0:
		return usageError(fmt.Errorf("--at-budget must be 0 or more, got %d", ef.atBudget))
	}
	if _, err := parseTariff(ef.tariff); err != nil {
		return usageError(err)
	}
	return nil
}

// parseTariff reads IN,OUT prices per million tokens; nil without one.
func parseTariff(s string) (func(llm.Usage) float64, error) {
	if s == "" {
		return nil, nil
	}
	in, out, ok := strings.Cut(s, ",")
	pin, err1 := strconv.ParseFloat(strings.TrimSpace(in), 64)
	pout, err2 := strconv.ParseFloat(strings.TrimSpace(out), 64)
	if !ok || err1 != nil || err2 != nil || pin < 0 || pout < 0 {
		return nil, fmt.Errorf("--tariff %q: want IN,OUT prices per million tokens, e.g. 3,15", s)
	}
	return func(u llm.Usage) float64 {
		return (float64(u.InputTokens)*pin + float64(u.OutputTokens)*pout) / 1e6
	}, nil
}

func runEval(ctx context.Context, c *cobra.Command, f *agentFlags, ef *evalFlags, args []string) error {
	var cases []eval.Case
	if len(args) == 1 {
		loaded, err := eval.LoadCases(args[0])
		var ce *eval.CaseError
		if errors.As(err, &ce) {
			return usageError(err)
		}
		if err != nil {
			return fmt.Errorf("case file: %w", err)
		}
		cases = loaded
	}
	for _, path := range ef.recordings {
		rc, err := eval.FromRecording(path)
		if err != nil {
			return err
		}
		cases = append(cases, rc)
	}
	if len(cases) == 0 {
		return usageError(fmt.Errorf("%s holds no cases", args[0]))
	}
	newAgent, closeRT, err := evalAgents(ctx, c.ErrOrStderr(), f, cases)
	if err != nil {
		return err
	}
	defer closeRT()
	tariff, _ := parseTariff(ef.tariff)
	opts := eval.Options{K: ef.k, Concurrency: ef.concurrency, Tariff: tariff, TokenBudget: ef.atBudget}
	if w := rawWriter(c.ErrOrStderr()); isTerminal(w) {
		// The progress line's own escapes, on the terminal itself.
		opts.Progress = func(done, total int) { fmt.Fprintf(w, "\reval: %d/%d cases", done, total) }
		defer fmt.Fprint(w, "\r\033[K")
	}
	rep, err := eval.RunK(ctx, newAgent, cases, opts)
	if err != nil {
		return err
	}
	if ef.html != "" {
		if err := writeHTMLReport(ef.html, rep, ef.costUnit); err != nil {
			return err
		}
	}
	out := c.OutOrStdout()
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := eval.WriteText(out, rep); err != nil {
		return err
	}
	if c.Flags().Changed("min-pass-hat-k") && rep.PassHatK < ef.minPassHatK {
		return fmt.Errorf("pass^%d is %.3f, below --min-pass-hat-k %v", rep.K, rep.PassHatK, ef.minPassHatK)
	}
	return nil
}

// evalAgents returns the agent factory of the suite: one runtime (tools,
// plugins, MCP servers, policy) built once from the run flags, and per run
// a copy of its agent, with the run's script for a case that has scripts.
// No runtime is built when every case replays a recording.
func evalAgents(ctx context.Context, stderr io.Writer, f *agentFlags, cases []eval.Case) (eval.NewAgent, func(), error) {
	live, first := false, ""
	for i := range cases {
		c := &cases[i]
		if c.Recording != nil {
			continue
		}
		live = true
		if len(c.Scripts) > 0 && first == "" {
			first = c.Scripts[0]
		}
	}
	if !live {
		return nil, func() {}, nil
	}
	scriptedRun := f.provider == "scripted"
	if scriptedRun && f.script == "" {
		for i := range cases {
			if cases[i].Recording == nil && len(cases[i].Scripts) == 0 {
				return nil, nil, usageError(fmt.Errorf("case %q has no \"scripts\": give --script FILE for it", cases[i].ID))
			}
		}
		f.script = first // the runtime needs one to start; each run plays its own
	}
	f.inEval = true
	rt, err := f.newAgent(ctx, stderr, false)
	if err != nil {
		return nil, nil, err
	}
	closeRT := func() { rt.Close(context.WithoutCancel(ctx)) }
	newAgent := evalAgentOf(rt.Agent(), scriptedRun)
	return newAgent, closeRT, nil
}

// evalAgentOf is the agent factory of eval runs (autoagent eval's, and
// serve's POST /v1/evals): per run a copy of base that carries nothing
// over, playing the case's script for run r when the provider is
// scripted and the case has scripts.
func evalAgentOf(base *loop.Agent, scriptedRun bool) eval.NewAgent {
	var (
		mu      sync.Mutex
		players = map[string]*scripted.Provider{}
	)
	script := func(path string) (*scripted.Provider, error) {
		mu.Lock()
		defer mu.Unlock()
		if p, ok := players[path]; ok {
			return p, nil
		}
		p, err := scripted.Load(path, scripted.Options{PerConversation: true, ForgetRequests: true})
		if err != nil {
			return nil, err
		}
		players[path] = p
		return p, nil
	}
	return func(_ context.Context, c *eval.Case, run int) (*loop.Agent, error) {
		a := *base
		a.Knowledge.Memory, a.Recorder, a.Checkpoint, a.Journal = nil, nil, nil, nil
		if scriptedRun && len(c.Scripts) > 0 {
			p, err := script(c.Scripts[run%len(c.Scripts)])
			if err != nil {
				return nil, err
			}
			a.Provider = p
		}
		return &a, nil
	}
}

// writeHTMLReport writes the page beside path and renames it into place,
// so a failed write never leaves half a report.
func writeHTMLReport(path string, rep *eval.Report, unit string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".eval-*.html")
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := eval.WriteHTML(tmp, rep, eval.HTMLOptions{CostUnit: unit}); err != nil {
		tmp.Close()
		return fmt.Errorf("--html: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	return nil
}
