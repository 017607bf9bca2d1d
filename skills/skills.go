// Package skills reads SKILL.md skill folders and offers them to the
// model by progressive disclosure: it sees each skill's name and
// description, loads a skill's instructions when a task needs them, and
// reads the files beside them, all through tools.
//
//	set, err := skills.Open([]skills.Source{{Dir: "skills"}}, skills.Options{})
//	if err != nil {
//		return err // bad YAML, a huge SKILL.md, two skills of one name…
//	}
//	for _, t := range set.Tools() {
//		registry.Add(t)
//	}
//	system = set.Prompt() + system
//
// # The format
//
// A skill is a folder holding SKILL.md: YAML front matter between "---"
// lines with its name (lowercase letters, digits and hyphens, the
// folder's name) and description, then a markdown body, the skill's
// instructions. Other files beside it (references, examples, scripts)
// are read by the model on demand, through read_skill_file, never
// leaving the folder: "..", absolute paths and symbolic links out are
// refused, as are files over Options.MaxFileBytes.
//
// A skill's scripts never run on the host. A skill may ship WebAssembly
// tool modules in its tools/ folder (Skill.ToolsDir): the runtime loads
// them like any plugins directory's, so they stay pending until someone
// approves their sha256 in the manifest.
//
// # Trust
//
// A skill's body and files are instructions whoever wrote them steers
// the model by. A Source not marked Trusted (a downloaded skill, a
// checkout's) is untrusted content: what the tools return from it is
// framed as data and taints the run (tool.ReportTaint), like an
// untrusted MCP server's results, and its description stays out of the
// system prompt.
package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/autoagent-go/autoagent/internal/safefile"
)

// The defaults of Options.
const (
	DefaultMaxSkillBytes = 256 << 10
	DefaultMaxFileBytes  = 256 << 10
	DefaultMaxSkills     = 100
	// MaxListedFiles bounds the files load_skill lists for one skill.
	MaxListedFiles = 200
)

// File is a skill's instructions file.
const File = "SKILL.md"

// ToolsFolder is the folder of a skill's WebAssembly tool modules.
const ToolsFolder = "tools"

// Errors of Open, wrapped with the file and the reason.
var (
	// ErrFormat: a SKILL.md is not a skill: no front matter, bad YAML, a
	// name or description missing or malformed, not UTF-8.
	ErrFormat = errors.New("skills: malformed SKILL.md")
	// ErrTooLarge: a SKILL.md over Options.MaxSkillBytes.
	ErrTooLarge = errors.New("skills: SKILL.md too large")
	// ErrDuplicate: two skills of one name.
	ErrDuplicate = errors.New("skills: two skills of one name")
	// ErrTooMany: more skills than Options.MaxSkills.
	ErrTooMany = errors.New("skills: too many skills")
)

// Source is a directory of skills: a skill folder itself (it holds
// SKILL.md), or a folder of skill folders.
type Source struct {
	Dir string
	// Trusted reads its skills as the user's own instructions. False
	// makes them untrusted content (see the package doc).
	Trusted bool
}

// Options bound what Open reads and the tools return. The zero value
// works.
type Options struct {
	// MaxSkillBytes bounds a SKILL.md (0: DefaultMaxSkillBytes).
	MaxSkillBytes int64
	// MaxFileBytes bounds a file read_skill_file returns (0:
	// DefaultMaxFileBytes).
	MaxFileBytes int64
	// MaxSkills bounds the skills of all sources (0: DefaultMaxSkills).
	MaxSkills int
}

func (o Options) withDefaults() Options {
	if o.MaxSkillBytes <= 0 {
		o.MaxSkillBytes = DefaultMaxSkillBytes
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxSkills <= 0 {
		o.MaxSkills = DefaultMaxSkills
	}
	return o
}

// Skill is one skill as read.
type Skill struct {
	// Name and Description are the front matter's.
	Name        string
	Description string
	// Body is the markdown after the front matter: the instructions.
	Body string
	// Dir is the skill's folder, absolute.
	Dir string
	// Trusted is its Source's.
	Trusted bool
	// ToolsDir is its tools/ folder when that holds a .wasm module,
	// else "".
	ToolsDir string
}

// nameRE is the skill-name grammar of the SKILL.md format.
var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// The format's bounds on the front matter.
const (
	maxName        = 64
	maxDescription = 1024
)

// Open reads the skills of sources. Any malformed skill fails it, with
// an error naming the file and what to fix: a skills directory is named
// by someone who can fix it.
func Open(sources []Source, opts Options) (*Set, error) {
	opts = opts.withDefaults()
	s := &Set{opts: opts, byName: map[string]*Skill{}}
	for _, src := range sources {
		dirs, err := skillDirs(src.Dir)
		if err != nil {
			return nil, err
		}
		for _, dir := range dirs {
			if len(s.skills) == opts.MaxSkills {
				return nil, fmt.Errorf("%w: more than %d under %s: name fewer directories, or raise Options.MaxSkills", ErrTooMany, opts.MaxSkills, src.Dir)
			}
			sk, err := read(dir, src.Trusted, opts)
			if err != nil {
				return nil, err
			}
			if prev, ok := s.byName[sk.Name]; ok {
				return nil, fmt.Errorf("%w: %q is %s and %s", ErrDuplicate, sk.Name, prev.Dir, sk.Dir)
			}
			s.skills = append(s.skills, sk)
			s.byName[sk.Name] = &s.skills[len(s.skills)-1]
		}
	}
	// byName points into skills: rebuild it now the slice is final.
	for i := range s.skills {
		s.byName[s.skills[i].Name] = &s.skills[i]
	}
	return s, nil
}

// skillDirs returns dir when it is a skill folder, else its
// subdirectories that hold SKILL.md, sorted.
func skillDirs(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	if _, err := os.Lstat(filepath.Join(abs, File)); err == nil {
		return []string{abs}, nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue // a symbolic link to a folder elsewhere is not followed
		}
		if _, err := os.Lstat(filepath.Join(abs, e.Name(), File)); err == nil {
			dirs = append(dirs, filepath.Join(abs, e.Name()))
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("skills: %s holds no skill: want %s/%s, or folders each holding a %s", dir, dir, File, File)
	}
	slices.Sort(dirs)
	return dirs, nil
}

// read reads the skill of dir.
func read(dir string, trusted bool, opts Options) (Skill, error) {
	path := filepath.Join(dir, File)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return Skill{}, fmt.Errorf("skills: %w", err)
	}
	defer root.Close()
	b, err := safefile.ReadIn(root, File, opts.MaxSkillBytes)
	switch {
	case errors.Is(err, safefile.ErrTooLarge):
		return Skill{}, fmt.Errorf("%w: %s is over %d bytes: keep SKILL.md to the instructions, and move reference material into files beside it, which the model reads when it needs them", ErrTooLarge, path, opts.MaxSkillBytes)
	case err != nil:
		return Skill{}, fmt.Errorf("skills: %s: %w", path, err)
	}
	sk, err := parse(b)
	if err != nil {
		return Skill{}, fmt.Errorf("%w: %s: %w", ErrFormat, path, err)
	}
	if base := filepath.Base(dir); sk.Name != base {
		return Skill{}, fmt.Errorf("%w: %s: name %q is not its folder's name %q: rename one", ErrFormat, path, sk.Name, base)
	}
	sk.Dir, sk.Trusted = dir, trusted
	if hasModules(filepath.Join(dir, ToolsFolder)) {
		sk.ToolsDir = filepath.Join(dir, ToolsFolder)
	}
	return sk, nil
}

// hasModules reports whether dir (not a link) holds a .wasm file.
func hasModules(dir string) bool {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return false
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".wasm") {
			return true
		}
	}
	return false
}

// frontMatter is the front matter's layout: the keys the format defines
// beside name and description (license, allowed-tools, metadata…) are
// read and ignored.
type frontMatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// parse reads a SKILL.md's bytes.
func parse(b []byte) (Skill, error) {
	if !utf8.Valid(b) {
		return Skill{}, errors.New("not UTF-8 text")
	}
	text := strings.ReplaceAll(string(bytes.TrimPrefix(b, []byte("\uFEFF"))), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return Skill{}, errors.New(`no front matter: the file must start with a "---" line, then name: and description:, then "---"`)
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		if head, ok = strings.CutSuffix(rest, "\n---"); !ok {
			return Skill{}, errors.New(`the front matter has no closing "---" line`)
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(head), &doc); err != nil {
		return Skill{}, fmt.Errorf("front matter: %w", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return Skill{}, errors.New("front matter: want a mapping with the keys name and description")
	}
	var fm frontMatter
	for i := 0; i+1 < len(doc.Content[0].Content); i += 2 {
		k, v := doc.Content[0].Content[i], doc.Content[0].Content[i+1]
		var dst *string
		switch k.Value {
		case "name":
			dst = &fm.Name
		case "description":
			dst = &fm.Description
		default:
			continue
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return Skill{}, fmt.Errorf("front matter: line %d: %s must be a string", v.Line, k.Value)
		}
		*dst = v.Value
	}
	switch {
	case fm.Name == "":
		return Skill{}, errors.New("front matter: name is missing")
	case len(fm.Name) > maxName || !nameRE.MatchString(fm.Name):
		return Skill{}, fmt.Errorf("front matter: name %q: want at most %d lowercase letters, digits and single hyphens", fm.Name, maxName)
	case strings.TrimSpace(fm.Description) == "":
		return Skill{}, errors.New("front matter: description is missing: say what the skill does and when to use it")
	case utf8.RuneCountInString(fm.Description) > maxDescription:
		return Skill{}, fmt.Errorf("front matter: description is over %d characters", maxDescription)
	}
	return Skill{Name: fm.Name, Description: strings.TrimSpace(fm.Description), Body: strings.TrimSpace(body)}, nil
}

// walkFiles lists the files of sk's folder but SKILL.md, relative, in
// lexical order, at most MaxListedFiles; links are listed, not followed.
// The walk visits at most maxVisited entries, so a folder of countless
// empty directories costs no more than a listing.
func walkFiles(sk *Skill) (files []string, more bool) {
	visited := 0
	filepath.WalkDir(sk.Dir, func(path string, d fs.DirEntry, err error) error {
		if visited++; visited > maxVisited {
			more = true
			return filepath.SkipAll
		}
		if err != nil || d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(sk.Dir, path)
		if err != nil || rel == File {
			return nil
		}
		if len(files) == MaxListedFiles {
			more = true
			return filepath.SkipAll
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	return files, more
}

// maxVisited bounds the entries walkFiles visits.
const maxVisited = 10 * MaxListedFiles
