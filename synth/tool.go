package synth

import (
	"context"
	"slices"
	"sync"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// Tool is a tool the model wrote, loaded quarantined: a [tool.Tool] that
// runs in the sandbox with no capabilities beyond its capped grants. Close
// it (or the Builder) to unload it.
type Tool struct {
	b        *Builder
	draft    Draft
	lang     string
	pkg      *Package
	grants   []manifest.Grant
	loaded   *host.Loaded
	inner    tool.Tool
	closeOne sync.Once
	closeErr error
}

var (
	_ tool.Tool    = (*Tool)(nil)
	_ tool.Flagger = (*Tool)(nil)
)

// Spec returns the tool's spec as the model sees it.
func (t *Tool) Spec() llm.ToolSpec { return t.inner.Spec() }

// Call runs the tool in the sandbox. Like every sandboxed tool, a failure
// of the tool (an exception, a limit) is an error Result; the error is
// non-nil only when the call could not be attempted.
func (t *Tool) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	return t.inner.Call(ctx, c)
}

// Flags returns the flags the host derives from the tool's grants, and
// Untrusted always: a model wrote the tool and no person approved it, so
// what it returns is framed as data and taints the run, whatever its
// grants (a tool written in a tainted run can return that run's
// instructions in a later one).
func (t *Tool) Flags() tool.Flags {
	f := tool.FlagsOf(t.inner)
	f.Untrusted = true
	return f
}

// Name returns the tool's name.
func (t *Tool) Name() string { return t.draft.Name }

// Language returns the language the tool is written in.
func (t *Tool) Language() string { return t.lang }

// Source returns the tool's source code.
func (t *Tool) Source() string { return t.draft.Source }

// Draft returns the tool as the writer model wrote it, after the caller's
// overrides (name, schema, capabilities).
func (t *Tool) Draft() Draft {
	d := t.draft
	d.SelfTests = slices.Clone(d.SelfTests)
	d.Capabilities = slices.Clone(d.Capabilities)
	return d
}

// Package returns the module and its describe document.
func (t *Tool) Package() *Package { return t.pkg }

// SHA256 returns the hex sha256 of the module.
func (t *Tool) SHA256() string { return t.loaded.SHA256() }

// Grants returns the grants the tool runs with (none unless the ceiling
// allowed what it asked for).
func (t *Tool) Grants() []manifest.Grant { return slices.Clone(t.grants) }

// Close unloads the tool; later calls fail.
func (t *Tool) Close(ctx context.Context) error {
	err := t.unload(ctx)
	t.b.untrack(t)
	return err
}

func (t *Tool) unload(ctx context.Context) error {
	t.closeOne.Do(func() { t.closeErr = t.loaded.Close(ctx) })
	return t.closeErr
}
