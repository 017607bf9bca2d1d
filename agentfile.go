package autoagent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/manifest"
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
	Plugins    *agentPlugins   `yaml:"plugins"`
	MCP        []agentMCP      `yaml:"mcp"`
	Memory     agentMemory     `yaml:"memory"`
	Policy     string          `yaml:"policy"`
	Trace      string          `yaml:"trace"`
	Record     string          `yaml:"record"`
	Checkpoint string          `yaml:"checkpoint"`
	Sessions   string          `yaml:"sessions"`
	CreateTool agentCreateTool `yaml:"create_tool"`
	CodeMode   string          `yaml:"code_mode"`
	// CodeLanguages: "javascript", "python" or "javascript,python".
	CodeLanguages string          `yaml:"code_languages"`
	Workspace     *agentWorkspace `yaml:"workspace"`
}

// agentWorkspace is the agent file's workspace key (Config.Workspace).
type agentWorkspace struct {
	Dir           string   `yaml:"dir"`
	ReadExt       []string `yaml:"read_ext"`
	WriteExt      []string `yaml:"write_ext"`
	MaxFileBytes  int64    `yaml:"max_file_bytes"`
	MaxTotalBytes int64    `yaml:"max_total_bytes"`
}

type agentBounds struct {
	MaxSteps           int           `yaml:"max_steps"`
	TokenBudget        int64         `yaml:"token_budget"`
	MaxToolResultChars int           `yaml:"max_tool_result_chars"`
	PruneAfter         int           `yaml:"prune_after"`
	MaxRepeatedCalls   int           `yaml:"max_repeated_calls"`
	MaxToolCalls       int           `yaml:"max_tool_calls"`
	ToolTimeout        time.Duration `yaml:"tool_timeout"`
	Trifecta           string        `yaml:"trifecta"`
	ShadowGuards       bool          `yaml:"shadow_guards"`
}

type agentPlugins struct {
	Dir        string `yaml:"dir"`
	Manifest   string `yaml:"manifest"`
	Quarantine bool   `yaml:"quarantine"`
	NoWatch    bool   `yaml:"no_watch"`
}

type agentMCP struct {
	Command []string `yaml:"command"`
	URL     string   `yaml:"url"`
	// Env names variables of this process passed to the server's
	// process: secrets stay in the environment, never in the file.
	Env     []string `yaml:"env"`
	Prefix  string   `yaml:"prefix"`
	Include []string `yaml:"include"`
	Trusted bool     `yaml:"trusted"`
	Egress  bool     `yaml:"egress"`
}

type agentMemory struct {
	Kind        string `yaml:"kind"`
	Dir         string `yaml:"dir"`
	Identity    string `yaml:"identity"`
	MaxMessages int    `yaml:"max_messages"`
}

type agentCreateTool struct {
	Budget   int    `yaml:"budget"`
	Language string `yaml:"language"`
}

// ErrAgentFile is wrapped by Load's errors.
var ErrAgentFile = errors.New("autoagent: agent file")

// secretKey matches keys that would hold a secret in the file.
var secretKey = regexp.MustCompile(`(?i)(^|_)(api_?key|key|token|secret|password|passwd|credential)s?$`)

// unknownField is yaml.v3's message for a key the layout lacks.
var unknownField = regexp.MustCompile(`line (\d+): field (\S+) not found in type`)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// AgentFile is what an agent file describes: the Config, and the session
// store's file, which the program opens itself (session/sqlitestore.Open) and
// gives as Config.Sessions. A provider named backend:NAME is likewise the
// program's to start (providers/remote), in Config.BackendsDir.
type AgentFile struct {
	Config Config
	// Sessions is the session store's file ("" for none).
	Sessions string
}

// Load reads an agent file, YAML or JSON, into an AgentFile:
//
//	provider: anthropic            # a name of ProviderNames, or backend:NAME
//	model: claude-sonnet-4-20250514
//	api_key_env: ANTHROPIC_API_KEY # the key stays in the environment
//	system: You answer questions about orders.
//	bounds: {max_steps: 8, token_budget: 200000, max_tool_calls: 20, tool_timeout: 30s, trifecta: deny}
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
//
// Strict: an unknown key is an error naming its line, and so is a key that
// would hold a secret (api_key, token, password…): secrets are only named,
// as environment variables (api_key_env, mcp env). Relative paths are
// relative to the file's directory. Errors wrap ErrAgentFile.
func Load(path string) (AgentFile, error) {
	cfg, sessions, err := load(path)
	if err != nil {
		return AgentFile{}, err
	}
	return AgentFile{Config: cfg, Sessions: sessions}, nil
}

func load(path string) (Config, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, "", fmt.Errorf("%w: %w", ErrAgentFile, err)
	}
	var f agentFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return Config{}, "", fmt.Errorf("%w %s: the file is empty", ErrAgentFile, path)
		}
		return Config{}, "", agentFileError(path, err)
	}
	if f.Provider == "" {
		return Config{}, "", fmt.Errorf("%w %s: provider is required (%s, or backend:NAME)", ErrAgentFile, path, strings.Join(ProviderNames(), ", "))
	}
	base := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	cfg := Config{
		Provider:    ProviderConfig{Name: f.Provider, Model: f.Model, BaseURL: f.BaseURL, APIKeyEnv: f.APIKeyEnv, ScriptFile: rel(f.Script)},
		BackendsDir: rel(f.Backends),
		System:      f.System,
		Bounds: loop.Bounds{
			MaxSteps: f.Bounds.MaxSteps, TokenBudget: f.Bounds.TokenBudget, MaxToolResultChars: f.Bounds.MaxToolResultChars,
			PruneToolResultsAfter: f.Bounds.PruneAfter, MaxRepeatedToolCalls: f.Bounds.MaxRepeatedCalls,
			MaxToolCalls: f.Bounds.MaxToolCalls, ToolTimeout: f.Bounds.ToolTimeout,
			Trifecta: loop.TrifectaMode(f.Bounds.Trifecta), ShadowGuards: f.Bounds.ShadowGuards,
		},
		PolicyFile:     rel(f.Policy),
		TraceFile:      rel(f.Trace),
		RecordFile:     rel(f.Record),
		CheckpointFile: rel(f.Checkpoint),
		Memory:         MemoryConfig{Kind: f.Memory.Kind, Dir: rel(f.Memory.Dir), Identity: f.Memory.Identity, MaxMessages: f.Memory.MaxMessages},
		CreateTool:     CreateToolConfig{Budget: f.CreateTool.Budget, Language: f.CreateTool.Language},
		Protected:      []manifest.Protected{{File: path, What: "the agent file, which says what the run may do"}},
	}
	if err := cfg.Bounds.Validate(); err != nil {
		return Config{}, "", fmt.Errorf("%w %s: bounds: %v", ErrAgentFile, path, err)
	}
	if cfg.CodeMode.Mode, err = codemode.ParseMode(f.CodeMode); err != nil {
		return Config{}, "", fmt.Errorf("%w %s: %v", ErrAgentFile, path, err)
	}
	if ws := f.Workspace; ws != nil {
		if ws.Dir == "" {
			return Config{}, "", fmt.Errorf("%w %s: workspace: dir is required (the directory the model may write in)", ErrAgentFile, path)
		}
		cfg.Workspace = WorkspaceConfig{Dir: rel(ws.Dir), ReadExt: ws.ReadExt, WriteExt: ws.WriteExt,
			MaxFileBytes: ws.MaxFileBytes, MaxTotalBytes: ws.MaxTotalBytes}
	}
	if f.CodeLanguages != "" {
		if cfg.CodeMode.Languages, err = codemode.ParseLanguages(f.CodeLanguages); err != nil {
			return Config{}, "", fmt.Errorf("%w %s: code_languages: %v", ErrAgentFile, path, err)
		}
	}
	if p := f.Plugins; p != nil {
		cfg.Plugins = &PluginsConfig{Dir: rel(cmp0(p.Dir, "plugins")), Manifest: rel(p.Manifest), Quarantine: p.Quarantine, NoWatch: p.NoWatch}
	}
	for i, m := range f.MCP {
		s := MCPServer{Command: m.Command, URL: m.URL, Prefix: m.Prefix, Include: m.Include, Trusted: m.Trusted, Egress: m.Egress}
		if (len(m.Command) == 0) == (m.URL == "") {
			return Config{}, "", fmt.Errorf("%w %s: mcp[%d]: give a command or a url", ErrAgentFile, path, i)
		}
		for _, name := range m.Env {
			if !envName.MatchString(name) {
				return Config{}, "", fmt.Errorf("%w %s: mcp[%d].env: %q is not a variable name (list the names of variables to pass, never their values)", ErrAgentFile, path, i, name)
			}
			if v, ok := os.LookupEnv(name); ok {
				s.Env = append(s.Env, name+"="+v)
			}
		}
		cfg.MCP = append(cfg.MCP, s)
	}
	return cfg, rel(f.Sessions), nil
}

func cmp0(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// agentFileError turns yaml's errors into ones naming the file and line.
func agentFileError(path string, err error) error {
	msg := err.Error()
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		key := m[2]
		if secretKey.MatchString(key) {
			return fmt.Errorf("%w %s:%s: %q would hold a secret: name the environment variable holding it instead (api_key_env, or an mcp server's env)", ErrAgentFile, path, m[1], key)
		}
		return fmt.Errorf("%w %s:%s: unknown key %q", ErrAgentFile, path, m[1], key)
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
	if m := regexp.MustCompile(`^line (\d+): `).FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%w %s:%s: %s", ErrAgentFile, path, m[1], strings.TrimPrefix(msg, m[0]))
	}
	return fmt.Errorf("%w %s: %s", ErrAgentFile, path, msg)
}
