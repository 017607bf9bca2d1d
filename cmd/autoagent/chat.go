package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/spf13/cobra"
)

func init() { addCommand(newChatCmd) }

func newChatCmd() *cobra.Command {
	var f agentFlags
	c := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Talk with the agent interactively (one conversation, tools hot-reloaded)",
		Long: `Talk with the agent: each line you type is a turn of one conversation.

The plugins directory is watched: adding, replacing or removing a .wasm file,
or approving and revoking in the manifest, changes the tools without a
restart. Type /reset to start a new conversation and /exit (or end of input)
to leave. Ctrl-C during a turn cancels that turn; between turns it leaves.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			if f.json {
				return usageError(fmt.Errorf("--json is not available in chat; use run --json"))
			}
			ctx, cancel := context.WithCancel(c.Context())
			defer cancel()
			s, err := f.newSession(ctx, c.ErrOrStderr())
			if err != nil {
				return err
			}
			defer s.Close(context.WithoutCancel(ctx))

			var wg sync.WaitGroup
			if s.plugins != nil {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ch, err := range s.plugins.Watch(ctx) {
						switch {
						case err != nil:
							fmt.Fprintf(c.ErrOrStderr(), "\nautoagent: plugins: %v\n", err)
						case !ch.Empty():
							fmt.Fprintf(c.ErrOrStderr(), "\nautoagent: tools changed: +%v -%v ~%v\n", ch.Added, ch.Removed, ch.Replaced)
						}
					}
				}()
			}
			defer wg.Wait()
			defer cancel()

			fresh := func() []llm.Message {
				return []llm.Message{llm.SystemText(cmp.Or(f.system, loop.DefaultSystemPrompt))}
			}
			history := fresh()
			in := bufio.NewScanner(c.InOrStdin())
			in.Buffer(make([]byte, 64*1024), 1<<20)
			out := c.OutOrStdout()
			for {
				fmt.Fprint(out, "> ")
				if !in.Scan() {
					fmt.Fprintln(out)
					return in.Err()
				}
				line := strings.TrimSpace(in.Text())
				switch line {
				case "":
					continue
				case "/exit", "/quit":
					return nil
				case "/reset":
					history = fresh()
					fmt.Fprintln(out, "(new conversation)")
					continue
				}
				msgs := append(append([]llm.Message(nil), history...), llm.UserText(line))
				res, runErr := chatTurn(ctx, c, s.agent, f.stream, msgs)
				if res != nil && res.StopReason == loop.StopDone {
					history = res.Messages
				}
				if runErr != nil {
					fmt.Fprintf(c.ErrOrStderr(), "autoagent: %v\n", runErr)
				}
			}
		},
	}
	f.register(c.Flags())
	return c
}

// chatTurn runs one turn; Ctrl-C cancels the turn, not the session.
func chatTurn(ctx context.Context, c *cobra.Command, a *loop.Agent, stream bool, msgs []llm.Message) (*loop.Result, error) {
	turnCtx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	if stream {
		return streamRun(c.OutOrStdout(), c.ErrOrStderr(), a.StreamMessages(turnCtx, msgs))
	}
	res, err := a.RunMessages(turnCtx, msgs)
	if res != nil && res.StopReason == loop.StopDone {
		fmt.Fprintln(c.OutOrStdout(), res.Output)
	}
	return res, err
}
