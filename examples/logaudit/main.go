// Command logaudit is the workspace's flagship scenario: an orchestrator
// hands two log files to two specialist agents, checks that every
// gateway 502 matches one FAILED payment, saves its report through a
// workspace fenced to _out/ with .md files only, improves it through
// propose_change (the host validates), and then the host proves the
// fence and shows the journal and a rollback.
//
// Offline by default, with scripted models:
//
//	go run ./examples/logaudit
//
// With a real model, used as soon as its key is set (OPENAI_API_KEY,
// ANTHROPIC_API_KEY or GEMINI_API_KEY, in that order), or named with
// -provider; -offline forces the scripted models. The fence proof, the
// cross-check and the validator are the host's code either way.
//
//	ANTHROPIC_API_KEY=... go run ./examples/logaudit
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/catalog"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/autoagent-go/autoagent/workspace"
)

func main() {
	provider := flag.String("provider", "", "a real provider for the three agents (openai, anthropic, gemini, …); default: the first whose key is set")
	model := flag.String("model", "", "model name (default: the provider's default)")
	offline := flag.Bool("offline", false, "use the scripted models even when a key is set")
	logs := flag.String("logs", "", "directory of gateway.log and payments.log (default: the example's)")
	flag.Parse()
	var cfg config
	if *provider == "" && !*offline {
		for _, name := range []string{"openai", "anthropic", "gemini"} {
			if os.Getenv(catalog.DefaultAPIKeyEnv(name)) != "" {
				*provider = name
				break
			}
		}
	}
	if *provider != "" && !*offline {
		fmt.Fprintf(os.Stderr, "using %s for the three agents (-offline for the scripted models)\n", *provider)
		p, err := catalog.New(catalog.Config{Name: *provider, Model: *model})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		cfg.model = p
	}
	cfg.logs = *logs
	if cfg.logs == "" {
		cfg.logs = exampleDir()
	}
	work, err := os.MkdirTemp("", "logaudit-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(work)
	cfg.work = work
	if err := run(context.Background(), os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "logaudit:", err)
		os.Exit(1)
	}
}

// exampleDir is the directory of this example's log files: beside the
// source when run from the module's root, else the working directory.
func exampleDir() string {
	if _, err := os.Stat(filepath.Join("examples", "logaudit", "gateway.log")); err == nil {
		return filepath.Join("examples", "logaudit")
	}
	return "."
}

// config says where the logs are, where to work, and which model to use
// (nil: the scripted ones).
type config struct {
	logs, work string
	model      llm.Provider
}

func run(ctx context.Context, out io.Writer, cfg config) error {
	step := func(s string) { fmt.Fprintf(out, "\n== %s\n", s) }
	// The specialists read copies of the logs through a workspace that
	// reads .log files and writes nothing.
	logDir := filepath.Join(cfg.work, "logs")
	outDir := filepath.Join(cfg.work, "_out")
	for _, d := range []string{logDir, outDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	var gw, pay []byte
	for _, f := range []struct {
		name string
		dst  *[]byte
	}{{"gateway.log", &gw}, {"payments.log", &pay}} {
		b, err := os.ReadFile(filepath.Join(cfg.logs, f.name))
		if err != nil {
			return err
		}
		*f.dst = b
		if err := os.WriteFile(filepath.Join(logDir, f.name), b, 0o644); err != nil {
			return err
		}
	}
	logs, err := workspace.Open(logDir, workspace.Options{ReadExt: []string{".log"}, WriteExt: []string{}})
	if err != nil {
		return err
	}
	defer logs.Close()
	// Each propose_change attempt is traced; the example prints them.
	var attempts []trace.Fields
	tr := trace.New(trace.SinkFunc(func(ev trace.Event) {
		if f, ok := ev.Payload.(trace.Fields); ok && ev.Type == workspace.EvolveTrace {
			attempts = append(attempts, f)
		}
	}))
	reports, err := workspace.Open(outDir, workspace.Options{ReadExt: []string{".md"}, WriteExt: []string{".md"}, Tracer: tr})
	if err != nil {
		return err
	}
	defer reports.Close()

	// The host's cross-check, from the logs themselves: the truth the
	// validator holds the report to.
	check := crossCheck(string(gw), string(pay))

	step("The orchestrator delegates the two logs and writes its report to _out/ (.md only)")
	orch, models, err := agents(cfg, logs, reports, check)
	if err != nil {
		return err
	}
	res, err := orch.Run(ctx, "Audit yesterday's payment incident: gateway.log and payments.log. "+
		"Check that every gateway 502 matches exactly one FAILED payment, and save the report as report.md.")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "orchestrator: %s\n", strings.TrimSpace(res.Output))
	if models != nil {
		fmt.Fprintf(out, "(scripted models: %d orchestrator turns)\n", models.Calls())
	}

	for _, a := range attempts {
		verdict := "kept"
		if a["kept"] != true {
			verdict = fmt.Sprintf("rejected, rolled back by change %v", a["rollback"])
		}
		fmt.Fprintf(out, "propose_change %q (change %v): %s; validator: %s\n", a["reason"], a["change"], verdict, a["output"])
	}

	step("The host's cross-check of the logs")
	fmt.Fprint(out, check.String())

	step("The fence, proved by the host (each refused, nothing written)")
	for _, p := range []string{"../demo.py", "virus.exe", "C:/Windows/x.md"} {
		_, err := reports.Write(ctx, p, []byte("x"))
		fmt.Fprintf(out, "write %-16s -> %v\n", p, errorText(err))
	}

	step("autoagent workspace log _out")
	runID := res.State.RunID
	for c, err := range reports.Changes(workspace.Filter{}) {
		if err != nil {
			return err
		}
		state := string(c.State)
		if c.RolledBackBy != 0 {
			state = fmt.Sprintf("rolled back by %d", c.RolledBackBy)
		}
		who := "the run"
		if c.RunID != runID {
			who = c.RunID
		}
		fmt.Fprintf(out, "%d  %-8s %-10s %-15s %-20s %s\n", c.ID, c.Op, c.Path, c.Tool+" ("+who+")", state, c.Reason)
	}

	step("autoagent workspace diff --change 4 _out (the kept proposal, timeline.md)")
	if d, err := reports.Diff(4); err == nil {
		_, tl, _ := strings.Cut(d, "--- /dev/null")
		fmt.Fprint(out, "--- /dev/null"+tl)
	}

	step("Roll back the last change, then the whole run")
	if rb, err := reports.RollbackLast(ctx); err != nil {
		fmt.Fprintf(out, "rollback last: %v\n", err)
	} else {
		fmt.Fprintf(out, "change %d rolled back change %v\n", rb.ID, rb.Undoes)
	}
	rb, err := reports.RollbackRun(ctx, runID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "change %d rolled back the run's changes %v\n", rb.ID, rb.Undoes)
	es, err := reports.List(".")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "_out/ now holds %d files; the journal keeps every version: rolling back change %d brings the run's report back\n", len(es), rb.ID)
	return nil
}

// errorText is err's text, "(written!)" for none.
func errorText(err error) string {
	if err == nil {
		return "(written!)"
	}
	return err.Error()
}

// agents builds the orchestrator and its two specialists; with no model
// they are scripted, and the orchestrator's script is returned too.
func agents(cfg config, logs, reports *workspace.Workspace, check audit) (*loop.Agent, *scriptedProvider, error) {
	readers := &tool.Registry{}
	for _, t := range workspace.Tools(logs) {
		if n := t.Spec().Name; n == workspace.ReadFileTool || n == workspace.ListDirTool {
			if err := readers.Add(t); err != nil {
				return nil, nil, err
			}
		}
	}
	gwModel, payModel, orchModel := cfg.model, cfg.model, cfg.model
	var script *scriptedProvider
	if cfg.model == nil {
		gwModel, payModel = gatewayScript(), paymentsScript()
		script = orchestratorScript()
		orchModel = script
	}
	gateway := &loop.Agent{Provider: gwModel, Tools: readers,
		System: "You analyse gateway.log. Answer with every request that ended in HTTP 502: time, request id, payment id. Nothing else."}
	payments := &loop.Agent{Provider: payModel, Tools: readers,
		System: "You analyse payments.log. Answer with every FAILED payment: time, payment id, reason. Nothing else."}
	tools := &tool.Registry{}
	for _, sub := range []struct {
		a          *loop.Agent
		name, desc string
	}{
		{gateway, "gateway_analyst", "A specialist who reads gateway.log and lists its 502 errors."},
		{payments, "payments_analyst", "A specialist who reads payments.log and lists its FAILED payments."},
	} {
		t, err := sub.a.AsTool(sub.name, sub.desc)
		if err != nil {
			return nil, nil, err
		}
		if err := tools.Add(t); err != nil {
			return nil, nil, err
		}
	}
	for _, t := range append(workspace.Tools(reports), workspace.ProposeChange(reports, check.validate)) {
		if err := tools.Add(t); err != nil {
			return nil, nil, err
		}
	}
	orch := &loop.Agent{Provider: orchModel, Tools: tools, Bounds: loop.Bounds{MaxSteps: 10},
		System: "You are an incident auditor. Ask gateway_analyst and payments_analyst for their findings, " +
			"check that every gateway 502 matches exactly one FAILED payment, then save a markdown report with write_file " +
			"(report.md, with a reason). Improve it with propose_change if you can; the host validates it. Answer in one sentence."}
	return orch, script, nil
}

var (
	gw502   = regexp.MustCompile(`status=502\b`)
	payID   = regexp.MustCompile(`payment=(p-\d+)`)
	failed  = regexp.MustCompile(`state=FAILED reason=(\S+)`)
	errLine = errors.New("no payment id")
)

// audit is the host's cross-check of the two logs.
type audit struct {
	matched  []string          // 502s with exactly one FAILED payment
	unpaired []string          // 502s without one
	others   map[string]string // FAILED payments with no 502, and why
}

func paymentOf(line string) (string, error) {
	m := payID.FindStringSubmatch(line)
	if m == nil {
		return "", errLine
	}
	return m[1], nil
}

func crossCheck(gateway, payments string) audit {
	fails := map[string][]string{}
	for line := range strings.Lines(payments) {
		if m := failed.FindStringSubmatch(line); m != nil {
			if id, err := paymentOf(line); err == nil {
				fails[id] = append(fails[id], m[1])
			}
		}
	}
	a := audit{others: map[string]string{}}
	seen := map[string]bool{}
	for line := range strings.Lines(gateway) {
		if !gw502.MatchString(line) {
			continue
		}
		id, err := paymentOf(line)
		if err != nil {
			continue
		}
		seen[id] = true
		if len(fails[id]) == 1 {
			a.matched = append(a.matched, id)
		} else {
			a.unpaired = append(a.unpaired, id)
		}
	}
	for id, rs := range fails {
		if !seen[id] {
			a.others[id] = rs[0]
		}
	}
	return a
}

func (a audit) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gateway 502s matched to one FAILED payment: %s\n", strings.Join(a.matched, ", "))
	if len(a.unpaired) > 0 {
		fmt.Fprintf(&b, "gateway 502s WITHOUT exactly one FAILED payment: %s\n", strings.Join(a.unpaired, ", "))
	} else {
		b.WriteString("every gateway 502 matches exactly one FAILED payment\n")
	}
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range a.others {
			if !yield(id) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "FAILED with no 502 (not part of the incident): %s (%s)\n", id, a.others[id])
	}
	return b.String()
}

// validate is the host's validator of a proposed report: report.md must
// name every matched payment. The model never chooses it.
func (a audit) validate(ctx context.Context, w *workspace.Workspace) (bool, string, error) {
	b, err := w.Read("report.md")
	if err != nil {
		return false, "report.md: " + err.Error(), nil
	}
	var missing []string
	for _, id := range a.matched {
		if !strings.Contains(string(b), id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return false, "report.md leaves out the 502 payments " + strings.Join(missing, ", ") + ": every matched payment must be named", nil
	}
	return true, fmt.Sprintf("report.md names all %d matched payments", len(a.matched)), nil
}
