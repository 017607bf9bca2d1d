package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/workspace"
	"github.com/spf13/cobra"
)

func init() { addCommand(newWorkspaceCmd) }

// workspaceFlags are the flags the workspace subcommands share.
type workspaceFlags struct {
	run    string
	change int
	last   bool
	json   bool
}

func newWorkspaceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workspace",
		Short: "List, show, diff and roll back the journaled changes of a workspace (run --workspace DIR)",
	}
	var f workspaceFlags
	sub := func(use, short string, run func(c *cobra.Command, w *workspace.Workspace) error) *cobra.Command {
		s := &cobra.Command{
			Use:   use + " [--run RUN_ID] [--change ID] [--json] DIR",
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				w, err := openWorkspace(args[0])
				if err != nil {
					return err
				}
				defer w.Close()
				return run(c, w)
			},
		}
		s.Flags().StringVar(&f.run, "run", "", "only the changes of this run (rollback: undo all of them)")
		s.Flags().IntVar(&f.change, "change", 0, "only this change (rollback: undo it)")
		s.Flags().BoolVar(&f.json, "json", false, "print JSON: one object per change")
		return s
	}
	log := sub("log", "List the changes, oldest first: id, time, op, path, run, tool, state, reason",
		func(c *cobra.Command, w *workspace.Workspace) error { return workspaceLog(c.OutOrStdout(), w, f) })
	show := sub("show", "Show changes in full: the files each touched, their before- and after-image hashes",
		func(c *cobra.Command, w *workspace.Workspace) error {
			f.json = true
			return workspaceLog(c.OutOrStdout(), w, f)
		})
	diff := sub("diff", "Print changes as unified diffs (--change ID, else every change of --run or of the journal)",
		func(c *cobra.Command, w *workspace.Workspace) error { return workspaceDiff(c.OutOrStdout(), w, f) })
	rollback := sub("rollback", "Undo a change (--change ID), a run's changes (--run RUN_ID) or the newest change (--last); the undoing is a change itself",
		func(c *cobra.Command, w *workspace.Workspace) error {
			return workspaceRollback(c.Context(), c.OutOrStdout(), w, f)
		})
	rollback.Flags().BoolVar(&f.last, "last", false, "undo the newest change that stands")
	cmd.AddCommand(log, show, diff, rollback)
	return cmd
}

// openWorkspace opens the workspace at dir, which must have a journal: the
// CLI does not start one where nothing was journaled.
func openWorkspace(dir string) (*workspace.Workspace, error) {
	if _, err := os.Stat(filepath.Join(dir, workspace.JournalDir)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a workspace: it has no %s directory (a run with --workspace %s makes one)", dir, workspace.JournalDir, dir)
		}
		return nil, err
	}
	return workspace.Open(dir, workspace.Options{})
}

func (f workspaceFlags) filter() workspace.Filter {
	return workspace.Filter{RunID: f.run, ID: f.change}
}

func workspaceLog(out io.Writer, w *workspace.Workspace, f workspaceFlags) error {
	var tw *tabwriter.Writer
	var enc *json.Encoder
	if f.json {
		enc = json.NewEncoder(out)
	} else {
		tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTIME\tOP\tPATH\tRUN\tTOOL\tSTATE\tREASON")
	}
	n := 0
	for c, err := range w.Changes(f.filter()) {
		if err != nil {
			return err
		}
		n++
		if enc != nil {
			if err := enc.Encode(c); err != nil {
				return err
			}
			continue
		}
		p := c.Path
		if c.To != "" {
			p += " -> " + c.To
		}
		if len(c.Files) > 1 && c.To == "" {
			p += fmt.Sprintf(" (+%d)", len(c.Files)-1)
		}
		state := string(c.State)
		if c.RolledBackBy != 0 {
			state = fmt.Sprintf("rolled back by %d", c.RolledBackBy)
		}
		// Paths, reasons and tool names come from models: shown inert.
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.Time.Format("2006-01-02 15:04:05"), c.Op,
			termtext.Name(p), termtext.Name(c.RunID), termtext.Name(c.Tool), state, termtext.Name(c.Reason))
	}
	if tw != nil {
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if n == 0 && (f.run != "" || f.change != 0) {
		return fmt.Errorf("no change matches (see autoagent workspace log %s)", w.Dir())
	}
	return nil
}

func workspaceDiff(out io.Writer, w *workspace.Workspace, f workspaceFlags) error {
	n := 0
	for c, err := range w.Changes(f.filter()) {
		if err != nil {
			return err
		}
		n++
		d, err := w.Diff(c.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "# change %d: %s %s\n%s", c.ID, c.Op, termtext.Name(c.Path), termtext.Text(d))
	}
	if n == 0 {
		return errors.New("no change matches")
	}
	return nil
}

func workspaceRollback(ctx context.Context, out io.Writer, w *workspace.Workspace, f workspaceFlags) error {
	given := 0
	for _, b := range []bool{f.change != 0, f.run != "", f.last} {
		if b {
			given++
		}
	}
	if given != 1 {
		return usageError(errors.New("workspace rollback: give one of --change ID, --run RUN_ID and --last"))
	}
	ctx = workspace.WithReason(ctx, "autoagent workspace rollback")
	var c workspace.Change
	var err error
	switch {
	case f.change != 0:
		c, err = w.Rollback(ctx, f.change)
	case f.run != "":
		c, err = w.RollbackRun(ctx, f.run)
	default:
		c, err = w.RollbackLast(ctx)
	}
	if err != nil {
		return err
	}
	if f.json {
		return json.NewEncoder(out).Encode(c)
	}
	var files []string
	for _, fc := range c.Files {
		files = append(files, termtext.Name(fc.Path))
	}
	fmt.Fprintf(out, "change %d rolled back %s; restored: %s\n", c.ID, idsText(c.Undoes), strings.Join(files, ", "))
	return nil
}

func idsText(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	if len(ids) == 1 {
		return "change " + s[0]
	}
	return "changes " + strings.Join(s, ", ")
}
