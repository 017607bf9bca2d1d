package sandbox

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/pluginload"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/trace"
)

// PluginsConfig says where the sandboxed tools of an agent come from.
type PluginsConfig struct {
	// Dir is the plugins directory; "" means ./plugins.
	Dir string
	// Manifest is the approvals file; "" means Dir/manifest.json.
	Manifest string
	// Quarantine loads modules nobody approved, with no grants at all.
	Quarantine bool
	// NoWatch loads the directory once: files and approvals that change
	// later are not picked up (a single run needs no watcher).
	NoWatch bool
	// Trust, when set, makes the manifest's approvals count only while
	// this user's trust store trusts its exact content
	// (plugindir.Options.Trust). Nil trusts the manifest as named: a
	// program that names its manifest made that decision. The autoagent
	// command sets it to manifest.DefaultTrustPath's store, since the
	// manifest it finds in a working directory is the checkout's; set it
	// too when the manifest may come from a checkout (an agent file's).
	Trust *manifest.TrustStore
	// Tracer, when set, receives a trace.SandboxCall event per sandboxed
	// call instead of the runtime's tracer.
	Tracer *trace.Tracer
	// Protected are directories and files no fs grant of a module may
	// reach (host.Options.Protected), beside what the runtime protects,
	// the plugins directory, the manifest's, the host's cache and the kv
	// stores.
	Protected []manifest.Protected
	// Journal opens the journal of a workspace a module's fs.workspace
	// grant names (host.Options.Journal); nil means the runtime's
	// workspaces (WorkspaceJournal of autoagent.Setup.Workspaces).
	Journal func(dir string) (host.Journal, error)
}

// openPlugins makes the host, loads the plugins directory into it,
// publishes its tools and starts the watcher.
func (s *Sandbox) openPlugins(ctx context.Context, st *autoagent.Setup) error {
	pc := *s.Plugins
	pc.Tracer = cmp.Or(pc.Tracer, st.Tracer)
	pc.Protected = append(slices.Clone(pc.Protected), st.Protected...)
	if pc.Journal == nil {
		pc.Journal = WorkspaceJournal(st.Workspaces)
	}
	hopts := HostOptions(pc.Tracer)
	hopts.Protected, hopts.Journal = pc.Protected, pc.Journal
	dopts := plugindir.Options{Dir: pc.Dir, Manifest: pc.Manifest, Quarantine: pc.Quarantine, Trust: pc.Trust}
	var err error
	if s.host, s.dir, err = pluginload.Open(ctx, hopts, dopts); err != nil {
		return fmt.Errorf("plugins %s: %w", pluginsDir(&pc), err)
	}
	if err := s.dir.Publish(st.Tools); err != nil {
		fmt.Fprintf(st.Notes, "autoagent: %s\n", termtext.Text(err.Error()))
	}
	pluginload.Report(st.Notes, s.dir.Snapshot())
	if pc.NoWatch {
		return nil
	}
	notes := st.Notes
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stopWatch = cancel
	s.watching.Add(1)
	go func() {
		defer s.watching.Done()
		for ch, err := range s.dir.Watch(wctx) {
			switch {
			case err != nil:
				fmt.Fprintf(notes, "autoagent: plugins: %s\n", termtext.Text(err.Error()))
			case !ch.Empty():
				fmt.Fprintf(notes, "autoagent: tools changed: +%v -%v ~%v\n", ch.Added, ch.Removed, ch.Replaced)
			}
		}
	}()
	return nil
}
