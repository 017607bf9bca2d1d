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
	"strings"
	"syscall"

	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/spf13/cobra"
)

func init() { addCommand(newRunCmd) }

func newRunCmd() *cobra.Command {
	var f agentFlags
	var checkpoint string
	var tf temporalFlags
	var runID string
	c := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Run the agent once on PROMPT",
		Long: `Run the agent once on PROMPT with the sandboxed tools of the plugins directory.

The answer goes to stdout (with --stream, as it arrives; tool calls are shown on
stderr). With --json, stdout is one JSON object:
  {"output", "steps", "usage": {"input_tokens", "output_tokens", "cached_tokens",
   "total_tokens"}, "messages", "stop_reason"}
where stop_reason is done, max_steps, token_budget, approval_required or cancelled.

With --checkpoint FILE the run's state is saved after every step and every
tool call is journaled (FILE.journal), so a run stopped by a bound, an
approval pause, a crash or Ctrl-C continues with ` + "`autoagent resume FILE`" + `, and a
side effect that already happened is never repeated.

With --temporal HOST:PORT the run is a durable workflow on that Temporal server,
run by the workers of --task-queue (` + "`autoagent worker`" + `), which hold the agent,
its key and its tools: progress is shown per step, and the same Result is
printed. A run awaiting approval keeps waiting on the server (see
` + "`autoagent runs`" + `).

Exit status: 0 when the model answered, 1 when the run failed or stopped on a
bound (the --json object is still printed), 2 on a usage error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			prompt := strings.Join(args, " ")
			if strings.TrimSpace(prompt) == "" {
				return usageError(errors.New("the prompt is empty"))
			}
			if tf.addr != "" {
				if err := checkDurableFlags(c.Flags()); err != nil {
					return err
				}
				return runDurable(c, &tf, runID, prompt, f.json)
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			f.checkpoint = checkpoint
			s, err := f.newAgent(ctx, c.ErrOrStderr(), false)
			if err != nil {
				return err
			}
			defer s.Close(context.WithoutCancel(ctx))

			var res *loop.Result
			var runErr error
			if f.stream {
				res, runErr = streamRun(f.streamOut(c), c.ErrOrStderr(), s.Agent().Stream(ctx, prompt))
			} else {
				res, runErr = s.Agent().Run(ctx, prompt)
			}
			reportPending(c, res, checkpoint)
			return reportResult(c, f.json, !f.stream, res, runErr)
		},
	}
	f.register(c.Flags())
	tf.register(c.Flags(), false)
	c.Flags().StringVar(&runID, "run-id", "", "with --temporal: the run's `ID` (the workflow ID; default: chosen by the server)")
	c.Flags().StringVar(&checkpoint, "checkpoint", "", "save the run's state to `FILE` after every step (and journal tool calls to FILE.journal) for autoagent resume FILE")
	return c
}

// reportPending tells the user, on stderr, which calls await a decision
// and how to give it.
func reportPending(c *cobra.Command, res *loop.Result, stateFile string) {
	if res == nil || res.StopReason != loop.StopApprovalRequired {
		return
	}
	w := c.ErrOrStderr()
	dir := ""
	if stateFile != "" {
		dir = filepath.Dir(stateFile)
	}
	for _, p := range res.Pending {
		showPending(w, p, dir)
	}
	if stateFile == "" {
		fmt.Fprintln(w, "run with --checkpoint FILE to be able to resume after a decision")
		return
	}
	fmt.Fprintf(w, "decide with: autoagent resume %s --approve ID | --reject ID[=reason] (same provider and tool flags)\n", stateFile)
}

// reportResult prints a run's result (printResult) and maps its outcome
// to the exit status.
func reportResult(c *cobra.Command, asJSON, printOutput bool, res *loop.Result, runErr error) error {
	if err := printResult(c.OutOrStdout(), asJSON, printOutput, res, runErr); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if res != nil && res.StopReason != loop.StopDone {
		return fmt.Errorf("run stopped: %s", res.StopReason)
	}
	return nil
}

// printResult prints a run's (or chat turn's) result on w as the flags
// ask: one JSON object, or the answer itself, ended by a newline, only
// when printOutput (a streamed answer is already on screen). A run that
// failed after it started (an answer that never matched the output
// schema, a guardrail's block, a provider that gave up) still prints its
// JSON object, from the state it reached, with stop_reason "error" and
// the cause in "error".
func printResult(w io.Writer, asJSON, printOutput bool, res *loop.Result, runErr error) error {
	if res == nil && asJSON {
		if failed := failedResult(runErr); failed != nil {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			return enc.Encode(failed)
		}
	}
	switch {
	case res == nil:
	case asJSON:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(res)
	case printOutput && res.StopReason == loop.StopDone && len(res.Structured) > 0:
		fmt.Fprintln(w, termtext.Text(string(res.Structured)))
	case printOutput && res.StopReason == loop.StopDone:
		// The model's answer: it may carry what a page or a tool said.
		fmt.Fprint(w, termtext.Text(res.Output))
		if !strings.HasSuffix(res.Output, "\n") {
			fmt.Fprintln(w)
		}
	}
	return nil
}

// stopError is the stop_reason of `run --json` for a run that failed.
const stopError loop.StopReason = "error"

// failedRun is the `run --json` object of a failed run: the Result's
// fields from the state it reached, and the cause.
type failedRun struct {
	*loop.Result
	Error string `json:"error"`
}

// failedResult is the object printed for a run that failed with a
// *loop.RunError, nil for an error before the run started (a bad flag, a
// provider that cannot be built), which has no transcript to show.
func failedResult(err error) *failedRun {
	var re *loop.RunError
	if !errors.As(err, &re) || re.State == nil {
		return nil
	}
	st := re.State
	return &failedRun{
		Result: &loop.Result{Steps: st.Step, Usage: st.Usage, Messages: st.Messages, StopReason: stopError},
		Error:  re.Err.Error(),
	}
}
