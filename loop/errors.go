package loop

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels matched with errors.Is on the error of a run that stopped on a
// bound. The error is a *[StopError] carrying the resumable state.
var (
	ErrMaxSteps         = errors.New("loop: max steps exceeded")
	ErrTokenBudget      = errors.New("loop: token budget exhausted")
	ErrApprovalRequired = errors.New("loop: approval required")
	ErrCancelled        = errors.New("loop: cancelled")
)

// Configuration and durability errors.
var (
	// ErrNoProvider is returned by a run of an Agent without a Provider.
	ErrNoProvider = errors.New("loop: Agent.Provider is nil")
	// ErrCheckpoint is wrapped by the error of a run whose checkpoint
	// callback failed: the run stops, because going on would take side
	// effects the caller could no longer recover from.
	ErrCheckpoint = errors.New("loop: checkpoint failed")
	// ErrJournal is wrapped by the error of a run whose journal could not
	// record a tool call: the call is not executed (or, if the failure came
	// after it ran, the run stops so the outcome is resolved on resume).
	ErrJournal = errors.New("loop: journal failed")
	// ErrBadState is wrapped by the errors of invalid run states.
	ErrBadState = errors.New("loop: invalid run state")
)

// StopError is the error of a run that stopped on a bound, an approval pause
// or cancellation. The run returned a *Result as well; State resumes it.
//
// errors.Is matches it against ErrMaxSteps, ErrTokenBudget,
// ErrApprovalRequired or ErrCancelled according to Reason, and against the
// context's error for a cancellation.
type StopError struct {
	// Reason is the stop reason (never StopDone).
	Reason StopReason
	// Step is the last completed step.
	Step int
	// MaxSteps is the bound that stopped the run (max_steps).
	MaxSteps int
	// TokenBudget and Spent describe a token_budget stop.
	TokenBudget, Spent int64
	// Pending lists the calls awaiting a decision (approval_required).
	Pending []PendingCall
	// State is the resumable state.
	State *RunState
	// Cause is the context's error for a cancellation.
	Cause error
}

func (e *StopError) Error() string {
	switch e.Reason {
	case StopMaxSteps:
		return fmt.Sprintf("loop: max_steps=%d exceeded", e.MaxSteps)
	case StopTokenBudget:
		return fmt.Sprintf("loop: token_budget=%d exceeded (spent=%d)", e.TokenBudget, e.Spent)
	case StopApprovalRequired:
		reasons := make([]string, 0, len(e.Pending))
		for _, p := range e.Pending {
			reasons = append(reasons, fmt.Sprintf("%s (%s): %s", p.Call.Name, p.Call.ID, p.Reason))
		}
		return "loop: approval_required: " + strings.Join(reasons, "; ")
	case StopCancelled:
		if e.Cause != nil {
			return fmt.Sprintf("loop: cancelled after step %d: %v", e.Step, e.Cause)
		}
		return fmt.Sprintf("loop: cancelled after step %d", e.Step)
	}
	return "loop: stopped: " + string(e.Reason)
}

// Is reports whether target is the sentinel of e's reason.
func (e *StopError) Is(target error) bool {
	switch e.Reason {
	case StopMaxSteps:
		return target == ErrMaxSteps
	case StopTokenBudget:
		return target == ErrTokenBudget
	case StopApprovalRequired:
		return target == ErrApprovalRequired
	case StopCancelled:
		return target == ErrCancelled
	}
	return false
}

// Unwrap returns the cause of a cancellation.
func (e *StopError) Unwrap() error { return e.Cause }

// RunError is the error of a run that failed: the provider failed, the
// checkpoint or journal failed, a replay diverged. State holds the state
// after the last completed step, so nothing is lost: fix the cause and
// Resume it.
type RunError struct {
	// Step is the step that failed.
	Step int
	// State is the state after the last completed step.
	State *RunState
	// Err is the cause.
	Err error
}

func (e *RunError) Error() string { return fmt.Sprintf("loop: step %d: %v", e.Step, e.Err) }

// Unwrap returns the cause.
func (e *RunError) Unwrap() error { return e.Err }
