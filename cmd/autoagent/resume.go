package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/autoagent-go/autoagent/loop"
	"github.com/spf13/cobra"
)

func init() { addCommand(newResumeCmd) }

func newResumeCmd() *cobra.Command {
	var f agentFlags
	var approve, reject []string
	c := &cobra.Command{
		Use:   "resume [flags] STATE_FILE",
		Short: "Continue a run saved with run --checkpoint: after an approval pause, a bound, a crash or Ctrl-C",
		Long: `Continue the run whose state run --checkpoint saved in STATE_FILE.

After an approval pause, give a decision for the pending calls: --approve ID
runs that call exactly once, --reject ID[=reason] tells the model a human
refused it. Calls journaled as done before a crash are not run again. The
state file does not hold the provider or the tools: pass the same --provider,
--model, --plugins and --policy flags as the run. Raise --max-steps or
--token-budget to continue a run stopped by a bound.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if _, err := os.Stat(args[0]); err != nil {
				return fmt.Errorf("state file: %w", err)
			}
			store, err := loop.OpenFileStore(args[0])
			if err != nil {
				return err
			}
			defer store.Close()
			st, err := store.Load()
			if err != nil {
				return err
			}
			opts, err := decisions(st, approve, reject)
			if err != nil {
				return usageError(err)
			}
			s, err := f.newAgent(ctx, c.ErrOrStderr(), false)
			if err != nil {
				return err
			}
			defer s.Close(context.WithoutCancel(ctx))
			store.Attach(s.Agent())

			var res *loop.Result
			var runErr error
			if f.stream {
				res, runErr = streamRun(f.streamOut(c), c.ErrOrStderr(), s.Agent().StreamResume(ctx, st, opts...))
			} else {
				res, runErr = s.Agent().Resume(ctx, st, opts...)
			}
			reportPending(c, res, args[0])
			return reportResult(c, f.json, !f.stream, res, runErr)
		},
	}
	f.register(c.Flags())
	c.Flags().StringArrayVar(&approve, "approve", nil, "approve the pending call with this id (repeatable)")
	c.Flags().StringArrayVar(&reject, "reject", nil, "reject the pending call with this id, optionally with a reason: ID=reason (repeatable)")
	return c
}

// decisions turns --approve and --reject into resume options, refusing ids
// that are not calls awaiting a decision: the pending turn's, or those a
// tool or a sub-agent made (as run prints them).
func decisions(st *loop.RunState, approve, reject []string) ([]loop.ResumeOption, error) {
	turn := map[string]bool{}
	ids := decidableIDs(st)
	for _, id := range ids {
		turn[id] = true
	}
	check := func(flag, id string) error {
		if !turn[id] {
			if len(ids) == 0 {
				return fmt.Errorf("%s %s: the saved run has no pending calls", flag, id)
			}
			return fmt.Errorf("%s %s: not a call of the pending turn (calls: %s)", flag, id, strings.Join(ids, ", "))
		}
		return nil
	}
	var opts []loop.ResumeOption
	for _, id := range approve {
		if err := check("--approve", id); err != nil {
			return nil, err
		}
	}
	if len(approve) > 0 {
		opts = append(opts, loop.Approve(approve...))
	}
	for _, r := range reject {
		id, reason, _ := strings.Cut(r, "=")
		if err := check("--reject", id); err != nil {
			return nil, err
		}
		opts = append(opts, loop.Reject(id, reason))
	}
	return opts, nil
}
