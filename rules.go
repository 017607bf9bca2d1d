package autoagent

import (
	"cmp"
	"fmt"
	"io"

	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/rules"
	"github.com/autoagent-go/autoagent/skills"
	"github.com/autoagent-go/autoagent/trace"
)

// RulesConfig selects the rule files put before the system prompt
// (Config.Rules, package rules). Each is read as instructions, traced
// (rules_loaded: path, sha256) and noted, and no sandboxed tool or
// workspace write may change it.
type RulesConfig struct {
	// Files are rule files someone named, in order.
	Files []string
	// Discover adds the rule file found from Dir ("": the working
	// directory) up to its repository's root: the first of AGENTS.md,
	// .agents/AGENTS.md, CLAUDE.md, .claude/CLAUDE.md (rules.Discover).
	// Off by default: a checkout's file is its authors' instructions.
	Discover bool
	Dir      string
	// MaxBytes bounds each file (0: rules.DefaultMaxBytes, 64 KiB).
	MaxBytes int64
}

// RulesAuto, as a rule file's name (--rules, the agent file's rules),
// turns discovery on.
const RulesAuto = "auto"

// ParseRules reads a list of rule files as the CLI and the agent file
// give it: RulesAuto turns discovery on (from the working directory),
// any other entry is a file, passed through rel.
func ParseRules(list []string, rel func(string) string) RulesConfig {
	var rc RulesConfig
	for _, p := range list {
		if p == RulesAuto {
			rc.Discover = true
			continue
		}
		rc.Files = append(rc.Files, rel(p))
	}
	return rc
}

// loadRules reads the rule files rc names and returns them, with the text
// that goes before the system prompt.
func loadRules(rc RulesConfig, tr *trace.Tracer, notes io.Writer) ([]rules.File, string, error) {
	opts := rules.Options{MaxBytes: rc.MaxBytes}
	var files []rules.File
	for _, p := range rc.Files {
		f, err := rules.Read(p, opts)
		if err != nil {
			return nil, "", fmt.Errorf("%w: Rules: %w", ErrConfig, err)
		}
		files = append(files, f)
	}
	if rc.Discover {
		f, ok, err := rules.Discover(cmp.Or(rc.Dir, "."), opts)
		if err != nil {
			return nil, "", fmt.Errorf("%w: Rules: %w", ErrConfig, err)
		}
		if ok {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, "", nil
	}
	for _, f := range files {
		rules.Trace(tr, f)
		fmt.Fprintf(notes, "autoagent: rules: %s (sha256 %s, %d bytes) read as instructions\n", termtext.Name(f.Path), manifest.Short(f.SHA256), len(f.Text))
	}
	return files, rules.Prompt(files, ""), nil
}

// knowledgePrompt is the system prompt: the rules, the skills' index,
// then system (loop.DefaultSystemPrompt when empty); system alone when
// there are neither.
func knowledgePrompt(rulesText string, set *skills.Set, system string) string {
	var skillsText string
	if set != nil {
		skillsText = set.Prompt()
	}
	if rulesText == "" && skillsText == "" {
		return system
	}
	return rulesText + skillsText + cmp.Or(system, loop.DefaultSystemPrompt)
}

// rulesProtected keeps the rule files out of reach of the run's tools: a
// tool that rewrote one would steer every later run.
func rulesProtected(files []rules.File) []manifest.Protected {
	var out []manifest.Protected
	for _, f := range files {
		out = append(out, manifest.Protected{File: f.Path, What: "a rule file, read as instructions by every run"})
	}
	return out
}
