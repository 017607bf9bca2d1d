package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/mattn/go-isatty"

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
to leave. Ctrl-C during a turn cancels that turn; between turns it leaves.

With --json each turn prints one line: the turn's result as run --json
prints it (output, steps, usage, messages, stop_reason). The "> " prompt is
shown only when standard input is a terminal, so piped output is only the
answers.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
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
			prompt := isTerminal(c.InOrStdin()) && !f.json
			for {
				if prompt {
					fmt.Fprint(out, "> ")
				}
				if !in.Scan() {
					if prompt {
						fmt.Fprintln(out)
					}
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
					if !f.json {
						fmt.Fprintln(out, "(new conversation)")
					}
					continue
				}
				msgs := append(append([]llm.Message(nil), history...), llm.UserText(line))
				res, runErr := chatTurn(ctx, c, s.agent, f, msgs)
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
func chatTurn(ctx context.Context, c *cobra.Command, a *loop.Agent, f agentFlags, msgs []llm.Message) (*loop.Result, error) {
	turnCtx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	var res *loop.Result
	var err error
	if f.stream {
		res, err = streamRun(f.streamOut(c), c.ErrOrStderr(), a.StreamMessages(turnCtx, msgs))
	} else {
		res, err = a.RunMessages(turnCtx, msgs)
	}
	if printErr := printResult(c.OutOrStdout(), f.json, !f.stream, res); printErr != nil && err == nil {
		err = printErr
	}
	return res, err
}

// isTerminal reports whether r is a terminal (an interactive user).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
