package tool

import (
	"slices"
	"time"
)

// Flags are what the loop's guards and policies know about a tool beyond
// its schema.
type Flags struct {
	// Untrusted marks a tool whose results come from outside (web pages,
	// e-mail, files written by others): they are framed as data, not
	// instructions, and taint the run.
	Untrusted bool `json:"untrusted,omitempty"`
	// Egress marks a tool that can send data out of the system (HTTP POST,
	// e-mail, messages). After a run is tainted, egress calls are guarded.
	Egress bool `json:"egress,omitempty"`
	// Idempotent marks a tool that may safely run more than once with the
	// same arguments, so it may start early while the model still streams.
	Idempotent bool `json:"idempotent,omitempty"`
	// Permissions are free-form labels ("filesystem.write", "network")
	// policies can match on.
	Permissions []string `json:"permissions,omitempty"`
	// Timeout, when positive, is the time a call of the tool may take in
	// an agent run, over the run's default (loop's Bounds.ToolTimeout).
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Flagger is implemented by tools that carry [Flags].
type Flagger interface {
	Flags() Flags
}

// FlagsOf returns t's flags, or the zero Flags when t has none.
func FlagsOf(t Tool) Flags {
	if f, ok := t.(Flagger); ok {
		return f.Flags()
	}
	return Flags{}
}

// WithFlags returns t with flags f attached, replacing any it had.
func WithFlags(t Tool, f Flags) Tool {
	if w, ok := t.(*flagged); ok {
		t = w.Tool
	}
	f.Permissions = slices.Clone(f.Permissions)
	return &flagged{Tool: t, flags: f}
}

type flagged struct {
	Tool
	flags Flags
}

func (f *flagged) Flags() Flags { return f.flags }

// Unwrap returns the tool that was given flags.
func (f *flagged) Unwrap() Tool { return f.Tool }
