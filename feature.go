package autoagent

import (
	"context"
	"io"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/autoagent-go/autoagent/workspace"
)

// A Feature is a part of a Runtime with weight of its own, built by the
// package that owns the weight and given in Config.Features: the
// sandbox's plugins, code mode and create_tool (package sandbox), MCP
// servers (package mcp/mount). The root imports none of them.
type Feature interface {
	// Protects returns the files and directories of the feature that no
	// sandboxed tool and no workspace may reach (nil for none). New and
	// Config.Protects call it before any feature starts; it must not
	// block or fail.
	Protects() []manifest.Protected
	// Start adds the feature to the Runtime New is building: its tools
	// to s.Tools, its closers to s.OnClose. New calls it once, in
	// Config.Features order, after the Go tools, the workspace, policy,
	// checkpoint and recording, and before memory. s is valid during
	// the call only. An error fails New, which then closes what the
	// features started so far registered.
	Start(ctx context.Context, s *Setup) error
}

// Setup is the Runtime under construction, as a Feature's Start sees it.
type Setup struct {
	// Agent is the runtime's agent; a feature may set what it owns
	// (code mode sets Agent.CodeMode).
	Agent *loop.Agent
	// Tools is the registry the agent calls.
	Tools *tool.Registry
	// Provider is the run's model, Model its model's name ("" for the
	// provider's default).
	Provider llm.Provider
	Model    string
	// Tracer receives the run's events; nil traces nothing.
	Tracer *trace.Tracer
	// Protected is Config.Protects: what the runtime and every feature
	// protect, to give to a WASM host (host.Options.Protected).
	Protected []manifest.Protected
	// Workspaces is the runtime's set of workspaces: its own and those a
	// module's fs.workspace grant opens, journaled alike.
	Workspaces *workspace.Set
	// Notes receives what the runtime tells a person (never nil).
	Notes io.Writer

	closers      []func(context.Context) error
	skillModules []SkillModules // TakeSkillModules
}

// OnClose adds a closer Runtime.Close calls: the features' closers run
// last registered first, before the runtime closes its own files. New
// calls them too when it fails after the closer was added.
func (s *Setup) OnClose(close func(context.Context) error) {
	s.closers = append(s.closers, close)
}
