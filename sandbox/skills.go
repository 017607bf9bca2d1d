package sandbox

import (
	"context"
	"fmt"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/pluginload"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
)

// openSkillModules loads the WebAssembly modules each skill ships in its
// tools/ folder as a plugins directory, loaded once (no watcher):
// approved by sha256 in its manifest.json beside them, which counts only
// once this user trusts it (Plugins.Trust, else the default trust store:
// a skill's manifest came with the skill, so it never counts as named),
// pending otherwise. Plugins.Quarantine applies to them too. `autoagent
// tools approve` writes and trusts that manifest.
func (s *Sandbox) openSkillModules(ctx context.Context, st *autoagent.Setup, mods []autoagent.SkillModules) error {
	if err := s.ensureHost(ctx, st); err != nil {
		return err
	}
	for _, m := range mods {
		opts := plugindir.Options{Dir: m.Dir}
		if pc := s.Plugins; pc != nil {
			opts.Quarantine, opts.Trust = pc.Quarantine, pc.Trust
		}
		if opts.Trust == nil {
			path, err := manifest.DefaultTrustPath()
			if err != nil {
				return fmt.Errorf("skill %s: its tool modules need a trust store: %w", m.Skill, err)
			}
			opts.Trust = &manifest.TrustStore{Path: path, Outside: []string{m.SkillDir}}
		}
		d, err := plugindir.Open(ctx, s.host, opts)
		if err != nil {
			return fmt.Errorf("skill %s: %w", m.Skill, err)
		}
		s.skills = append(s.skills, d)
		fmt.Fprintf(st.Notes, "autoagent: skill %s ships tool modules (%s)\n", termtext.Name(m.Skill), termtext.Name(m.Dir))
		if err := d.Publish(st.Tools); err != nil {
			fmt.Fprintf(st.Notes, "autoagent: skill %s: %s\n", termtext.Name(m.Skill), termtext.Text(err.Error()))
		}
		pluginload.Report(st.Notes, d.Snapshot())
	}
	return nil
}
