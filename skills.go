package autoagent

import (
	"fmt"
	"io"

	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/skills"
)

// SkillModules are the WebAssembly modules a skill ships in its tools/
// folder (skills.Skill.ToolsDir). The root does not load them: the
// sandbox feature does (package sandbox), as a plugins directory whose
// manifest.json counts only once this user's trust store trusts it.
type SkillModules struct {
	// Skill is the skill's name, SkillDir its folder.
	Skill    string
	SkillDir string
	// Dir is its tools/ folder: the modules and the skill's manifest.
	Dir string
}

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
// read_skill_file) and returns the modules the skills ship, for the
// feature that loads them (Setup.TakeSkillModules).
func (rt *Runtime) offerSkills(set *skills.Set) ([]SkillModules, error) {
	for _, t := range set.Tools() {
		if err := rt.tools.Add(t); err != nil {
			return nil, fmt.Errorf("%w: Skills: %v", ErrConfig, err)
		}
	}
	var mods []SkillModules
	for _, sk := range set.Skills() {
		if sk.ToolsDir != "" {
			mods = append(mods, SkillModules{Skill: sk.Name, SkillDir: sk.Dir, Dir: sk.ToolsDir})
		}
	}
	return mods, nil
}

// TakeSkillModules returns the WebAssembly modules the run's skills ship,
// for the feature that loads them (the sandbox), once: a second call
// returns nil. New notes the modules no feature took, so a program
// without the sandbox learns where they would load, not silence.
func (s *Setup) TakeSkillModules() []SkillModules {
	mods := s.skillModules
	s.skillModules = nil
	return mods
}

// noteSkillModules tells a person about the skill modules no feature
// loaded: they load with the sandbox.
func noteSkillModules(notes io.Writer, mods []SkillModules) {
	for _, m := range mods {
		fmt.Fprintf(notes, "autoagent: skill %s ships WebAssembly modules (%s), not loaded: they load with the sandbox (package sandbox's Sandbox in Config.Features; the autoagent command adds it)\n",
			termtext.Name(m.Skill), termtext.Name(m.Dir))
	}
}
