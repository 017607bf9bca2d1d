package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// FileProposal is one file of a proposal: its new content, or its
// deletion.
type FileProposal struct {
	Path    string `json:"path" jsonschema:"the file's path, relative to the workspace"`
	Content string `json:"content,omitempty" jsonschema:"the file's whole new content"`
	Delete  bool   `json:"delete,omitempty" jsonschema:"delete the file instead"`
}

// Proposal is a set of file changes applied together.
type Proposal struct {
	Files  []FileProposal `json:"files"`
	Reason string         `json:"reason"`
}

// Validator checks the workspace once a proposal is applied. ok keeps
// the proposal; output (a test log, a compiler's errors) goes back to
// whoever proposed it. An error means the check could not run, which
// rejects the proposal too. The host names the validator; a model never
// does.
type Validator func(ctx context.Context, w *Workspace) (ok bool, output string, err error)

// maxOutput bounds the validator output kept.
const maxOutput = 16 << 10

// Command returns a validator running the program name with args in the
// workspace's directory: exit status 0 passes. Its output (standard
// output and error, at most 16 KiB) is the validator's.
func Command(name string, args ...string) Validator {
	return func(ctx context.Context, w *Workspace) (bool, string, error) {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = w.Dir()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		text := out.String()
		if len(text) > maxOutput {
			text = text[:maxOutput] + "\n[output cut]"
		}
		var ee *exec.ExitError
		switch {
		case err == nil:
			return true, text, nil
		case errors.As(err, &ee):
			return false, text, nil
		}
		return false, text, fmt.Errorf("running %s: %w", name, err)
	}
}

// EvolveResult is the outcome of a proposal.
type EvolveResult struct {
	Kept     bool    // the validator passed and the change stands
	Change   Change  // the proposal, applied as one change
	Rollback *Change // its rollback, when the validator failed
	Output   string  // the validator's output
}

// Evolve applies the proposal as one change, runs validate, and keeps the
// change when it passes; otherwise it rolls the change back and returns
// the validator's output. A rejection is a result (Kept false), not an
// error; an error means the proposal could not be applied or undone.
// Every attempt is journaled, and traced when the workspace has a tracer.
// The validator runs without the journal's lock: a file changed while it
// runs, by another writer, makes a failed proposal's rollback refuse, and
// Evolve returns that error with the validator's output.
func Evolve(ctx context.Context, w *Workspace, p Proposal, validate Validator) (EvolveResult, error) {
	if validate == nil {
		return EvolveResult{}, errors.New("workspace: Evolve needs a validator")
	}
	if len(p.Files) == 0 {
		return EvolveResult{}, errors.New("workspace: the proposal changes no file")
	}
	start := time.Now()
	ch, err := w.applyProposal(WithReason(ctx, p.Reason), p.Files)
	if err != nil {
		return EvolveResult{}, err
	}
	res := EvolveResult{Change: ch}
	ok, out, verr := validate(ctx, w)
	res.Output = out
	if verr != nil {
		res.Output = out + "\nvalidator: " + verr.Error()
	}
	if ok && verr == nil {
		res.Kept = true
	} else {
		rb, err := w.Rollback(WithReason(ctx, fmt.Sprintf("validation of change %d failed", ch.ID)), ch.ID)
		if err != nil {
			w.traceEvolve(ctx, p, res, start, err)
			return res, fmt.Errorf("workspace: the proposal failed validation and could not be rolled back: %w (validator output: %s)", err, res.Output)
		}
		res.Rollback = &rb
	}
	w.traceEvolve(ctx, p, res, start, nil)
	return res, nil
}

// EvolveTrace is the type of the event Evolve traces.
const EvolveTrace trace.Type = "workspace_evolve"

func (w *Workspace) traceEvolve(ctx context.Context, p Proposal, res EvolveResult, start time.Time, err error) {
	if w.tracer == nil {
		return
	}
	f := trace.Fields{"change": res.Change.ID, "kept": res.Kept, "files": len(p.Files), "reason": p.Reason,
		"output": res.Output, "duration_ms": time.Since(start).Milliseconds()}
	if res.Rollback != nil {
		f["rollback"] = res.Rollback.ID
	}
	if err != nil {
		f["error"] = err.Error()
	}
	ev := trace.Event{Type: EvolveTrace, ParentID: trace.SpanFromContext(ctx), Payload: f}
	if ci, ok := loop.CallInfoFrom(ctx); ok {
		ev.RunID = ci.RunID
	}
	w.tracer.Emit(ev)
}

// applyProposal applies files as one change.
func (w *Workspace) applyProposal(ctx context.Context, files []FileProposal) (Change, error) {
	cs := make([]string, len(files))
	seen := map[string]bool{}
	for i, f := range files {
		c, err := w.writable("write", f.Path)
		if err != nil {
			return Change{}, err
		}
		if seen[c] {
			return Change{}, &PathError{Op: "write", Path: f.Path, Err: errors.New("the proposal names the file twice")}
		}
		seen[c] = true
		cs[i] = c
	}
	unlock, err := w.acquire()
	if err != nil {
		return Change{}, err
	}
	defer unlock()
	fcs := make([]FileChange, len(files))
	befores := make([][]byte, len(files))
	total := w.total
	for i, f := range files {
		before, bh, err := w.current(cs[i])
		if err == nil && f.Delete && bh == "" {
			err = ErrNotFound
		}
		if err != nil {
			return Change{}, &PathError{Op: "write", Path: f.Path, Err: err}
		}
		fcs[i] = FileChange{Path: cs[i], Before: bh}
		befores[i] = before
		if f.Delete {
			total -= int64(len(before))
			continue
		}
		if err := w.checkSize(int64(len(f.Content)), int64(len(before))); err != nil {
			return Change{}, &PathError{Op: "write", Path: f.Path, Err: err}
		}
		total += int64(len(f.Content) - len(before))
		if fcs[i].After, err = w.putBlob([]byte(f.Content)); err != nil {
			return Change{}, err
		}
		fcs[i].MadeDirs = w.missingDirs(cs[i])
	}
	if w.maxTotal > 0 && total > w.maxTotal && total > w.total {
		return Change{}, &SizeError{Size: total, Limit: w.maxTotal, Total: true}
	}
	ch := w.newChange(ctx, OpEvolve, fcs)
	err = w.commit(ch, befores, func() error {
		for i, f := range files {
			if f.Delete {
				if err := w.root.Remove(cs[i]); err != nil {
					return w.pathErr(cs[i], err)
				}
			} else if _, err := w.writeFile(cs[i], []byte(f.Content)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Change{}, err
	}
	w.total = total
	return *ch, nil
}

// ProposeOutput is propose_change's result.
type ProposeOutput struct {
	Kept       bool   `json:"kept"`
	ChangeID   int    `json:"change_id"`
	RollbackID int    `json:"rollback_id,omitempty"`
	Output     string `json:"validator_output"`
}

// ProposeChange returns the propose_change tool: the model proposes files
// and a reason, validate (the host's) decides, and a rejected proposal is
// rolled back with the validator's output in the result. Its permission
// is "filesystem.write".
func ProposeChange(w *Workspace, validate Validator) tool.Tool {
	t := tool.Must(tool.New(ProposeTool,
		"Propose a change of several workspace files at once, with the reason for it. The host validates the result: a change that fails validation is undone, and you get the validator's output."+w.allowText(),
		func(ctx context.Context, in Proposal) (ProposeOutput, error) {
			res, err := Evolve(ctx, w, in, validate)
			if err != nil {
				return ProposeOutput{}, err
			}
			out := ProposeOutput{Kept: res.Kept, ChangeID: res.Change.ID, Output: res.Output}
			if res.Rollback != nil {
				out.RollbackID = res.Rollback.ID
			}
			return out, nil
		}))
	return tool.WithFlags(t, tool.Flags{Permissions: []string{"filesystem.write"}})
}
