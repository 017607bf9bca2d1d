// Package sandbox is the WebAssembly side of an autoagent Runtime: one
// WASM host shared by the plugins directory of approved tools, code
// mode's program engines and create_tool. A Sandbox is a Feature
// (autoagent.Config.Features), so only a program that names this
// package links the host (wazero), synth and the engines.
//
//	box := &sandbox.Sandbox{
//		Plugins:  &sandbox.PluginsConfig{Dir: "plugins"}, // tools approved with `autoagent tools approve`
//		CodeMode: sandbox.CodeModeConfig{Mode: codemode.Also},
//	}
//	rt, err := autoagent.New(ctx, autoagent.Config{
//		LLM:      model, // catalog.New(catalog.Config{Name: "openai"})
//		Features: []autoagent.Feature{box},
//	})
//	if err != nil {
//		return err
//	}
//	defer rt.Close(ctx) // closes the sandbox too
//
// A sandboxed module's calls of host tools (tools: grants) and code
// mode's calls pass the run's guards, policy and approvals
// (HostOptions, loop.CallNested). An agent file's plugins, code_mode,
// code_languages and create_tool keys are read by Keys.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/synth"
)

// Sandbox is the runtime's WASM host and what runs in it. Set its fields
// before autoagent.New starts it; a Sandbox starts once, for one Runtime,
// which closes it.
type Sandbox struct {
	// Plugins, when set, loads a plugins directory of approved
	// WebAssembly tools, kept current as files and approvals change
	// unless Plugins.NoWatch. Sandboxed calls are traced, and their
	// calls of host tools gated by the run (HostOptions).
	Plugins *PluginsConfig
	// CodeMode offers the model run_program (package codemode): one
	// program calling the run's tools, each call through the run's gate,
	// run in the sandbox's JavaScript or Python engine. Off by default.
	CodeMode CodeModeConfig
	// CreateTool, when its Budget is positive, offers the model
	// create_tool: it may write that many sandboxed tools for the run.
	CreateTool CreateToolConfig

	mu       sync.Mutex
	started  bool
	host     *host.Host
	dir      *plugindir.Dir
	skills   []*plugindir.Dir // the skills' tools/ folders
	programs []ProgramCloser
	builder  *synth.Builder
	creator  *synth.CreateTool

	stopWatch context.CancelFunc
	watching  sync.WaitGroup
}

var _ autoagent.Feature = (*Sandbox)(nil)

// ErrStarted is returned by Start for a Sandbox that started before:
// make one per Runtime.
var ErrStarted = errors.New("sandbox: this Sandbox has started already (make one per Runtime)")

// Protects is what the sandbox keeps from every sandboxed tool and
// workspace beside what the host protects itself: the plugins directory
// and the manifest's, where a write would add a module and approve it,
// and the directory of the plugins' trust store, where a module able to
// write could trust any manifest.
func (s *Sandbox) Protects() []manifest.Protected {
	if s.Plugins == nil {
		return nil
	}
	// The plugins directory and the manifest's: a run's workspace that
	// holds them must not let the model add a module and approve it
	// (with no trust store, the manifest is the approval). The host
	// refuses fs grants reaching them already (plugindir.Options.Protected).
	out := plugindir.Options{Dir: s.Plugins.Dir, Manifest: s.Plugins.Manifest}.Protected()
	if s.Plugins.Trust != nil {
		out = append(out, manifest.Protected{Dir: filepath.Dir(s.Plugins.Trust.Path),
			What: "the trust store's directory, where a module able to write could trust any manifest"})
	}
	return out
}

// Start makes the host (when a part of the sandbox is set, or a skill
// ships modules), loads the plugins directory and the skills' modules
// (autoagent.Setup.TakeSkillModules), offers create_tool and code mode,
// and adds its Close to st. autoagent.New calls it.
func (s *Sandbox) Start(ctx context.Context, st *autoagent.Setup) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return ErrStarted
	}
	s.started = true
	mods := st.TakeSkillModules()
	if s.Plugins == nil && s.CodeMode.Mode == codemode.Off && s.CreateTool.Budget <= 0 && len(mods) == 0 {
		return nil
	}
	st.OnClose(s.close)
	if s.Plugins != nil {
		if err := s.openPlugins(ctx, st); err != nil {
			return err
		}
	}
	if len(mods) > 0 {
		if err := s.openSkillModules(ctx, st, mods); err != nil {
			return err
		}
	}
	if s.CreateTool.Budget > 0 {
		if err := s.offerCreateTool(ctx, st); err != nil {
			return err
		}
	}
	if s.CodeMode.Mode != codemode.Off {
		if err := s.offerCodeMode(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// Host is the sandbox's WASM host, nil before Start or when no part of
// the sandbox is set.
func (s *Sandbox) Host() *host.Host {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host
}

// Dir is the plugins directory (for serve.Options.Plugins), nil before
// Start or without Plugins.
func (s *Sandbox) Dir() *plugindir.Dir {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir
}

// ensureHost makes the sandbox's host when the plugins directory made
// none: traced, with code mode's calls gated by the run (HostOptions).
func (s *Sandbox) ensureHost(ctx context.Context, st *autoagent.Setup) error {
	if s.host != nil {
		return nil
	}
	opts := HostOptions(st.Tracer)
	opts.Protected = slices.Clone(st.Protected)
	opts.Journal = WorkspaceJournal(st.Workspaces)
	h, err := host.New(ctx, opts)
	if err != nil {
		return err
	}
	s.host = h
	return nil
}

// close stops the watcher and closes create_tool, the engines, the
// plugins directory and the host, in that order.
func (s *Sandbox) close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if s.stopWatch != nil {
		s.stopWatch()
		s.watching.Wait()
	}
	if s.creator != nil {
		s.creator.Close(ctx)
	}
	if s.builder != nil {
		s.builder.Close(ctx)
	}
	for _, p := range s.programs {
		errs = append(errs, p.Close(ctx))
	}
	if s.dir != nil {
		errs = append(errs, s.dir.Close(ctx))
	}
	for _, d := range s.skills {
		errs = append(errs, d.Close(ctx))
	}
	if s.host != nil {
		errs = append(errs, s.host.Close(ctx))
	}
	return errors.Join(errs...)
}

// pluginsDir is the plugins directory p names: its Dir, else ./plugins.
func pluginsDir(p *PluginsConfig) string {
	if p == nil || p.Dir == "" {
		return "plugins"
	}
	return p.Dir
}

// errConfig is an error of a Sandbox that cannot work.
func errConfig(format string, args ...any) error {
	return fmt.Errorf("%w: %s", autoagent.ErrConfig, fmt.Sprintf(format, args...))
}
