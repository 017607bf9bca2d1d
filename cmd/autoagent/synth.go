package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/providers/catalog"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/synth"
	"github.com/autoagent-go/autoagent/trace"
)

func init() { addCommand(newSynthCmd) }

// synthFlags are the flags of `autoagent synth`.
type synthFlags struct {
	examples, goal, lang, name string
	holdout                    float64
	maxAttempts                int
	seed                       uint64
	provider, model, baseURL   string
	apiKeyEnv, script          string
	staging                    string
	noStage, json              bool
	grants                     []string
	trace                      string
	timeout                    time.Duration
	memory                     int64
}

func newSynthCmd() *cobra.Command {
	var f synthFlags
	c := &cobra.Command{
		Use:   "synth --examples FILE.jsonl --goal TEXT [--lang js|go] [--holdout 0.4] [--max-attempts N] [provider flags]",
		Short: "Synthesize a sandboxed tool from examples, checked on held-out cases",
		Long: `Synthesize a sandboxed tool from examples.

A model writes the tool (JavaScript by default, or Go), which runs in the
WebAssembly sandbox with no capabilities. The examples (one JSON object per
line: {"args": {...}, "expected": ...}) are split with --seed: the model
sees only the shown ones and, when an attempt fails on the held-out ones,
only how many failed. A tool is accepted when it passes its own self-tests
and every shown and held-out example (JSON equality). The accepted tool is
staged (module, sidecar, source, record) for review; promote it with
` + "`autoagent synth promote NAME`" + ` and approve it with ` + "`autoagent tools approve`" + `.

Exit status: 0 when a tool was accepted, 1 when every attempt was rejected
or the model or sandbox failed, 2 on a usage error.`,
		Example: `  autoagent synth --examples slugs.jsonl --goal "Turn a title into a URL slug" --provider openai --model gpt-4.1-mini
  autoagent synth --examples slugs.jsonl --goal "Turn a title into a URL slug" --provider scripted --script writer.jsonl
  autoagent synth --examples sums.jsonl --goal "Sum the numbers" --lang go --holdout 0.3 --max-attempts 3`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runSynth(c, f) },
	}
	fs := c.Flags()
	fs.StringVar(&f.examples, "examples", "", "examples file, JSONL: {\"args\": {...}, \"expected\": ...} per line (required)")
	fs.StringVar(&f.goal, "goal", "", "what the tool is for (required)")
	fs.StringVar(&f.lang, "lang", "js", "language the tool is written in: js|go")
	fs.StringVar(&f.name, "name", "", "the tool's name (default: the model chooses)")
	fs.Float64Var(&f.holdout, "holdout", synth.DefaultHoldout, "share of examples held out from the model, below 1 (0: none)")
	fs.IntVar(&f.maxAttempts, "max-attempts", 5, "most attempts the model gets")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the shown/held-out split")
	fs.StringVar(&f.provider, "provider", "openai", "model provider that writes the tool: "+strings.Join(catalog.Names(), "|"))
	fs.StringVar(&f.model, "model", "", "model name (default: the provider's default model)")
	fs.StringVar(&f.baseURL, "base-url", "", "provider endpoint (required for openai-compatible)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "", "environment variable holding the API key (default per provider)")
	fs.StringVar(&f.script, "script", "", "script file played by --provider scripted (offline)")
	fs.StringVar(&f.staging, "staging", synth.DefaultStagingDir, "staging directory for the accepted tool")
	fs.StringVar(&f.trace, "trace", "", "append a trace event per build step (write, screen, build, load, self-test, check, stage) to FILE.jsonl")
	fs.BoolVar(&f.noStage, "no-stage", false, "do not write the accepted tool anywhere")
	fs.BoolVar(&f.json, "json", false, "print the outcome as one JSON object")
	fs.StringArrayVar(&f.grants, "grant", nil, "a capability the tool may be granted if it asks (repeatable; default: none)")
	fs.DurationVar(&f.timeout, "timeout", 0, "wall-time limit of one call of the tool (default: the host's, 10s)")
	fs.Int64Var(&f.memory, "memory", 0, "memory limit of the tool in MiB (default: the host's, 64)")
	c.AddCommand(newSynthPromoteCmd(), newSynthEngineCmd())
	return c
}

func runSynth(c *cobra.Command, f synthFlags) error {
	switch {
	case f.examples == "":
		return usageError(errors.New("--examples FILE.jsonl is required"))
	case strings.TrimSpace(f.goal) == "":
		return usageError(errors.New("--goal TEXT is required"))
	case f.holdout < 0 || f.holdout >= 1:
		return usageError(fmt.Errorf("--holdout %v: want a share from 0 to below 1", f.holdout))
	case f.maxAttempts < 1:
		return usageError(fmt.Errorf("--max-attempts %d: want 1 or more", f.maxAttempts))
	case f.lang != "js" && f.lang != "go":
		return usageError(fmt.Errorf("--lang %q: want js or go", f.lang))
	case f.memory < 0 || f.timeout < 0:
		return usageError(errors.New("--memory and --timeout must be positive"))
	}
	ceiling, err := manifest.ParseGrants(f.grants)
	if err != nil {
		return usageError(err)
	}
	examples, err := readExamples(f.examples)
	if err != nil {
		return err
	}
	writer, err := catalog.New(catalog.Config{
		Name: f.provider, Model: f.model, BaseURL: f.baseURL, APIKeyEnv: f.apiKeyEnv, ScriptFile: f.script,
	})
	if err != nil {
		return providerSetupError(err)
	}
	ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt)
	defer stop()
	h, err := host.New(ctx, host.Options{})
	if err != nil {
		return err
	}
	defer h.Close(context.WithoutCancel(ctx))
	errw := c.ErrOrStderr()
	var tr *trace.Tracer
	if f.trace != "" {
		if tr, err = trace.OpenFile(f.trace); err != nil {
			return err
		}
		defer tr.Close()
	}
	b, err := synth.New(synth.Options{
		Host: h, Writer: writer, Model: f.model, Language: f.lang, Ceiling: ceiling,
		Limits:     host.Limits{Timeout: f.timeout, Memory: f.memory << 20},
		StagingDir: f.staging, NoStaging: f.noStage, Progress: errw,
		Observer: sandbox.TraceSynth(tr),
	})
	if err != nil {
		return err
	}
	defer b.Close(context.WithoutCancel(ctx))

	holdout := f.holdout
	if holdout == 0 {
		holdout = -1 // the flag's 0 means none; the library's 0 means the default
	}
	task := synth.Task{
		Goal: f.goal, Examples: examples, Name: f.name, Language: f.lang,
		Holdout: holdout, Seed: f.seed, MaxAttempts: f.maxAttempts,
	}
	if !f.json {
		task.OnAttempt = func(a synth.Attempt) { printAttempt(errw, a) }
	}
	res, err := b.Synthesize(ctx, task)
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	if f.json {
		if err := printSynthJSON(out, res); err != nil {
			return err
		}
	} else {
		printSynthesis(out, res, f)
	}
	if !res.Accepted() {
		return fmt.Errorf("synth: no tool accepted after %d attempt(s)", len(res.Attempts))
	}
	return nil
}

// readExamples reads a JSONL examples file; blank lines and lines starting
// with # are skipped. Errors name the line.
func readExamples(path string) ([]synth.Example, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []synth.Example
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var ex synth.Example
		if err := dec.Decode(&ex); err != nil {
			return nil, fmt.Errorf("%s:%d: want {\"args\": {...}, \"expected\": ...}: %v", path, n, err)
		}
		if ex.Args == nil || ex.Expected == nil {
			return nil, fmt.Errorf("%s:%d: both \"args\" and \"expected\" are required", path, n)
		}
		out = append(out, ex)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no examples", path)
	}
	return out, nil
}

func printAttempt(w io.Writer, a synth.Attempt) {
	name := termtext.Name(a.Tool) // the model's choice
	if name == "" {
		name = "(no tool)"
	}
	counts := fmt.Sprintf("shown %d/%d", a.ShownPassed, a.ShownTotal)
	if a.HeldOutRan {
		counts += fmt.Sprintf(", held-out %d/%d", a.HeldOutPassed, a.HeldOutTotal)
	}
	if a.Accepted {
		fmt.Fprintf(w, "attempt %d: %s: %s: accepted (%.1fs)\n", a.Index, name, counts, a.Duration.Seconds())
		return
	}
	fmt.Fprintf(w, "attempt %d: %s: %s: rejected at %s (%.1fs): %s\n", a.Index, name, counts, a.Stage, a.Duration.Seconds(), firstLines(termtext.Text(a.Feedback), 4))
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n    ")
}

func printSynthesis(w io.Writer, res *synth.Synthesis, f synthFlags) {
	cost := "no usage reported"
	if u := res.Usage; u != nil {
		cost = fmt.Sprintf("%d tokens (%d in, %d out)", u.TotalTokens, u.InputTokens, u.OutputTokens)
	}
	if !res.Accepted() {
		fmt.Fprintf(w, "no tool accepted after %d attempts (%d shown, %d held-out examples); cost: %s\n", len(res.Attempts), res.Shown, res.HeldOut, cost)
		return
	}
	t := res.Tool
	fmt.Fprintf(w, "accepted %s (%s) after %d attempt(s): %d shown and %d held-out examples pass; cost: %s\n",
		termtext.Name(t.Name()), t.Language(), len(res.Attempts), res.Shown, res.HeldOut, cost)
	if st := res.Staged; st != nil {
		fmt.Fprintf(w, "staged in %s: %s (sha256 %s)\n", st.Dir, filepath.Base(st.Module), st.SHA256)
		fmt.Fprintf(w, "review %s, then: autoagent synth promote %s --staging %s && autoagent tools approve plugins/%s.wasm\n",
			st.Source, st.Stem, st.Dir, st.Stem)
	} else {
		fmt.Fprintf(w, "source:\n%s\n", termtext.Text(t.Source())) // written by a model
	}
}

func printSynthJSON(w io.Writer, res *synth.Synthesis) error {
	type attempt struct {
		synth.Attempt
		DurationMS int64 `json:"duration_ms"`
	}
	out := struct {
		Accepted bool      `json:"accepted"`
		Tool     any       `json:"tool,omitempty"`
		Attempts []attempt `json:"attempts"`
		Usage    any       `json:"usage"`
		Shown    int       `json:"shown"`
		HeldOut  int       `json:"held_out"`
		Staged   any       `json:"staged,omitempty"`
	}{Accepted: res.Accepted(), Usage: res.Usage, Shown: res.Shown, HeldOut: res.HeldOut}
	for _, a := range res.Attempts {
		out.Attempts = append(out.Attempts, attempt{a, a.Duration.Milliseconds()})
	}
	if t := res.Tool; t != nil {
		d := t.Draft()
		out.Tool = map[string]any{"name": d.Name, "description": d.Description, "input_schema": d.InputSchema,
			"language": t.Language(), "sha256": t.SHA256(), "source": d.Source}
	}
	if res.Staged != nil {
		out.Staged = res.Staged
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func newSynthPromoteCmd() *cobra.Command {
	var staging, plugins string
	c := &cobra.Command{
		Use:   "promote NAME [--staging DIR] [--plugins DIR]",
		Short: "Move a staged tool into the plugins directory, pending approval",
		Long: `Move the staged tool NAME (module, describe sidecar, source, record) from the
staging directory into the plugins directory. It is not approved: it stays
pending until approved with ` + "`autoagent tools approve PLUGINS/NAME.wasm`" + `, which pins
the module's and the sidecar's sha256. Nothing in the plugins directory is
overwritten.`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("want one staged tool NAME, got %d arguments", len(args)))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			paths, err := synth.Promote(staging, strings.TrimSuffix(args[0], ".wasm"), plugins)
			if err != nil {
				return err
			}
			for _, p := range paths {
				fmt.Fprintln(c.OutOrStdout(), p)
			}
			fmt.Fprintf(c.ErrOrStderr(), "pending approval: autoagent tools approve %s\n", paths[0])
			return nil
		},
	}
	c.Flags().StringVar(&staging, "staging", synth.DefaultStagingDir, "staging directory")
	c.Flags().StringVar(&plugins, "plugins", "plugins", "plugins directory")
	return c
}

func newSynthEngineCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "engine",
		Short: "Show the JavaScript engine modules and compile them into the cache",
		Long: `Find the JavaScript engine modules (see synth.FindEngine: beside
$AUTOAGENT_JS_ENGINE, else in the user cache directory; never a working
directory's checkout), compile each to
machine code into the host's disk cache (with progress the first time) and
run its self-check. Build them with ` + "`make synth-engine`" + `.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			h, err := host.New(ctx, host.Options{})
			if err != nil {
				return err
			}
			defer h.Close(ctx)
			for _, file := range []string{synth.EngineFile, synth.BridgeEngineFile} {
				path, err := synth.FindEngine(file)
				if err != nil {
					return err
				}
				start := time.Now()
				l, err := synth.WarmEngine(ctx, h, path, c.ErrOrStderr())
				if err != nil {
					return err
				}
				fi, _ := os.Stat(path)
				fmt.Fprintf(c.OutOrStdout(), "%s\t%.1f MB\tsha256 %s\tready in %.1fs\n", path, float64(fi.Size())/1e6, l.SHA256(), time.Since(start).Seconds())
				_ = l.Close(ctx)
			}
			return nil
		},
	}
}
