package autoagent

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/retrieve"
	"github.com/autoagent-go/autoagent/skills"
)

// agentFile is the agent file's layout (YAML, or JSON, which YAML reads):
// see Load.
type agentFile struct {
	Provider   string          `yaml:"provider"`
	Model      string          `yaml:"model"`
	BaseURL    string          `yaml:"base_url"`
	APIKeyEnv  string          `yaml:"api_key_env"`
	Script     string          `yaml:"script"`
	Backends   string          `yaml:"backends"`
	System     string          `yaml:"system"`
	Bounds     agentBounds     `yaml:"bounds"`
	Memory     agentMemory     `yaml:"memory"`
	Policy     string          `yaml:"policy"`
	Trace      string          `yaml:"trace"`
	Record     string          `yaml:"record"`
	Checkpoint string          `yaml:"checkpoint"`
	Sessions   string          `yaml:"sessions"`
	Workspace  *agentWorkspace `yaml:"workspace"`
	// Rules are rule files; "auto" discovers one (RulesConfig.Discover).
	Rules []string `yaml:"rules"`
	// Skills are skill directories (Config.Skills).
	Skills []agentSkills `yaml:"skills"`
	// Cache is the response cache (Config.Cache).
	Cache *agentCache `yaml:"cache"`
	// Retrieve is retrieval (Config.Retrieval).
	Retrieve *agentRetrieve `yaml:"retrieve"`
}

// agentRetrieve is the retrieve key (RetrievalConfig).
type agentRetrieve struct {
	Dirs        []string `yaml:"dirs"`
	TrustedDirs []string `yaml:"trusted_dirs"`
	Memory      bool     `yaml:"memory"`
	Embeddings  bool     `yaml:"embeddings"`
	K           int      `yaml:"k"`
	Share       float64  `yaml:"share"`
	MaxBytes    int      `yaml:"max_bytes"`
}

// agentCache is the cache key.
type agentCache struct {
	File       string        `yaml:"file"`
	TTL        time.Duration `yaml:"ttl"`
	MaxEntries int           `yaml:"max_entries"`
	MaxBytes   int64         `yaml:"max_bytes"`
}

// agentSkills is one entry of the skills key.
type agentSkills struct {
	Dir     string `yaml:"dir"`
	Trusted bool   `yaml:"trusted"`
}

// featureKeys are the agent file's keys that name a feature with weight,
// each with the package whose Keys reads it (FeatureKeys).
var featureKeys = map[string]string{
	"plugins":        "github.com/autoagent-go/autoagent/sandbox",
	"code_mode":      "github.com/autoagent-go/autoagent/sandbox",
	"code_languages": "github.com/autoagent-go/autoagent/sandbox",
	"create_tool":    "github.com/autoagent-go/autoagent/sandbox",
	"mcp":            "github.com/autoagent-go/autoagent/mcp/mount",
}

// FeatureKeys reads the keys of an agent file that name a feature with
// weight: plugins, code_mode, code_languages and create_tool
// (sandbox.Keys), mcp (mount.Keys). Load takes them as arguments, so a
// program reading such a file links the feature by naming its package.
type FeatureKeys interface {
	// Layout returns a pointer to a new struct whose fields, by their
	// yaml tags, are the top-level keys read. Load decodes the file's
	// keys into it by its own rules: unknown keys, keys that would hold
	// a secret, kinds and lines.
	Layout() any
	// Feature builds the feature from a layout Load filled, nil when it
	// sets nothing to build; relative paths in it are relative to dir,
	// the file's directory. Load calls it only when the file set one of
	// the layout's keys, and adds the feature to Config.Features.
	Feature(layout any, dir string) (Feature, error)
}

// keyError is Load's error for a key of featureKeys that no FeatureKeys
// given reads: an ErrAgentFile, and an ErrConfig.
type keyError struct{ msg string }

func (e keyError) Error() string { return e.msg }

func (e keyError) Is(target error) bool { return target == ErrAgentFile || target == ErrConfig }

// agentWorkspace is the agent file's workspace key (Config.Workspace).
type agentWorkspace struct {
	Dir           string   `yaml:"dir"`
	ReadExt       []string `yaml:"read_ext"`
	WriteExt      []string `yaml:"write_ext"`
	MaxFileBytes  int64    `yaml:"max_file_bytes"`
	MaxTotalBytes int64    `yaml:"max_total_bytes"`
}

// agentBounds is the bounds key: loop.Bounds, each key its JSON name
// (TestAgentFileBoundsAreLoopBounds keeps them the same).
type agentBounds struct {
	MaxSteps              int           `yaml:"max_steps"`
	TokenBudget           int64         `yaml:"token_budget"`
	MaxToolResultChars    int           `yaml:"max_tool_result_chars"`
	PruneToolResultsAfter int           `yaml:"prune_tool_results_after"`
	PruneBatch            int           `yaml:"prune_batch"`
	MaxRepeatedToolCalls  int           `yaml:"max_repeated_tool_calls"`
	TrifectaGuard         string        `yaml:"trifecta_guard"`
	MaxToolCalls          int           `yaml:"max_tool_calls"`
	ToolTimeout           time.Duration `yaml:"tool_timeout"`
	ContextWindow         int64         `yaml:"context_window"`
	ContextShare          float64       `yaml:"context_share"`
	ShadowGuards          bool          `yaml:"shadow_guards"`
}

// deprecatedKeys are the spellings an earlier release read, each with the
// key that replaces it. Load reads them for one release, with a note.
var deprecatedKeys = map[string]string{
	"bounds.prune_after":        "prune_tool_results_after",
	"bounds.max_repeated_calls": "max_repeated_tool_calls",
	"bounds.trifecta":           "trifecta_guard",
}

type agentMemory struct {
	Kind        string `yaml:"kind"`
	Dir         string `yaml:"dir"`
	Identity    string `yaml:"identity"`
	MaxMessages int    `yaml:"max_messages"`
}

// ErrAgentFile is wrapped by Load's errors.
var ErrAgentFile = errors.New("autoagent: agent file")

// secretKey matches keys that would hold a secret in the file.
var secretKey = regexp.MustCompile(`(?i)(^|_)(api_?key|key|token|secret|password|passwd|credential)s?$`)

// AgentFile is what an agent file describes: the Config (with the
// features Load's FeatureKeys built), the provider it names and the
// session store's file. What has weight is the program's to open: the
// provider (providers/catalog.New, or providers/remote for backend:NAME,
// in Config.BackendsDir), given as Config.LLM; the store
// (session/sqlitestore.Open), given as Config.Sessions.
type AgentFile struct {
	Config Config
	// Provider is the provider the file names, with its settings.
	Provider FileProvider
	// Sessions is the session store's file ("" for none).
	Sessions string
	// Deprecated are notes for a person, "FILE:LINE: …", one per key
	// spelled as an earlier release did, naming the key to write instead.
	Deprecated []string
}

// FileProvider is an agent file's provider: its keys provider, model,
// base_url, api_key_env and script (a path made relative to the file's
// directory), in the fields of providers/catalog.Config:
//
//	p := af.Provider
//	model, err := catalog.New(catalog.Config{Name: p.Name, Model: p.Model, BaseURL: p.BaseURL, APIKeyEnv: p.APIKeyEnv, ScriptFile: p.ScriptFile})
type FileProvider struct {
	Name, Model, BaseURL, APIKeyEnv, ScriptFile string
}

// Load reads an agent file, YAML or JSON, into an AgentFile; keys reads
// the keys that name a feature with weight:
//
//	af, err := autoagent.Load("agent.yaml", sandbox.Keys(), mount.Keys())
//
// The file:
//
//	provider: anthropic            # a name of providers/catalog, or backend:NAME
//	model: claude-sonnet-4-20250514
//	api_key_env: ANTHROPIC_API_KEY # the key stays in the environment
//	system: You answer questions about orders.
//	bounds: {max_steps: 8, token_budget: 200000, max_tool_calls: 20, tool_timeout: 30s, trifecta_guard: deny}
//	plugins: {dir: plugins}        # manifest, quarantine, no_watch
//	mcp:
//	  - command: [node, crm-server.js]
//	    env: [CRM_TOKEN]           # passed from this process's environment
//	    prefix: crm_
//	memory: {kind: fact, dir: memory, identity: ada}
//	policy: policy.json
//	trace: trace.jsonl
//	checkpoint: run.state.json
//	sessions: sessions.db
//	code_mode: only                # off|also|only: the model writes programs calling the tools
//	code_languages: javascript,python # the programs' languages (default javascript)
//	rules: [auto, team-rules.md]   # rule files before the system prompt; auto: AGENTS.md… found from the working directory
//	skills: [{dir: skills}, {dir: my-skills, trusted: true}] # SKILL.md folders; untrusted unless marked
//	cache: {file: responses.cache, ttl: 24h} # answer repeated requests from earlier answers
//	retrieve: {dirs: [docs], memory: true, embeddings: true} # passages for each question, one bounded block
//
// bounds takes every field of loop.Bounds under its JSON name
// (prune_tool_results_after, prune_batch, max_repeated_tool_calls,
// trifecta_guard, context_window, context_share, shadow_guards…); the
// spellings prune_after, max_repeated_calls and trifecta are read for one
// release, each with a note in AgentFile.Deprecated.
//
// Strict: an unknown key is an error naming its line, and so is a key that
// would hold a secret (api_key, token, password…): secrets are only named,
// as environment variables (api_key_env, mcp env). A key of plugins, mcp,
// code_mode, code_languages or create_tool that no FeatureKeys given reads
// is an error naming its line and the package that reads it: the feature
// is never dropped. Relative paths are relative to the file's directory.
// Errors wrap ErrAgentFile.
func Load(path string, keys ...FeatureKeys) (AgentFile, error) {
	l := &fileLoader{path: path, keys: keys}
	cfg, sessions, err := l.load()
	if err != nil {
		return AgentFile{}, err
	}
	return AgentFile{Config: cfg, Provider: l.provider, Sessions: sessions, Deprecated: l.deprecated}, nil
}

func (l *fileLoader) load() (Config, string, error) {
	path := l.path
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, "", fmt.Errorf("%w: %w", ErrAgentFile, err)
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Config{}, "", fmt.Errorf("%w %s: the file is empty", ErrAgentFile, path)
		}
		return Config{}, "", syntaxError(path, err)
	}
	if len(doc.Content) == 0 {
		return Config{}, "", fmt.Errorf("%w %s: the file is empty", ErrAgentFile, path)
	}
	var f agentFile
	top := []reflect.Value{reflect.ValueOf(&f).Elem()}
	for _, k := range l.keys {
		v := reflect.ValueOf(k.Layout())
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return Config{}, "", fmt.Errorf("%w: %T: Layout gives %T, want a pointer to a struct", ErrConfig, k, v.Interface())
		}
		top = append(top, v.Elem())
	}
	root := doc.Content[0]
	if root.Kind == yaml.AliasNode {
		root = root.Alias
	}
	if root.Kind != yaml.MappingNode {
		return Config{}, "", l.errorf(root, "the file: want keys and values, got %s", quoted(root))
	}
	if err := l.decodeKeys(root, top, ""); err != nil {
		return Config{}, "", err
	}
	if f.Provider == "" {
		return Config{}, "", fmt.Errorf("%w %s: provider is required (a name of providers/catalog, such as openai or anthropic, or backend:NAME)", ErrAgentFile, path)
	}
	base := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	l.provider = FileProvider{Name: f.Provider, Model: f.Model, BaseURL: f.BaseURL, APIKeyEnv: f.APIKeyEnv, ScriptFile: rel(f.Script)}
	cfg := Config{
		Model:       f.Model,
		BackendsDir: rel(f.Backends),
		System:      f.System,
		Bounds: loop.Bounds{
			MaxSteps: f.Bounds.MaxSteps, TokenBudget: f.Bounds.TokenBudget, MaxToolResultChars: f.Bounds.MaxToolResultChars,
			PruneToolResultsAfter: f.Bounds.PruneToolResultsAfter, PruneBatch: f.Bounds.PruneBatch,
			MaxRepeatedToolCalls: f.Bounds.MaxRepeatedToolCalls, MaxToolCalls: f.Bounds.MaxToolCalls,
			ToolTimeout: f.Bounds.ToolTimeout, Trifecta: loop.TrifectaMode(f.Bounds.TrifectaGuard),
			ContextWindow: f.Bounds.ContextWindow, ContextShare: f.Bounds.ContextShare, ShadowGuards: f.Bounds.ShadowGuards,
		},
		PolicyFile:     rel(f.Policy),
		TraceFile:      rel(f.Trace),
		RecordFile:     rel(f.Record),
		CheckpointFile: rel(f.Checkpoint),
		Memory:         MemoryConfig{Kind: f.Memory.Kind, Dir: rel(f.Memory.Dir), Identity: f.Memory.Identity, MaxMessages: f.Memory.MaxMessages},
		Protected:      []manifest.Protected{{File: path, What: "the agent file, which says what the run may do"}},
	}
	if err := cfg.Bounds.Validate(); err != nil {
		return Config{}, "", fmt.Errorf("%w %s: bounds: %v", ErrAgentFile, path, err)
	}
	if ws := f.Workspace; ws != nil {
		if ws.Dir == "" {
			return Config{}, "", fmt.Errorf("%w %s: workspace: dir is required (the directory the model may write in)", ErrAgentFile, path)
		}
		cfg.Workspace = WorkspaceConfig{Dir: rel(ws.Dir), ReadExt: ws.ReadExt, WriteExt: ws.WriteExt,
			MaxFileBytes: ws.MaxFileBytes, MaxTotalBytes: ws.MaxTotalBytes}
	}
	cfg.Rules = ParseRules(f.Rules, rel)
	if c := f.Cache; c != nil {
		cfg.Cache = &CacheConfig{File: rel(c.File), TTL: c.TTL, MaxEntries: c.MaxEntries, MaxBytes: c.MaxBytes}
	}
	if r := f.Retrieve; r != nil {
		rc := RetrievalConfig{Memory: r.Memory, Embeddings: r.Embeddings, K: r.K, Share: r.Share, MaxBytes: r.MaxBytes}
		for _, d := range r.Dirs {
			rc.Dirs = append(rc.Dirs, rel(d))
		}
		for _, d := range r.TrustedDirs {
			rc.TrustedDirs = append(rc.TrustedDirs, rel(d))
		}
		if !rc.on() {
			return Config{}, "", fmt.Errorf("%w %s: retrieve: name a source (dirs, trusted_dirs or memory: true)", ErrAgentFile, path)
		}
		if err := (retrieve.Config{K: rc.K, Share: rc.Share, MaxBytes: rc.MaxBytes}).Validate(); err != nil {
			return Config{}, "", fmt.Errorf("%w %s: %v", ErrAgentFile, path, err)
		}
		cfg.Retrieval = rc
	}
	for i, sk := range f.Skills {
		if sk.Dir == "" {
			return Config{}, "", fmt.Errorf("%w %s: skills[%d]: dir is required (a skill folder, or a folder of them)", ErrAgentFile, path, i)
		}
		cfg.Skills = append(cfg.Skills, skills.Source{Dir: rel(sk.Dir), Trusted: sk.Trusted})
	}
	for i, k := range l.keys {
		if top[i+1].IsZero() {
			continue
		}
		feat, err := k.Feature(top[i+1].Addr().Interface(), base)
		if err != nil {
			return Config{}, "", fmt.Errorf("%w %s: %v", ErrAgentFile, path, err)
		}
		if feat != nil {
			cfg.Features = append(cfg.Features, feat)
		}
	}
	return cfg, rel(f.Sessions), nil
}

// fileLoader reads one agent file: what it is called, for errors, and
// the notes about deprecated keys it met.
type fileLoader struct {
	path       string
	keys       []FeatureKeys
	deprecated []string
	provider   FileProvider // the file's provider keys
}

// errorf is an error naming the file and the line of n.
func (l *fileLoader) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%w %s:%d: %s", ErrAgentFile, l.path, n.Line, fmt.Sprintf(format, args...))
}

// decode checks n against the layout of v (a struct, a pointer to one, a
// list of them, or a value) and decodes it into v. Every error names the
// line of the node that does not fit: an unknown key, a key that would
// hold a secret, a key given twice, a value of the wrong kind. key is
// where n is ("bounds", "mcp[0]"; "" for the top).
func (l *fileLoader) decode(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	t := v.Type()
	switch {
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		if n.Tag == "!!null" {
			return nil
		}
		v.Set(reflect.New(t.Elem()))
		return l.decode(n, v.Elem(), key)
	case t.Kind() == reflect.Struct && t != reflect.TypeFor[time.Duration]():
		if n.Kind != yaml.MappingNode {
			if n.Tag == "!!null" {
				return nil
			}
			return l.errorf(n, "%s: want keys and values, got %s", cmp.Or(key, "the file"), quoted(n))
		}
		return l.decodeKeys(n, []reflect.Value{v}, key)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		if n.Kind != yaml.SequenceNode {
			return l.errorf(n, "%s: want a list, got %s", key, quoted(n))
		}
		v.Set(reflect.MakeSlice(t, len(n.Content), len(n.Content)))
		for i, item := range n.Content {
			if err := l.decode(item, v.Index(i), fmt.Sprintf("%s[%d]", key, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := n.Decode(v.Addr().Interface()); err != nil {
		return l.errorf(n, "%s: %s is not %s", key, quoted(n), kindOf(t))
	}
	return nil
}

// decodeKeys decodes mapping n into the structs targets, each key into
// the first whose layout has it. key is where n is ("" for the top,
// where the keys of featureKeys are read by the FeatureKeys given).
func (l *fileLoader) decodeKeys(n *yaml.Node, targets []reflect.Value, key string) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		name := k.Value
		full := strings.TrimPrefix(key+"."+name, ".")
		if now, ok := deprecatedKeys[full]; ok {
			l.deprecated = append(l.deprecated, fmt.Sprintf("%s:%d: %s is deprecated: write %s (the old spelling is read for one release)", l.path, k.Line, full, now))
			name, full = now, strings.TrimPrefix(key+"."+now, ".")
		}
		if line, dup := seen[name]; dup {
			return l.errorf(k, "%s is given twice (also on line %d)", full, line)
		}
		seen[name] = k.Line
		var target reflect.Value
		var field reflect.StructField
		found := false
		for _, t := range targets {
			if field, found = yamlField(t.Type(), name); found {
				target = t
				break
			}
		}
		if !found {
			if pkg, ok := featureKeys[full]; ok {
				return keyError{fmt.Sprintf("%s %s:%d: %s names a feature with weight, built by package %s: pass %s.Keys() to autoagent.Load (the autoagent command does)",
					ErrAgentFile, l.path, k.Line, full, pkg, pkg[strings.LastIndex(pkg, "/")+1:])}
			}
			if secretKey.MatchString(name) {
				return l.errorf(k, "%q would hold a secret: name the environment variable holding it instead (api_key_env, or an mcp server's env)", name)
			}
			return l.errorf(k, "unknown key %q", k.Value)
		}
		if err := l.decode(val, target.FieldByIndex(field.Index), full); err != nil {
			return err
		}
	}
	return nil
}

// yamlField is the field of struct type t whose yaml name is name.
func yamlField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// quoted shows a node's value in an error: a scalar quoted, else its kind.
func quoted(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	case yaml.MappingNode:
		return "keys and values"
	case yaml.SequenceNode:
		return "a list"
	}
	return "nothing"
}

// kindOf says what a value of t is written as.
func kindOf(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return "a duration such as 30s or 2m"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return "a whole number"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Slice:
		return "a list of " + kindOf(t.Elem())
	}
	return "text"
}

// lineOf finds the line yaml's syntax errors name: the parser gives no
// node for text it cannot read, only this message.
var lineOf = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError names the file and line of text yaml cannot parse.
func syntaxError(path string, err error) error {
	msg := err.Error()
	if m := lineOf.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%w %s:%s: %s", ErrAgentFile, path, m[1], strings.TrimPrefix(msg, m[0]))
	}
	return fmt.Errorf("%w %s: %s", ErrAgentFile, path, strings.TrimPrefix(msg, "yaml: "))
}
