package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/session"
	"github.com/autoagent-go/autoagent/session/sqlitestore"
)

func init() { addCommand(newSessionsCmd) }

// defaultSessionsFile is where conversations are kept unless --sessions
// says otherwise: beside the plugins directory, like it relative to the
// working directory.
const defaultSessionsFile = "sessions.db"

// sessionFlags locate the session store and scope a command to one user.
type sessionFlags struct {
	file string
	user string
}

func (f *sessionFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.file, "sessions", defaultSessionsFile, "the session store (an SQLite file, created when missing)")
	fs.StringVar(&f.user, "user", "", "the user whose sessions these are (a scope; none by default)")
}

func (f *sessionFlags) open() (*sqlitestore.Store, error) {
	return sqlitestore.Open(f.file, sqlitestore.Options{})
}

// sessionError turns a missing session or an invalid name into a clear
// failure (exit 1) and an invalid name into a usage error.
func sessionError(err error) error {
	if errors.Is(err, session.ErrInvalidKey) {
		return usageError(err)
	}
	return err
}

func newSessionsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, fork, remove, prune and search stored conversations (chat --session)",
		Long: `Conversations that "autoagent chat --session NAME" keeps live in an SQLite
file (--sessions, default ./sessions.db), shared safely by several processes.
Names are scoped by --user (none by default).`,
	}
	c.AddCommand(newSessionsListCmd(), newSessionsShowCmd(), newSessionsForkCmd(), newSessionsRmCmd(),
		newSessionsPruneCmd(), newSessionsSearchCmd())
	return c
}

func newSessionsListCmd() *cobra.Command {
	var (
		f      sessionFlags
		all    bool
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "list [--user U | --all] [--json]",
		Short: "List sessions, most recently updated first",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if all && f.user != "" {
				return usageError(errors.New("--all lists every user's sessions: give it without --user"))
			}
			st, err := f.open()
			if err != nil {
				return err
			}
			defer st.Close()
			list, err := st.List(c.Context(), f.user, all)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.OutOrStdout(), list)
			}
			if len(list) == 0 {
				fmt.Fprintf(c.OutOrStdout(), "no sessions in %s\n", f.file)
				return nil
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SESSION\tMESSAGES\tUPDATED\tFORKED FROM")
			for _, in := range list {
				from := ""
				if in.ForkedFrom != nil {
					from = fmt.Sprintf("%s at %d", in.ForkedFrom, in.ForkedAt)
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", in.Key, in.Messages, in.Updated.Local().Format(time.DateTime), from)
			}
			return tw.Flush()
		},
	}
	f.register(c.Flags())
	c.Flags().BoolVar(&all, "all", false, "every user's sessions")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func newSessionsShowCmd() *cobra.Command {
	var (
		f      sessionFlags
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "show NAME [--user U] [--json]",
		Short: "Print a session's messages",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			st, err := f.open()
			if err != nil {
				return err
			}
			defer st.Close()
			es, err := st.Load(c.Context(), session.Key{User: f.user, Session: args[0]})
			if err != nil {
				return sessionError(err)
			}
			if asJSON {
				return writeJSON(c.OutOrStdout(), es)
			}
			for _, e := range es {
				printEntry(c.OutOrStdout(), e, "")
			}
			return nil
		},
	}
	f.register(c.Flags())
	c.Flags().BoolVar(&asJSON, "json", false, "print the entries as JSON")
	return c
}

// printEntry prints one message as a line or a few: "#seq role: text".
func printEntry(w io.Writer, e session.Entry, prefix string) {
	var parts []string
	if t := e.Message.Text(); t != "" {
		parts = append(parts, t)
	}
	for _, tc := range e.Message.ToolCalls() {
		parts = append(parts, fmt.Sprintf("[calls %s %s]", tc.Name, tc.Arguments))
	}
	for _, tr := range e.Message.ToolResults() {
		parts = append(parts, fmt.Sprintf("[result of %s] %s", tr.Name, tr.Content))
	}
	fmt.Fprintf(w, "%s#%d %s: %s\n", prefix, e.Seq, e.Message.Role, termtext.Name(strings.Join(parts, " ")))
}

func newSessionsForkCmd() *cobra.Command {
	var (
		f      sessionFlags
		at     int64
		toUser string
	)
	c := &cobra.Command{
		Use:   "fork NAME NEW [--at N] [--user U] [--to-user U]",
		Short: "Copy a session's first N messages (all by default) into a new session",
		Args:  cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			if at < 0 {
				return usageError(fmt.Errorf("--at %d: give a message number (1, 2, …) or 0 for all", at))
			}
			st, err := f.open()
			if err != nil {
				return err
			}
			defer st.Close()
			to := session.Key{User: f.user, Session: args[1]}
			if c.Flags().Changed("to-user") {
				to.User = toUser
			}
			in, err := st.Fork(c.Context(), session.Key{User: f.user, Session: args[0]}, at, to)
			if err != nil {
				return sessionError(err)
			}
			fmt.Fprintf(c.OutOrStdout(), "forked %s at message %d into %s\n", in.ForkedFrom, in.ForkedAt, in.Key)
			return nil
		},
	}
	f.register(c.Flags())
	c.Flags().Int64Var(&at, "at", 0, "the last message to copy (0: all)")
	c.Flags().StringVar(&toUser, "to-user", "", "the new session's user (--user's by default)")
	return c
}

func newSessionsRmCmd() *cobra.Command {
	var f sessionFlags
	c := &cobra.Command{
		Use:   "rm NAME... [--user U]",
		Short: "Remove sessions",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			st, err := f.open()
			if err != nil {
				return err
			}
			defer st.Close()
			for _, name := range args {
				k := session.Key{User: f.user, Session: name}
				if err := st.Delete(c.Context(), k); err != nil {
					return sessionError(err)
				}
				fmt.Fprintf(c.OutOrStdout(), "removed %s\n", k)
			}
			return nil
		},
	}
	f.register(c.Flags())
	return c
}

func newSessionsPruneCmd() *cobra.Command {
	var (
		f         sessionFlags
		name      string
		keepLast  int
		olderThan time.Duration
	)
	c := &cobra.Command{
		Use:   "prune [--keep-last N] [--older-than D] [--user U] [--session NAME]",
		Short: "Remove old messages: beyond each session's last N, or older than D (sessions left empty go)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if keepLast < 0 || olderThan < 0 {
				return usageError(errors.New("--keep-last and --older-than must not be negative"))
			}
			if keepLast == 0 && olderThan == 0 {
				return usageError(errors.New("say what to prune: --keep-last N, --older-than D, or both"))
			}
			st, err := f.open()
			if err != nil {
				return err
			}
			defer st.Close()
			opts := session.PruneOptions{User: f.user, Session: name, KeepLast: keepLast}
			if olderThan > 0 {
				opts.Before = time.Now().Add(-olderThan)
			}
			n, err := st.Prune(c.Context(), opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "removed %d messages\n", n)
			return nil
		},
	}
	f.register(c.Flags())
	c.Flags().StringVar(&name, "session", "", "prune this session only")
	c.Flags().IntVar(&keepLast, "keep-last", 0, "keep each session's last N messages")
	c.Flags().DurationVar(&olderThan, "older-than", 0, "remove messages older than this (e.g. 720h)")
	return c
}

func newSessionsSearchCmd() *cobra.Command {
	var (
		f      sessionFlags
		name   string
		limit  int
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "search QUERY [--session NAME] [--user U] [--limit N] [--json]",
		Short: "Find messages by words (BM25), in one session or all of a user's",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if limit < 0 {
				return usageError(fmt.Errorf("--limit %d must not be negative", limit))
			}
			st, err := f.open()
			if err != nil {
				return err
			}
			defer st.Close()
			hits, err := st.Search(c.Context(), session.Key{User: f.user, Session: name}, strings.Join(args, " "), limit)
			if err != nil {
				return sessionError(err)
			}
			if asJSON {
				return writeJSON(c.OutOrStdout(), hits)
			}
			if len(hits) == 0 {
				fmt.Fprintln(c.OutOrStdout(), "no message matches")
			}
			for _, h := range hits {
				printEntry(c.OutOrStdout(), h.Entry, fmt.Sprintf("%s %.2f ", h.Key, h.Score))
			}
			return nil
		},
	}
	f.register(c.Flags())
	c.Flags().StringVar(&name, "session", "", "search this session only (all of --user's by default)")
	c.Flags().IntVar(&limit, "limit", 10, "at most this many messages")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// writeJSON prints v indented.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
