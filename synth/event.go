package synth

import (
	"time"

	"github.com/autoagent-go/autoagent/llm"
)

// More steps traced by [Event]s, beside those that can refuse a tool (see
// [Stage]).
const (
	StageShown   Stage = "shown"    // Synthesize: the shown examples ran
	StageHeldOut Stage = "held_out" // Synthesize: the held-out examples ran
	StageAccept  Stage = "accept"   // Synthesize: a tool was accepted
	StageStaging Stage = "staging"  // an accepted tool was written to the staging directory
)

// Event reports one step of building a tool the model wrote. The Builder
// passes one to [Options.Observer] after every step; bridge it to the trace
// package.
//
// An Event never carries a held-out example, only counts.
type Event struct {
	Stage Stage
	// Tool is the tool's name, once known.
	Tool string
	// Language is the back-end's language.
	Language string
	// Attempt is the Synthesize attempt (from 1); 0 outside Synthesize.
	Attempt int
	// Status is "ok", "rejected" (the model's tool was refused; Error says
	// why, as the model is told) or "error" (the infrastructure failed).
	Status string
	Error  string
	// Detail is a short summary: "3 of 3 passed", a staging path.
	Detail string
	// Duration is the step's wall time.
	Duration time.Duration
	// Usage is the writer model's usage (write step), when reported.
	Usage *llm.Usage
	// SHA256 is the module's digest (build, load, staging steps).
	SHA256 string
}

// The statuses of an Event.
const (
	StatusOK       = "ok"
	StatusRejected = "rejected"
	StatusError    = "error"
)
