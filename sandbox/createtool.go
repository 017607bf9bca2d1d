package sandbox

import (
	"cmp"
	"context"
	"io"
	"path/filepath"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/synth"
)

// CreateToolConfig offers the model create_tool (package synth): tools it
// writes run quarantined in the sandbox, with no capabilities; accepted
// ones are staged for a person's approval.
type CreateToolConfig struct {
	// Budget is how many tools the run may write (0: no create_tool).
	Budget int
	// Language is "js" (default) or "go".
	Language string
	// Writer is the model that writes them, a cheaper one for example
	// (providers/catalog.New builds one by name); nil means the runtime's
	// own. The sandbox does not close it.
	Writer llm.Provider
	// WriterModel names the writer's model: "" means the provider's
	// default for Writer, the run's model for the runtime's own.
	WriterModel string
	// Progress receives the builds' progress lines (nil: the runtime's
	// notes).
	Progress io.Writer
	// Ceiling is the most a written tool may be granted (none by
	// default: a tool asking for a capability is refused).
	Ceiling []manifest.Grant
	// StagingDir is where accepted tools are written for review; ""
	// means the plugins directory's staging/ (Plugins.Dir, else
	// ./plugins), from where `autoagent synth promote` moves one in.
	StagingDir string
}

// offerCreateTool adds create_tool: the writer model writes tools that run
// quarantined in the sandbox's host, and the run's budget counts what
// writing them cost.
func (s *Sandbox) offerCreateTool(ctx context.Context, st *autoagent.Setup) error {
	ct := s.CreateTool
	writer, writerModel := st.Provider, cmp.Or(ct.WriterModel, st.Model)
	if ct.Writer != nil {
		writer, writerModel = ct.Writer, ct.WriterModel
	}
	if err := s.ensureHost(ctx, st); err != nil {
		return err
	}
	progress := ct.Progress
	if progress == nil {
		progress = st.Notes
	}
	b, err := synth.New(synth.Options{
		Host: s.host, Writer: writer, Model: writerModel, Language: cmp.Or(ct.Language, "js"), Ceiling: ct.Ceiling,
		Observer: TraceSynth(st.Tracer), Progress: progress,
		// The writer's spend counts against the run whose create_tool
		// call caused it.
		OnUsage:    func(ctx context.Context, u llm.Usage) { loop.ReportUsage(ctx, u) },
		StagingDir: cmp.Or(ct.StagingDir, filepath.Join(pluginsDir(s.Plugins), "staging")),
	})
	if err != nil {
		return err
	}
	s.builder = b
	s.creator = b.CreateTool(st.Tools, synth.CreateToolOptions{Budget: ct.Budget})
	return st.Tools.Add(s.creator)
}
