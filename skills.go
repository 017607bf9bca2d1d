package autoagent

import (
	"context"
	"fmt"

	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/pluginload"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/skills"
	"github.com/autoagent-go/autoagent/trace"
)

// openSkills reads the skills cfg names, and returns them with what no
// tool of the run may reach: their folders, whose words steer the model.
func openSkills(cfg Config) (*skills.Set, []manifest.Protected, error) {
	if len(cfg.Skills) == 0 {
		return nil, nil, nil
	}
	set, err := skills.Open(cfg.Skills, skills.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: Skills: %w", ErrConfig, err)
	}
	var protected []manifest.Protected
	for _, sk := range set.Skills() {
		protected = append(protected, manifest.Protected{Dir: sk.Dir, What: "a skill's folder, whose instructions the model follows"})
	}
	return set, protected, nil
}

// offerSkills adds the skills' tools (list_skills, load_skill,
// read_skill_file), and loads the WebAssembly modules each skill ships in
// its tools/ folder as a plugins directory: approved by sha256 in its
// manifest.json beside them, which counts only once this user trusts it
// (Config.Plugins's trust store, else the default one: a skill's
// manifest came with the skill), pending otherwise. `autoagent tools
// approve` writes and trusts that manifest.
func (rt *Runtime) offerSkills(ctx context.Context, cfg Config, set *skills.Set, tr *trace.Tracer, protected []manifest.Protected) error {
	for _, t := range set.Tools() {
		if err := rt.tools.Add(t); err != nil {
			return fmt.Errorf("%w: Skills: %v", ErrConfig, err)
		}
	}
	for _, sk := range set.Skills() {
		if sk.ToolsDir == "" {
			continue
		}
		opts := plugindir.Options{Dir: sk.ToolsDir}
		if pc := cfg.Plugins; pc != nil {
			opts.Quarantine, opts.Trust = pc.Quarantine, pc.Trust
		}
		if opts.Trust == nil {
			path, err := manifest.DefaultTrustPath()
			if err != nil {
				return fmt.Errorf("skill %s: its tool modules need a trust store: %w", sk.Name, err)
			}
			opts.Trust = &manifest.TrustStore{Path: path, Outside: []string{sk.Dir}}
		}
		if err := rt.ensureHost(ctx, tr, protected); err != nil {
			return err
		}
		d, err := plugindir.Open(ctx, rt.host, opts)
		if err != nil {
			return fmt.Errorf("skill %s: %w", sk.Name, err)
		}
		rt.skillTools = append(rt.skillTools, d)
		fmt.Fprintf(rt.notes, "autoagent: skill %s ships tool modules (%s)\n", termtext.Name(sk.Name), termtext.Name(sk.ToolsDir))
		if err := d.Publish(rt.tools); err != nil {
			fmt.Fprintf(rt.notes, "autoagent: skill %s: %s\n", termtext.Name(sk.Name), termtext.Text(err.Error()))
		}
		pluginload.Report(rt.notes, d.Snapshot())
	}
	return nil
}
