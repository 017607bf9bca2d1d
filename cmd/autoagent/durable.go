package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/autoagent-go/autoagent/durable"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/loop"
)

func init() {
	addCommand(newWorkerCmd)
	addCommand(newRunsCmd)
}

// temporalFlags name a Temporal server and task queue.
type temporalFlags struct {
	addr, namespace, queue string
}

func (t *temporalFlags) register(fs *pflag.FlagSet, required bool) {
	help := "the Temporal server's frontend `HOST:PORT`"
	if !required {
		help += ": run the agent there, as a durable workflow, on the workers of --task-queue"
	}
	fs.StringVar(&t.addr, "temporal", "", help)
	fs.StringVar(&t.namespace, "namespace", "default", "the Temporal `NAMESPACE`")
	fs.StringVar(&t.queue, "task-queue", durable.DefaultTaskQueue, "the workers' task `QUEUE`")
}

// dial connects to the server, with a clear error when it is not there.
func (t *temporalFlags) dial(ctx context.Context, stderr io.Writer) (client.Client, error) {
	if t.addr == "" {
		return nil, usageError(errors.New("--temporal HOST:PORT is required"))
	}
	c, err := client.DialContext(ctx, client.Options{HostPort: t.addr, Namespace: t.namespace, Logger: log.NewStructuredLogger(slogTo(stderr))})
	if err != nil {
		return nil, fmt.Errorf("cannot reach the Temporal server at %s (namespace %s): %w (is it running? `temporal server start-dev` starts one)", t.addr, t.namespace, err)
	}
	return c, nil
}

func (t *temporalFlags) client(c client.Client) *durable.Client {
	return &durable.Client{Temporal: c, TaskQueue: t.queue}
}

// connect dials the server for a runs verb; done closes the connection.
func (t *temporalFlags) connect(c *cobra.Command) (dc *durable.Client, done func(), err error) {
	tc, err := t.dial(c.Context(), c.ErrOrStderr())
	if err != nil {
		return nil, nil, err
	}
	return t.client(tc), tc.Close, nil
}

func newWorkerCmd() *cobra.Command {
	var f agentFlags
	var tf temporalFlags
	c := &cobra.Command{
		Use:   "worker --temporal HOST:PORT [flags]",
		Short: "Run agent runs started with run --temporal: the model, the tools and the keys live here",
		Long: `Poll a Temporal task queue and run the model and tool calls of durable runs
(started with ` + "`autoagent run --temporal`" + `) with this agent: the provider and its key,
the plugins directory and its manifest (each module's hash is checked before
each call), the policy. The run's state lives on the server, so a worker can
stop or crash at any point: another one finishes the run. A non-idempotent
tool call interrupted by a crash is never run twice: the model is told its
outcome is unknown.

The agent is given as for run (flags, or --agent FILE). Stop with Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			tc, err := tf.dial(ctx, c.ErrOrStderr())
			if err != nil {
				return err
			}
			defer tc.Close()
			s, err := f.newAgent(ctx, c.ErrOrStderr(), true)
			if err != nil {
				return err
			}
			defer s.Close(context.WithoutCancel(ctx))
			w := durable.NewWorker(tc, tf.queue, &durable.Activities{Agent: s.Agent()})
			fmt.Fprintf(c.ErrOrStderr(), "worker: running the runs of task queue %q on %s (namespace %s); Ctrl-C stops\n", tf.queue, tf.addr, tf.namespace)
			interrupt := make(chan any)
			go func() { <-ctx.Done(); close(interrupt) }()
			if err := w.Run(interrupt); err != nil {
				return fmt.Errorf("worker: %w", err)
			}
			return nil
		},
	}
	f.register(c.Flags())
	tf.register(c.Flags(), true)
	return c
}

// runDurable is run --temporal: it starts the run on the server, shows
// its progress per step on stderr and prints its Result as a local run
// does. A run awaiting approval keeps waiting on the server: the command
// says how to decide and exits 1, printing the Result so far.
func runDurable(c *cobra.Command, tf *temporalFlags, id, prompt string, asJSON bool) error {
	ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tc, err := tf.dial(ctx, c.ErrOrStderr())
	if err != nil {
		return err
	}
	defer tc.Close()
	dc := tf.client(tc)
	id, err = dc.Start(ctx, id, durable.RunInput{Prompt: prompt}, durable.Options{})
	if err != nil {
		return err
	}
	errw := c.ErrOrStderr()
	fmt.Fprintf(errw, "run %s started on %s (task queue %q)\n", id, tf.addr, tf.queue)
	done := make(chan struct{})
	var res *loop.Result
	var resErr error
	go func() {
		defer close(done)
		res, resErr = dc.Result(ctx, id)
	}()
	step := -1
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			if resErr != nil {
				return resErr
			}
			if res.Steps != step {
				// A run faster than the poll still shows where it ended.
				fmt.Fprintf(errw, "step %d (done): %d tokens in all\n", res.Steps, res.Usage.InputTokens+res.Usage.OutputTokens)
			}
			return reportResult(c, asJSON, true, res, nil)
		case <-ctx.Done():
			fmt.Fprintf(errw, "run %s goes on on the server: `autoagent runs show --temporal %s %s` shows it, `autoagent runs cancel …` cancels it\n", id, tf.addr, id)
			return ctx.Err()
		case <-tick.C:
		}
		st, err := dc.Status(ctx, id)
		if err != nil {
			continue // not yet picked up by a worker
		}
		if st.Step != step {
			step = st.Step
			fmt.Fprintf(errw, "step %d (%s): %d tokens so far\n", st.Step, st.State, st.Usage.InputTokens+st.Usage.OutputTokens)
		}
		if st.State == "awaiting_approval" {
			for _, p := range st.Pending {
				showPending(errw, p, "")
			}
			fmt.Fprintf(errw, "the run waits on the server: `autoagent runs approve --temporal %s %s CALL_ID…` or `autoagent runs reject --temporal %s %s CALL_ID --reason …`\n", tf.addr, id, tf.addr, id)
			partial := &loop.Result{Steps: st.Step, Usage: st.Usage, Messages: st.Messages, StopReason: loop.StopApprovalRequired}
			return reportResult(c, asJSON, true, partial, nil)
		}
	}
}

func newRunsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "runs",
		Short: "List, show, approve, reject and cancel durable runs on a Temporal server",
	}
	c.AddCommand(runsList(), runsShow(), runsDecide(true), runsDecide(false), runsCancel())
	return c
}

func runsList() *cobra.Command {
	var tf temporalFlags
	var asJSON bool
	c := &cobra.Command{
		Use:   "list --temporal HOST:PORT",
		Short: "List the runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			dc, done, err := tf.connect(c)
			if err != nil {
				return err
			}
			defer done()
			runs, err := dc.List(c.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.OutOrStdout(), runs)
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATUS\tSTARTED")
			for _, r := range runs {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Status, r.Start)
			}
			return tw.Flush()
		},
	}
	tf.register(c.Flags(), true)
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of {id, status, start}")
	return c
}

func runsShow() *cobra.Command {
	var tf temporalFlags
	var asJSON, wait bool
	c := &cobra.Command{
		Use:   "show --temporal HOST:PORT RUN_ID",
		Short: "Show a run's state: step, usage, pending approvals, transcript",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dc, done, err := tf.connect(c)
			if err != nil {
				return err
			}
			defer done()
			if wait {
				res, err := dc.Result(c.Context(), args[0])
				if err != nil {
					return err
				}
				return reportResult(c, asJSON, true, res, nil)
			}
			st, err := dc.Status(c.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.OutOrStdout(), st)
			}
			w := c.OutOrStdout()
			fmt.Fprintf(w, "run %s: %s after %d steps, %d input and %d output tokens\n", st.RunID, st.State, st.Step, st.Usage.InputTokens, st.Usage.OutputTokens)
			for _, p := range st.Pending {
				showPending(w, p, "")
			}
			if st.Error != "" {
				fmt.Fprintf(w, "  error: %s\n", termtext.Text(st.Error))
			}
			return nil
		},
	}
	tf.register(c.Flags(), true)
	c.Flags().BoolVar(&asJSON, "json", false, "print the state as JSON {run_id, state, step, usage, messages, pending, error}")
	c.Flags().BoolVar(&wait, "wait", false, "wait for the run to end and print its Result as run does")
	return c
}

func runsDecide(approve bool) *cobra.Command {
	var tf temporalFlags
	var reason string
	verb, short := "reject", "Reject pending calls of a run: they do not run, and the model is told why"
	if approve {
		verb, short = "approve", "Approve pending calls of a run: each runs once"
	}
	c := &cobra.Command{
		Use:   verb + " --temporal HOST:PORT RUN_ID CALL_ID...",
		Short: short,
		Long: short + `.

The run checks the decisions before it takes any: a call that is not pending is
refused, and nothing is applied. A decision sent while no worker runs waits for
one.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			dc, done, err := tf.connect(c)
			if err != nil {
				return err
			}
			defer done()
			var ds []durable.Decision
			for _, id := range args[1:] {
				ds = append(ds, durable.Decision{CallID: id, Approved: approve, Reason: reason})
			}
			st, err := dc.Decide(c.Context(), args[0], ds...)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "run %s: %sd %s; the run is %s\n", args[0], verb, strings.Join(args[1:], ", "), st.State)
			return nil
		},
	}
	tf.register(c.Flags(), true)
	if !approve {
		c.Flags().StringVar(&reason, "reason", "", "what the model is told")
	}
	return c
}

func runsCancel() *cobra.Command {
	var tf temporalFlags
	c := &cobra.Command{
		Use:   "cancel --temporal HOST:PORT RUN_ID",
		Short: "Cancel a run: its running tool sees its context cancelled, and the run ends cancelled",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dc, done, err := tf.connect(c)
			if err != nil {
				return err
			}
			defer done()
			if err := dc.Cancel(c.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "run %s: cancellation requested\n", args[0])
			return nil
		},
	}
	tf.register(c.Flags(), true)
	return c
}

// slogTo is the Temporal SDK's log: warnings and errors only.
func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// agentOnlyFlags define the agent, which for a durable run is the
// worker's.
var agentOnlyFlags = []string{"provider", "model", "base-url", "api-key-env", "api-key-file", "script", "plugins", "manifest", "agent", "system", "policy", "backends", "mcp", "mcp-url", "memory", "rules", "skills", "trusted-skills", "cache", "cache-ttl", "retrieve", "trusted-retrieve", "retrieve-memory", "retrieve-embeddings"}

func checkDurableFlags(fs *pflag.FlagSet) error {
	for _, name := range agentOnlyFlags {
		if fl := fs.Lookup(name); fl != nil && fl.Changed {
			return usageError(fmt.Errorf("--%s with --temporal: a durable run uses the worker's agent (give --%s to `autoagent worker`)", name, name))
		}
	}
	return nil
}
