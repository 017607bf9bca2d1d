package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/autoagent-go/autoagent/loop"
	"github.com/spf13/cobra"
)

func init() { addCommand(newRunCmd) }

func newRunCmd() *cobra.Command {
	var f agentFlags
	c := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Run the agent once on PROMPT",
		Long: `Run the agent once on PROMPT with the sandboxed tools of the plugins directory.

The answer goes to stdout (with --stream, as it arrives; tool calls are shown on
stderr). With --json, stdout is one JSON object:
  {"output", "steps", "usage": {"input_tokens", "output_tokens", "cached_tokens",
   "total_tokens"}, "messages", "stop_reason"}
where stop_reason is done, max_steps, token_budget, approval_required or cancelled.

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
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			s, err := f.newSession(ctx, c.ErrOrStderr())
			if err != nil {
				return err
			}
			defer s.Close(context.WithoutCancel(ctx))

			var res *loop.Result
			var runErr error
			if f.stream {
				res, runErr = streamRun(c.OutOrStdout(), c.ErrOrStderr(), s.agent.Stream(ctx, prompt))
			} else {
				res, runErr = s.agent.Run(ctx, prompt)
			}
			return reportResult(c, f.json, !f.stream, res, runErr)
		},
	}
	f.register(c.Flags())
	return c
}

// reportResult prints a run's result as the flags ask (the answer itself
// only when printOutput: a streamed answer is already on screen) and maps
// its outcome to the exit status.
func reportResult(c *cobra.Command, asJSON, printOutput bool, res *loop.Result, runErr error) error {
	if res != nil {
		if asJSON {
			enc := json.NewEncoder(c.OutOrStdout())
			enc.SetEscapeHTML(false)
			if err := enc.Encode(res); err != nil {
				return err
			}
		} else if printOutput && res.StopReason == loop.StopDone {
			if !strings.HasSuffix(res.Output, "\n") {
				defer fmt.Fprintln(c.OutOrStdout())
			}
			fmt.Fprint(c.OutOrStdout(), res.Output)
		}
	}
	if runErr != nil {
		return runErr
	}
	if res != nil && res.StopReason != loop.StopDone {
		return fmt.Errorf("run stopped: %s", res.StopReason)
	}
	return nil
}
