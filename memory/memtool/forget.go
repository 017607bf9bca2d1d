package memtool

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/tool"
)

// ForgetInput is the forget tool's arguments.
type ForgetInput struct {
	Instruction string  `json:"instruction" jsonschema:"what to forget, in plain language, e.g. the user's old address"`
	ConfirmIDs  []int64 `json:"confirm_ids,omitempty" jsonschema:"after a dry run and the user's confirmation: the ids to erase"`
}

// ForgetOutput is the forget tool's result.
type ForgetOutput struct {
	// Erased reports that facts were erased by this call.
	Erased bool `json:"erased"`
	// PendingConfirmation reports a dry run that found facts to erase.
	PendingConfirmation bool         `json:"pending_confirmation,omitempty"`
	Count               int          `json:"count"`
	Facts               []StoredFact `json:"facts"`
	// NextStep tells the model what to do after a dry run.
	NextStep string `json:"next_step,omitempty"`
}

// Forget returns the forget tool over f; see the package documentation for
// the confirmation protocol.
func Forget(f memory.Forgetter, opts Options) (tool.Tool, error) {
	if f == nil {
		return nil, errors.New("memtool: Forget needs a memory")
	}
	if err := opts.fill(); err != nil {
		return nil, err
	}
	pending := &pendingSet{}
	desc := "Erase facts from long-term memory that an instruction in plain language describes (for example when the user asks you to forget something). "
	if opts.ForgetImmediately {
		desc += "Erasure is immediate and cannot be undone."
	} else {
		desc += "A call with only an instruction erases nothing: it lists what would be erased. Show that list to the user and, once they confirm, call again with confirm_ids."
	}
	t, err := tool.New(opts.ForgetName, desc, func(ctx context.Context, in ForgetInput) (ForgetOutput, error) {
		if len(in.ConfirmIDs) > 0 {
			if opts.ForgetImmediately {
				return ForgetOutput{}, errors.New("confirm_ids is not needed: this tool erases immediately; call it with an instruction only")
			}
			proposed, err := pending.take(in.ConfirmIDs)
			if err != nil {
				return ForgetOutput{}, err
			}
			out := ForgetOutput{Facts: []StoredFact{}}
			var missing []string
			for i, id := range in.ConfirmIDs {
				ok, err := f.Forget(ctx, id)
				if err != nil {
					return out, fmt.Errorf("erasing fact %d failed (%d erased before it): %w", id, out.Count, err)
				}
				if !ok {
					missing = append(missing, fmt.Sprint(id))
					continue
				}
				out.Count++
				// As the dry run showed it: the record is gone now.
				out.Facts = append(out.Facts, proposed[i])
				if proposed[i].Tainted {
					tool.ReportTaint(ctx)
				}
			}
			out.Erased = out.Count > 0
			if len(missing) > 0 {
				out.NextStep = "Already gone: " + strings.Join(missing, ", ") + "."
			}
			return out, nil
		}
		recs, err := f.ForgetMatching(ctx, in.Instruction, !opts.ForgetImmediately)
		if err != nil {
			return ForgetOutput{}, err
		}
		out := ForgetOutput{Count: len(recs), Facts: make([]StoredFact, 0, len(recs))}
		for _, r := range recs {
			out.Facts = append(out.Facts, shown(ctx, r, opts))
		}
		switch {
		case opts.ForgetImmediately:
			out.Erased = len(recs) > 0
		case len(recs) == 0:
			out.NextStep = "Nothing in memory matches; nothing was erased."
		default:
			pending.add(out.Facts)
			out.PendingConfirmation = true
			out.NextStep = "Nothing was erased yet. Show these facts to the user and ask for confirmation; if they agree, call " + opts.ForgetName + " again with confirm_ids set to the ids they approved."
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return tool.WithFlags(t, tool.Flags{Permissions: []string{"memory.write"}}), nil
}
