package sandbox

import (
	"cmp"
	"fmt"
	"path/filepath"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/codemode"
)

// fileKeys are the agent file's keys a Sandbox is built from.
type fileKeys struct {
	Plugins  *filePlugins `yaml:"plugins"`
	CodeMode string       `yaml:"code_mode"`
	// CodeLanguages: "javascript", "python" or "javascript,python".
	CodeLanguages string         `yaml:"code_languages"`
	CreateTool    fileCreateTool `yaml:"create_tool"`
}

type filePlugins struct {
	Dir        string `yaml:"dir"`
	Manifest   string `yaml:"manifest"`
	Quarantine bool   `yaml:"quarantine"`
	NoWatch    bool   `yaml:"no_watch"`
}

type fileCreateTool struct {
	Budget   int    `yaml:"budget"`
	Language string `yaml:"language"`
}

// Keys reads an agent file's plugins, code_mode, code_languages and
// create_tool keys into a *Sandbox (autoagent.Load):
//
//	plugins: {dir: plugins}        # manifest, quarantine, no_watch
//	code_mode: only                # off|also|only
//	code_languages: javascript,python
//	create_tool: {budget: 2, language: js}
//
// A plugins key with no dir means the file's directory's plugins/.
func Keys() autoagent.FeatureKeys { return keys{} }

type keys struct{}

func (keys) Layout() any { return &fileKeys{} }

func (keys) Feature(layout any, dir string) (autoagent.Feature, error) {
	k := layout.(*fileKeys)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	box := &Sandbox{CreateTool: CreateToolConfig{Budget: k.CreateTool.Budget, Language: k.CreateTool.Language}}
	if p := k.Plugins; p != nil {
		box.Plugins = &PluginsConfig{Dir: rel(cmp.Or(p.Dir, "plugins")), Manifest: rel(p.Manifest), Quarantine: p.Quarantine, NoWatch: p.NoWatch}
	}
	var err error
	if box.CodeMode.Mode, err = codemode.ParseMode(k.CodeMode); err != nil {
		return nil, err
	}
	if k.CodeLanguages != "" {
		if box.CodeMode.Languages, err = codemode.ParseLanguages(k.CodeLanguages); err != nil {
			return nil, fmt.Errorf("code_languages: %v", err)
		}
	}
	if box.Plugins == nil && box.CodeMode.Mode == codemode.Off && box.CreateTool.Budget <= 0 {
		return nil, nil // code_mode: off, create_tool with no budget
	}
	return box, nil
}
