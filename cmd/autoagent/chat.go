package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"os/signal"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/session"
	"github.com/spf13/cobra"
)

func init() { addCommand(newChatCmd) }

func newChatCmd() *cobra.Command {
	var (
		f           agentFlags
		sf          sessionFlags
		sessionName string
	)
	c := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Talk with the agent interactively (one conversation, tools hot-reloaded)",
		Long: `Talk with the agent: each line you type is a turn of one conversation.

The plugins directory is watched: adding, replacing or removing a .wasm file,
or approving and revoking in the manifest, changes the tools without a
restart. Type /reset to start a new conversation and /exit (or end of input)
to leave. Ctrl-C during a turn cancels that turn; between turns it leaves.
When the input is not a terminal (a script), the exit status is 1 if any
turn failed or stopped on a bound, as run's is.

A call that needs approval (a policy "approve" rule, the trifecta in approve
mode) is shown with its arguments and the reason, and the next line you type
decides: y approves, n refuses, anything else refuses with that as the reason
the model is told.

With --session NAME the conversation is kept in the session store
(--sessions, default ./sessions.db) and continues where it stopped, in this
process or another: each completed turn is appended, and each turn starts
from what the store holds, so two processes chatting in one session see
each other's turns. See "autoagent sessions".

With --json each turn prints one line: the turn's result as run --json
prints it (output, steps, usage, messages, stop_reason). The "> " prompt is
shown only when standard input is a terminal, so piped output is only the
answers.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			key := session.Key{User: sf.user, Session: sessionName}
			if sessionName == "" && c.Flags().Changed("user") {
				return usageError(errors.New("--user scopes a --session: give both"))
			}
			if sessionName != "" {
				if err := key.Validate(); err != nil {
					return usageError(err)
				}
				f.sessions = sf.file
			}
			ctx, cancel := context.WithCancel(c.Context())
			defer cancel()
			s, err := f.newAgent(ctx, c.ErrOrStderr(), true)
			if err != nil {
				return err
			}
			defer s.Close(context.WithoutCancel(ctx))
			store := s.Sessions() // nil without --session
			if sessionName == "" {
				store = nil
			}

			fresh := func() []llm.Message {
				return []llm.Message{llm.SystemText(cmp.Or(s.Agent().System, loop.DefaultSystemPrompt))}
			}
			// stored reads the session's turns, which another process may
			// have added since the last turn.
			stored := func() ([]llm.Message, error) {
				msgs, err := session.Messages(ctx, store, key)
				return append(fresh(), msgs...), err
			}
			history := fresh()
			if store != nil && !f.json {
				if in, err := store.Info(ctx, key); err == nil {
					fmt.Fprintf(c.ErrOrStderr(), "(session %s: %d messages)\n", key, in.Messages)
				}
			}
			in := bufio.NewScanner(c.InOrStdin())
			in.Buffer(make([]byte, 64*1024), 1<<20)
			out := c.OutOrStdout()
			interactive := isTerminal(c.InOrStdin())
			prompt := interactive && !f.json
			// Fed by a script rather than a person, chat's exit status
			// says whether every turn answered, as run's does.
			var turns, failed int
			end := func() error {
				if err := in.Err(); err != nil {
					return err
				}
				if failed > 0 && !interactive {
					return fmt.Errorf("%d of %d turns failed", failed, turns)
				}
				return nil
			}
			for {
				if prompt {
					fmt.Fprint(out, "> ")
				}
				if !in.Scan() {
					if prompt {
						fmt.Fprintln(out)
					}
					return end()
				}
				line := strings.TrimSpace(in.Text())
				switch line {
				case "":
					continue
				case "/exit", "/quit":
					return end()
				case "/reset":
					if store != nil {
						fmt.Fprintf(c.ErrOrStderr(), "autoagent: /reset does not apply to session %s: start another --session, or see autoagent sessions fork|rm\n", key)
						continue
					}
					history = fresh()
					if !f.json {
						fmt.Fprintln(out, "(new conversation)")
					}
					continue
				}
				if store != nil {
					if history, err = stored(); err != nil {
						return err
					}
				}
				msgs := append(append([]llm.Message(nil), history...), llm.UserText(line))
				res, runErr := chatTurn(ctx, c, s.Agent(), f, msgs)
				// A call awaiting approval: ask, then go on with the
				// decisions, as often as the turn asks.
				for res != nil && res.StopReason == loop.StopApprovalRequired && len(res.State.Pending) > 0 {
					opts, ok := askApprovals(c, in, res.State.Pending)
					if !ok {
						return in.Err()
					}
					res, runErr = resumeTurn(ctx, c, s.Agent(), f, res.State, opts)
				}
				if res != nil && res.StopReason == loop.StopDone {
					if store != nil {
						if err := appendTurn(ctx, store, key, line, history, res); err != nil {
							return err
						}
					}
					history = res.Messages
				}
				turns++
				switch {
				case runErr != nil:
					failed++
					fmt.Fprintf(c.ErrOrStderr(), "autoagent: %s\n", termtext.Text(runErr.Error()))
				case res == nil || res.StopReason != loop.StopDone:
					failed++
				}
			}
		},
	}
	f.register(c.Flags())
	sf.register(c.Flags())
	c.Flags().StringVar(&sessionName, "session", "", "keep the conversation in the session store under this name, and continue it")
	c.Flags().StringVar(&f.checkpoint, "checkpoint", "", "save each turn's state to `FILE` after every step (and journal tool calls to FILE.journal), for autoagent resume FILE after a crash")
	return c
}

// appendTurn stores what a completed turn added to the conversation: the
// prompt and what follows it (session.TurnOf: a memory may have compacted
// the history), with a taint note when the run was tainted by what the
// session does not keep (session.TurnToStore).
func appendTurn(ctx context.Context, st session.Store, key session.Key, prompt string, history []llm.Message, res *loop.Result) error {
	turn := session.TurnOf(res.Messages, prompt)
	if turn == nil {
		return fmt.Errorf("session %s: the turn's transcript lost its prompt; nothing stored", key)
	}
	turn = session.TurnToStore(history, turn, res.Tainted)
	if _, err := st.Append(ctx, key, turn...); err != nil {
		return fmt.Errorf("session %s: store the turn: %w", key, err)
	}
	return nil
}

// askApprovals asks the person at the terminal about each pending call:
// the call, its arguments and why it needs approval; "y" approves, "n" (or
// an empty line) rejects, any other answer rejects with it as the reason
// the model is told. It reports false when the input ended.
func askApprovals(c *cobra.Command, in *bufio.Scanner, pending []loop.PendingCall) ([]loop.ResumeOption, bool) {
	var opts []loop.ResumeOption
	for _, p := range pending {
		showPending(c.ErrOrStderr(), p, "")
		fmt.Fprintf(c.ErrOrStderr(), "approve %s? [y / n / a reason to refuse] ", termtext.Name(p.Call.Name))
		if !in.Scan() {
			fmt.Fprintln(c.ErrOrStderr())
			return nil, false
		}
		switch answer := strings.TrimSpace(in.Text()); strings.ToLower(answer) {
		case "y", "yes":
			opts = append(opts, loop.Approve(p.Call.ID))
		case "", "n", "no":
			opts = append(opts, loop.Reject(p.Call.ID, ""))
		default:
			opts = append(opts, loop.Reject(p.Call.ID, answer))
		}
	}
	return opts, true
}

// resumeTurn continues a turn paused for approval with the decisions.
func resumeTurn(ctx context.Context, c *cobra.Command, a *loop.Agent, f agentFlags, st *loop.RunState, opts []loop.ResumeOption) (*loop.Result, error) {
	return turnOf(ctx, c, f,
		func(ctx context.Context) iter.Seq2[loop.Event, error] { return a.StreamResume(ctx, st, opts...) },
		func(ctx context.Context) (*loop.Result, error) { return a.Resume(ctx, st, opts...) })
}

// chatTurn runs one turn; Ctrl-C cancels the turn, not the session.
func chatTurn(ctx context.Context, c *cobra.Command, a *loop.Agent, f agentFlags, msgs []llm.Message) (*loop.Result, error) {
	return turnOf(ctx, c, f,
		func(ctx context.Context) iter.Seq2[loop.Event, error] { return a.StreamMessages(ctx, msgs) },
		func(ctx context.Context) (*loop.Result, error) { return a.RunMessages(ctx, msgs) })
}

// turnOf runs a turn, streamed or not as the flags say, under a context
// Ctrl-C cancels, and prints its result.
func turnOf(ctx context.Context, c *cobra.Command, f agentFlags, stream func(context.Context) iter.Seq2[loop.Event, error], run func(context.Context) (*loop.Result, error)) (*loop.Result, error) {
	turnCtx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	var res *loop.Result
	var err error
	if f.stream {
		res, err = streamRun(f.streamOut(c), c.ErrOrStderr(), stream(turnCtx))
	} else {
		res, err = run(turnCtx)
	}
	if printErr := printResult(c.OutOrStdout(), f.json, !f.stream, res, err); printErr != nil && err == nil {
		err = printErr
	}
	return res, err
}

// isTerminal reports whether rw (a reader or a writer) is a terminal:
// an interactive user.
func isTerminal(rw any) bool {
	if w, ok := rw.(io.Writer); ok {
		rw = rawWriter(w)
	}
	f, ok := rw.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
