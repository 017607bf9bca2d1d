package synth

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrNoEngine is wrapped by the error returned when the JavaScript
	// engine module cannot be found; the message says how to build it.
	ErrNoEngine = errors.New("synth: the JavaScript engine is not built")
	// ErrNoToolchain is wrapped when the Go back-end is asked to build but
	// no go command is available.
	ErrNoToolchain = errors.New("synth: no Go toolchain")
	// ErrUnknownLanguage is wrapped when a language has no back-end.
	ErrUnknownLanguage = errors.New("synth: unknown language")
	// ErrBudget is wrapped by create_tool's error result when the run's
	// creation budget is spent.
	ErrBudget = errors.New("synth: tool creation budget exhausted for this run")
	// ErrNoExamples is returned by Synthesize without examples.
	ErrNoExamples = errors.New("synth: no examples")
)

// RejectError says why a tool the model wrote was refused. The text is
// written for the model that wrote the tool: Synthesize feeds it back,
// create_tool returns it as its error result. Stage names the step that
// refused it.
type RejectError struct {
	Stage  Stage
	Reason string

	grant *GrantError
}

func (e *RejectError) Error() string { return fmt.Sprintf("%s: %s", e.Stage, e.Reason) }

// Unwrap returns the *GrantError behind a refusal for capabilities beyond
// the ceiling, so errors.As finds it.
func (e *RejectError) Unwrap() error {
	if e.grant == nil {
		return nil
	}
	return e.grant
}

func reject(stage Stage, format string, args ...any) *RejectError {
	return &RejectError{Stage: stage, Reason: fmt.Sprintf(format, args...)}
}

// Stage is a step of building a tool the model wrote.
type Stage string

// The steps, in order. Each is traced ([Event]) and each can refuse.
const (
	StageWrite    Stage = "write"     // the writer model's answer
	StageScreen   Stage = "screen"    // size and shape of the source, name, grants
	StageBuild    Stage = "build"     // packaging the source as a module
	StageLoad     Stage = "load"      // loading it quarantined
	StageSelfTest Stage = "self_test" // the model's own tests, in the sandbox
	StageRegister Stage = "register"  // adding it to the run's registry
)

// GrantError reports capabilities a tool asked for beyond the host's
// ceiling.
type GrantError struct {
	Requested []string // the grants asked for beyond the ceiling
	Ceiling   []string // what the host allows
}

func (e *GrantError) Error() string {
	allowed := "none"
	if len(e.Ceiling) > 0 {
		allowed = strings.Join(e.Ceiling, ", ")
	}
	return fmt.Sprintf("the tool asks for %s, beyond what this host allows generated tools (%s); write it without them", strings.Join(e.Requested, ", "), allowed)
}
