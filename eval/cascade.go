package eval

import (
	"context"
	"errors"
	"fmt"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
)

// Tier is one level of a cascade: a name for reports and the agent to run.
type Tier struct {
	Name     string
	NewAgent func() (*loop.Agent, error)
}

// TierRun is what one tier did.
type TierRun struct {
	Tier   string
	Result *loop.Result
	Err    error // the run's error, or why the check refused it
	Passed bool
}

// CascadeResult is a cascade's outcome: the runs in tier order, the one
// that passed (nil when none did), and the spend of all of them.
type CascadeResult struct {
	Runs   []TierRun
	Passed *TierRun
	// Usage sums every tier's usage; UsageKnown is false when a tier's
	// provider reported none (then Usage counts only what was reported).
	Usage      llm.Usage
	UsageKnown bool
}

// ErrCascadeExhausted is returned when no tier's answer passed the check.
var ErrCascadeExhausted = errors.New("eval: cascade: no tier's answer passed the check")

// Cascade runs prompt on the cheapest tier first and escalates only when
// check refuses the answer (or the run fails). Every tier's spend is
// counted. A run that pauses for approval stops the cascade: its result is
// returned with the run's error (errors.Is loop.ErrApprovalRequired), never
// routed around to a tier that would not ask.
func Cascade(ctx context.Context, tiers []Tier, prompt string, check func(*loop.Result) error) (*CascadeResult, error) {
	if len(tiers) == 0 {
		return nil, errors.New("eval: cascade: no tiers")
	}
	out := &CascadeResult{UsageKnown: true}
	for _, t := range tiers {
		a, err := t.NewAgent()
		if err != nil {
			return out, fmt.Errorf("eval: cascade tier %s: building the agent: %w", t.Name, err)
		}
		res, runErr := a.Run(ctx, prompt)
		run := TierRun{Tier: t.Name, Result: res, Err: runErr}
		if res != nil {
			out.Usage = out.Usage.Add(res.Usage)
			if !res.UsageReported {
				out.UsageKnown = false
			}
		} else {
			out.UsageKnown = false
		}
		if res != nil && res.StopReason == loop.StopApprovalRequired {
			out.Runs = append(out.Runs, run)
			return out, runErr
		}
		if runErr == nil && res != nil && res.StopReason == loop.StopDone {
			if err := check(res); err != nil {
				run.Err = err
			} else {
				run.Passed = true
			}
		}
		out.Runs = append(out.Runs, run)
		if run.Passed {
			out.Passed = &out.Runs[len(out.Runs)-1]
			return out, nil
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
	}
	return out, ErrCascadeExhausted
}
