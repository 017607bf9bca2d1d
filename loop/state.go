package loop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
)

// stateVersion is the version of the RunState JSON this package writes and
// reads.
const stateVersion = 1

// RunState is everything needed to continue a run: the transcript, the step
// counter, the spend, the taint, and the calls of an unfinished turn with
// their decisions. It is what checkpoints hold, what a stopped run returns,
// and what [Agent.Resume] takes. Its JSON form is versioned ("version": 1).
//
// A state handed out by the loop shares message storage with the run that
// produced it: treat it as read-only, or [RunState.Clone] it first.
type RunState struct {
	Version int `json:"version"`
	// RunID identifies the run across pauses, crashes and resumes; journal
	// entries and idempotency keys are bound to it.
	RunID string `json:"run_id"`
	// Step is the number of completed model calls.
	Step int `json:"step"`
	// Corrections counts post-turn hook corrections; TurnStart is where the
	// current turn (since the last correction) starts in Messages.
	Corrections int `json:"corrections"`
	TurnStart   int `json:"turn_start"`
	// Usage is the spend so far (cached tokens included); HaveUsage is false
	// while nothing has been reported.
	Usage     llm.Usage `json:"usage"`
	HaveUsage bool      `json:"have_usage"`
	// OutputRetries counts the answers sent back for not matching
	// Agent.Structured.Schema.
	OutputRetries int `json:"output_retries,omitempty"`
	// Revealed are the tools find_tools made callable (tool search).
	Revealed []string `json:"revealed,omitempty"`
	// ToolCalls counts the tool calls of the model that were run or
	// refused by a guard, the policy or a person (Bounds.MaxToolCalls).
	ToolCalls int `json:"tool_calls,omitempty"`
	// Tainted is set once untrusted content entered the run; it never
	// clears.
	Tainted bool `json:"tainted"`
	// Messages is the transcript.
	Messages []llm.Message `json:"messages"`

	// Pending lists the calls of the last turn awaiting approval.
	Pending []PendingCall `json:"pending,omitempty"`
	// Decisions are the human decisions given for the calls of the last
	// turn, by call id; they are kept until the turn's tools have run, so a
	// crash after approving never asks twice nor loses a rejection.
	Decisions map[string]Decision `json:"decisions,omitempty"`
	// Completed holds the results of calls of the last turn that already
	// ran when the run stopped mid-turn (a cancellation), so Resume does not
	// run them again.
	Completed []llm.ToolResult `json:"completed,omitempty"`
	// Nested is the record of the calls the last turn's tools made
	// through CallNested, kept when the turn stopped before its end: a
	// tool that runs again on resume gets these calls' results instead of
	// making them again (see CallNested).
	Nested []NestedCall `json:"nested,omitempty"`
	// Subruns are the states of sub-agents' runs (AsTool, Delegate) that
	// paused inside a call of the last turn, by "<call id>/<key>": on
	// resume the sub-agent continues its run, with the decisions given
	// for its calls.
	Subruns map[string]*RunState `json:"subruns,omitempty"`
	// Status is the reason the run stopped, "" while it is running.
	Status StopReason `json:"status,omitempty"`
}

// Clone returns a deep copy of s.
func (s *RunState) Clone() *RunState {
	c := *s
	c.Messages = make([]llm.Message, len(s.Messages))
	for i, m := range s.Messages {
		c.Messages[i] = m.Clone()
	}
	c.Pending = slices.Clone(s.Pending)
	for i := range c.Pending {
		c.Pending[i].Call.Arguments = slices.Clone(c.Pending[i].Call.Arguments)
	}
	c.Decisions = maps.Clone(s.Decisions)
	c.Completed = slices.Clone(s.Completed)
	c.Nested = slices.Clone(s.Nested)
	for i := range c.Nested {
		c.Nested[i].Call.Arguments = slices.Clone(c.Nested[i].Call.Arguments)
		c.Nested[i].Structured = slices.Clone(c.Nested[i].Structured)
	}
	if s.Subruns != nil {
		c.Subruns = make(map[string]*RunState, len(s.Subruns))
		for k, sub := range s.Subruns {
			c.Subruns[k] = sub.Clone()
		}
	}
	return &c
}

// snapshot returns a copy of s that shares message storage (messages are
// never modified once appended) but not the slices the loop appends to.
func (s *RunState) snapshot() *RunState {
	c := *s
	c.Messages = slices.Clip(s.Messages)
	c.Pending = slices.Clone(s.Pending)
	c.Decisions = maps.Clone(s.Decisions)
	c.Completed = slices.Clone(s.Completed)
	c.Nested = slices.Clone(s.Nested)
	c.Subruns = maps.Clone(s.Subruns)
	return &c
}

// PendingTurn returns the tool calls of the last assistant message that
// have no result yet: the turn a resume will execute first. It is empty
// when the transcript does not end in such a turn.
func (s *RunState) PendingTurn() []llm.ToolCall {
	last := -1
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if s.Messages[i].Role == llm.RoleAssistant {
			last = i
			break
		}
		if s.Messages[i].Role != llm.RoleTool {
			return nil
		}
	}
	if last < 0 {
		return nil
	}
	calls := s.Messages[last].ToolCalls()
	if len(calls) == 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, m := range s.Messages[last+1:] {
		for _, r := range m.ToolResults() {
			answered[r.CallID] = true
		}
	}
	if len(answered) == len(calls) {
		return nil
	}
	if len(answered) != 0 {
		// A turn is appended whole; a partial one means the state was edited.
		return nil
	}
	return calls
}

// Validate reports the first structural problem of s. Errors wrap
// ErrBadState.
func (s *RunState) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadState, fmt.Sprintf(format, args...))
	}
	if s.Version != stateVersion {
		return bad("version %d is not supported (this build reads version %d)", s.Version, stateVersion)
	}
	if s.Step < 0 || s.Corrections < 0 {
		return bad("negative step or corrections")
	}
	if s.TurnStart < 0 || s.TurnStart > len(s.Messages) {
		return bad("turn_start %d is outside the %d messages", s.TurnStart, len(s.Messages))
	}
	for i, m := range s.Messages {
		if err := m.Validate(); err != nil {
			return bad("messages[%d]: %v", i, err)
		}
	}
	switch s.Status {
	case "", StopDone, StopMaxSteps, StopTokenBudget, StopApprovalRequired, StopCancelled:
	default:
		return bad("unknown status %q", s.Status)
	}
	turn := map[string]bool{}
	for _, c := range s.PendingTurn() {
		turn[c.ID] = true
	}
	for _, p := range s.Pending {
		if !inTurn(turn, p.Call.ID) {
			return bad("pending call %q is not an unanswered call of the last turn", p.Call.ID)
		}
	}
	for id := range s.Decisions {
		if !inTurn(turn, id) {
			return bad("decision for %q, which is not an unanswered call of the last turn", id)
		}
	}
	for _, r := range s.Completed {
		if !turn[r.CallID] {
			return bad("completed result for %q, which is not an unanswered call of the last turn", r.CallID)
		}
	}
	for _, n := range s.Nested {
		if !strings.Contains(n.Call.ID, "/") || !inTurn(turn, n.Call.ID) {
			return bad("nested call %q was not made by a call of the last turn", n.Call.ID)
		}
	}
	for k, sub := range s.Subruns {
		if !strings.Contains(k, "/") || !inTurn(turn, k) {
			return bad("sub-run %q does not belong to a call of the last turn", k)
		}
		if sub == nil {
			return bad("sub-run %q is null", k)
		}
		if err := sub.Validate(); err != nil {
			return fmt.Errorf("sub-run %q: %w", k, err)
		}
	}
	return nil
}

// inTurn reports whether id is a call of the turn, or a call one of them
// made through CallNested ("<call id>/<n>", at any depth).
func inTurn(turn map[string]bool, id string) bool {
	for {
		if turn[id] {
			return true
		}
		i := strings.LastIndexByte(id, '/')
		if i < 0 {
			return false
		}
		id = id[:i]
	}
}

// DecodeState parses and validates a RunState from JSON. Unknown fields are
// refused, so a state written by a newer build is never half-read.
func DecodeState(data []byte) (*RunState, error) {
	var s RunState
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadState, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the state object", ErrBadState)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// LoadState reads a RunState file written by [SaveState] (or a
// [FileStore]).
func LoadState(path string) (*RunState, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loop: %w", err)
	}
	s, err := DecodeState(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// SaveState writes s to path atomically (a temporary file in the same
// directory, synced, then renamed), so a crash leaves the old state or the
// new one, never half of one. The file has mode 0600: states hold the
// transcript.
func SaveState(path string, s *RunState) error {
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("loop: encoding state: %w", err)
	}
	return writeFileAtomic(path, data)
}
