package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/tool"
)

// Tool names of [Tools] and [ProposeTool].
const (
	ReadFileTool    = "read_file"
	WriteFileTool   = "write_file"
	ListDirTool     = "list_dir"
	ListChangesTool = "list_changes"
	RollbackTool    = "rollback"
	ProposeTool     = "propose_change"
)

// ReadFileInput is read_file's arguments.
type ReadFileInput struct {
	Path string `json:"path" jsonschema:"the file's path, relative to the workspace"`
}

// WriteFileInput is write_file's arguments.
type WriteFileInput struct {
	Path    string `json:"path" jsonschema:"the file's path, relative to the workspace; missing directories are made"`
	Content string `json:"content" jsonschema:"the file's whole new content"`
	Reason  string `json:"reason,omitempty" jsonschema:"why, kept in the workspace's journal"`
}

// ListDirInput is list_dir's arguments.
type ListDirInput struct {
	Path string `json:"path,omitempty" jsonschema:"the directory, relative to the workspace; empty for its root"`
}

// ListChangesInput is list_changes' arguments.
type ListChangesInput struct {
	Path  string `json:"path,omitempty" jsonschema:"only changes of this file"`
	RunID string `json:"run_id,omitempty" jsonschema:"only changes of this run"`
}

// RollbackInput is rollback's arguments: one of them.
type RollbackInput struct {
	ChangeID int    `json:"change_id,omitempty" jsonschema:"the change to undo, as list_changes shows it"`
	RunID    string `json:"run_id,omitempty" jsonschema:"undo every change of this run"`
	Last     bool   `json:"last,omitempty" jsonschema:"undo the newest change"`
}

// ChangeSummary is a change as the tools show it.
type ChangeSummary struct {
	ID           int    `json:"id"`
	Op           Op     `json:"op"`
	Path         string `json:"path"`
	To           string `json:"to,omitempty"`
	Files        int    `json:"files"`
	RunID        string `json:"run_id,omitempty"`
	Tool         string `json:"tool,omitempty"`
	Time         string `json:"time"`
	Reason       string `json:"reason,omitempty"`
	State        State  `json:"state"`
	RolledBackBy int    `json:"rolled_back_by,omitempty"`
	Undoes       []int  `json:"undoes,omitempty"`
}

// Summary is c as the tools and the CLI's log --json show it.
func (c Change) Summary() ChangeSummary {
	return ChangeSummary{ID: c.ID, Op: c.Op, Path: c.Path, To: c.To, Files: len(c.Files), RunID: c.RunID, Tool: c.Tool,
		Time: c.Time.Format("2006-01-02T15:04:05Z"), Reason: c.Reason, State: c.State, RolledBackBy: c.RolledBackBy, Undoes: c.Undoes}
}

// ListChangesOutput is list_changes' result.
type ListChangesOutput struct {
	Changes []ChangeSummary `json:"changes"`
	// Omitted counts the older changes left out.
	Omitted int `json:"omitted,omitempty"`
}

// maxListed bounds the changes list_changes shows: the newest.
const maxListed = 100

// Tools returns the tools over w: read_file, list_dir and list_changes
// (untrusted: what they return was written by others; idempotent), and
// write_file and rollback (permission "filesystem.write", for policies
// and approvals). A refusal of the fence is a result the model reads; an
// error of the journal too, as the tool's failure.
func Tools(w *Workspace) []tool.Tool {
	read := tool.Must(tool.New(ReadFileTool,
		"Read a text file of the workspace.",
		func(ctx context.Context, in ReadFileInput) (string, error) {
			b, err := w.Read(in.Path)
			if err != nil {
				return "", err
			}
			if !utf8.Valid(b) {
				return "", fmt.Errorf("%s is not UTF-8 text (%d bytes)", in.Path, len(b))
			}
			return string(b), nil
		}))
	write := tool.Must(tool.New(WriteFileTool,
		"Write a file of the workspace, replacing its content. Every write is journaled and can be rolled back."+w.allowText(),
		func(ctx context.Context, in WriteFileInput) (string, error) {
			if in.Reason != "" {
				ctx = WithReason(ctx, in.Reason)
			}
			c, err := w.Write(ctx, in.Path, []byte(in.Content))
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("wrote %s (%d bytes): change %d", c.Path, len(in.Content), c.ID), nil
		}))
	list := tool.Must(tool.New(ListDirTool,
		"List a directory of the workspace.",
		func(ctx context.Context, in ListDirInput) (string, error) {
			p := in.Path
			if p == "" {
				p = "."
			}
			es, err := w.List(p)
			if err != nil {
				return "", err
			}
			if len(es) == 0 {
				return "(empty)", nil
			}
			var b strings.Builder
			for _, e := range es {
				switch {
				case e.Dir:
					fmt.Fprintf(&b, "%s/\n", e.Name)
				case e.Special:
					fmt.Fprintf(&b, "%s (not a regular file)\n", e.Name)
				default:
					fmt.Fprintf(&b, "%s\t%d bytes\n", e.Name, e.Size)
				}
			}
			return b.String(), nil
		}))
	changes := tool.Must(tool.New(ListChangesTool,
		"List the journaled changes of the workspace, oldest first (the newest 100).",
		func(ctx context.Context, in ListChangesInput) (ListChangesOutput, error) {
			out := ListChangesOutput{Changes: []ChangeSummary{}}
			for c, err := range w.Changes(Filter{Path: in.Path, RunID: in.RunID}) {
				if err != nil {
					return ListChangesOutput{}, err
				}
				out.Changes = append(out.Changes, c.Summary())
			}
			if n := len(out.Changes) - maxListed; n > 0 {
				out.Omitted, out.Changes = n, out.Changes[n:]
			}
			return out, nil
		}))
	rollback := tool.Must(tool.New(RollbackTool,
		"Undo a change of the workspace (change_id), every change of a run (run_id), or the newest change (last). The undoing is a change too, and can be undone.",
		func(ctx context.Context, in RollbackInput) (string, error) {
			var c Change
			var err error
			switch {
			case in.ChangeID != 0 && in.RunID == "" && !in.Last:
				c, err = w.Rollback(ctx, in.ChangeID)
			case in.RunID != "" && in.ChangeID == 0 && !in.Last:
				c, err = w.RollbackRun(ctx, in.RunID)
			case in.Last && in.ChangeID == 0 && in.RunID == "":
				c, err = w.RollbackLast(ctx)
			default:
				return "", errors.New("give exactly one of change_id, run_id and last")
			}
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("rolled back %s: change %d (%d files restored)", idList(c.Undoes), c.ID, len(c.Files)), nil
		}))
	reads := tool.Flags{Untrusted: true, Idempotent: true, Permissions: []string{"filesystem.read"}}
	writes := tool.Flags{Permissions: []string{"filesystem.write"}}
	return []tool.Tool{
		tool.WithFlags(read, reads),
		tool.WithFlags(write, writes),
		tool.WithFlags(list, reads),
		tool.WithFlags(changes, reads),
		tool.WithFlags(rollback, writes),
	}
}

// allowText tells the model the write allowlist, "" when there is none.
func (w *Workspace) allowText() string {
	if w.writeExt == nil {
		return ""
	}
	if len(w.writeExt) == 0 {
		return " No file may be written."
	}
	return " Only files ending in " + strings.Join(w.writeExt, ", ") + " may be written."
}
