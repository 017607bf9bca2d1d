package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/pluginload"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/spf13/cobra"
)

func init() { addCommand(newReplayCmd) }

func newReplayCmd() *cobra.Command {
	var (
		asJSON            bool
		liveTools         bool
		plugins, manifest string
	)
	c := &cobra.Command{
		Use:   "replay [flags] RECORDING.jsonl",
		Short: "Replay a run recorded with run --record: offline, or with the real tools",
		Long: `Replay a run recorded with run --record.

By default the replay is fully offline: no provider is called and no tool runs;
the recorded responses and results are played back, and the run's result is
printed (as run --json with --json). With --live-tools the approved tools of the
plugins directory run for real and each result is compared with the recorded
one. Any divergence (a different tool set, a different result, the recording
running out) is reported with the step where it happened, and exits 1.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			rec, err := loop.OpenRecording(args[0])
			if err != nil {
				return err
			}
			var opts loop.ReplayOptions
			if liveTools {
				if _, err := os.Stat(plugins); err != nil {
					return fmt.Errorf("plugins directory %s: %w", plugins, err)
				}
				trust, err := trustStore(plugins)
				if err != nil {
					return err
				}
				hopts := sandbox.HostOptions(nil)
				hopts.Protected = autoagent.Config{Features: []autoagent.Feature{&sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Trust: trust}}}}.Protects()
				h, dir, err := pluginload.Open(ctx, hopts, plugindir.Options{Dir: plugins, Manifest: manifest, Trust: trust})
				if err != nil {
					return err
				}
				pluginload.Report(c.ErrOrStderr(), dir.Snapshot())
				defer h.Close(context.WithoutCancel(ctx))
				defer dir.Close(context.WithoutCancel(ctx))
				reg := &tool.Registry{}
				if err := dir.Publish(reg); err != nil {
					return err
				}
				opts.Tools = reg
				if rec.CodeMode() != codemode.Off {
					// The recorded run was in code mode: its programs run
					// again, in the engine, their calls through the gate.
					// Its Python programs too, when the Python engine
					// is built (without it they are refused, and the
					// replay says where it diverged).
					langs := []string{codemode.JavaScript}
					if _, err := sandbox.TrustedPythonEngine(); err == nil {
						langs = append(langs, codemode.Python)
					}
					programs, closers, err := sandbox.ProgramRunner(ctx, h, sandbox.CodeModeConfig{Languages: langs}, c.ErrOrStderr())
					if err != nil {
						return fmt.Errorf("the recorded run was in code mode: %w", err)
					}
					for _, p := range closers {
						defer p.Close(context.WithoutCancel(ctx))
					}
					opts.Agent = &loop.Agent{CodeMode: codemode.Config{Runner: programs}}
				}
			}
			res, err := rec.Replay(ctx, opts)
			var mismatch *loop.ReplayMismatch
			if errors.As(err, &mismatch) {
				return mismatch // it names the step; the run's wrapping adds nothing
			}
			return reportResult(c, asJSON, true, res, err)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the replayed run's result as one JSON object (as run --json)")
	c.Flags().BoolVar(&liveTools, "live-tools", false, "run the plugins directory's approved tools for real instead of replaying their recorded results")
	c.Flags().StringVar(&plugins, "plugins", "plugins", "plugins directory for --live-tools")
	c.Flags().StringVar(&manifest, "manifest", "", "approvals manifest for --live-tools (default: PLUGINS/manifest.json)")
	return c
}
