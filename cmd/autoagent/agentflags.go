package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/mcp/mount"
	"github.com/autoagent-go/autoagent/providers/catalog"
	"github.com/autoagent-go/autoagent/providers/remote"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/session/sqlitestore"
	"github.com/autoagent-go/autoagent/skills"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/autoagent-go/autoagent/trace/otel/otlp"
	"github.com/autoagent-go/autoagent/workspace"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// agentFlags are the flags `run` and `chat` share (docs/ARCHITECTURE.md §8).
type agentFlags struct {
	// inEval: the runtime is eval's, whose runs are independent trials
	// (refusedInEval); an agent file's cache is refused as --cache is.
	inEval bool

	provider, model, baseURL, apiKeyEnv, script string
	plugins, manifest                           string
	quarantine, stream, json                    bool
	system                                      string
	maxSteps                                    int
	tokenBudget                                 int64
	traceFile                                   string
	backends                                    string

	// Governance and durability (issue 8).
	policy, record   string
	trifecta         string
	shadowGuards     bool
	maxResultChars   int
	pruneAfter       int
	maxRepeatedCalls int
	maxToolCalls     int
	toolTimeout      time.Duration

	// agent is an agent file (autoagent.Load); fs tells which flags were
	// given, which override it.
	agent string
	fs    *pflag.FlagSet

	sessions     string // the session store, for chat --session
	promptCache  bool
	outputSchema string
	otel         bool
	toolGrants   []string

	// MCP servers and memory.
	mcpCommands, mcpURLs []string
	memory, memoryDir    string
	checkpoint           string

	// Tools the model writes (issue 7).
	createTool                  int
	toolLang                    string
	writerProvider, writerModel string
	writerScript                string

	// Code mode (issue 39).
	codeMode     string
	codeLanguage string

	// The workspace (package workspace).
	workspace, workspaceReadExt, workspaceWriteExt string

	// What the agent knows (issue 45).
	rules                 []string
	skills, trustedSkills []string
	cache                 string
	cacheTTL              time.Duration
	retrieve              []string
	trustedRetrieve       []string
	retrieveMemory        bool
	retrieveEmbeddings    bool
}

func (f *agentFlags) register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.agent, "agent", "", "agent file (YAML or JSON: provider, model, system, bounds, plugins, mcp, memory, policy, trace, sessions); flags given override it")
	fs.StringVar(&f.provider, "provider", "openai", "model provider: "+strings.Join(catalog.Names(), "|")+", or backend:NAME for a go-plugin backend binary autoagent-provider-NAME")
	fs.StringVar(&f.model, "model", "", "model name (default: the provider's default model)")
	fs.StringVar(&f.baseURL, "base-url", "", "provider endpoint (required for openai-compatible, e.g. http://localhost:11434/v1)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "", "environment variable holding the API key (default per provider: "+defaultKeyVars()+")")
	fs.StringVar(&f.script, "script", "", "script file played by --provider scripted (offline, for demos and tests)")
	fs.StringVar(&f.plugins, "plugins", "plugins", "plugins directory of sandboxed .wasm tools")
	fs.StringVar(&f.manifest, "manifest", "", "approvals manifest (default: PLUGINS/manifest.json)")
	fs.BoolVar(&f.quarantine, "quarantine", false, "also load modules nobody approved, with no grants at all")
	fs.BoolVar(&f.stream, "stream", false, "print the answer as it arrives (on stderr with --json), with tool calls on stderr")
	fs.BoolVar(&f.json, "json", false, "print the run's result as one JSON object (output, steps, usage, messages, stop_reason)")
	fs.StringVar(&f.system, "system", "", "system prompt (default: the agent's built-in prompt)")
	fs.IntVar(&f.maxSteps, "max-steps", 0, "maximum model calls in the run (default 8)")
	fs.Int64Var(&f.tokenBudget, "token-budget", 0, "stop the run once input+output tokens reach N (default: no budget)")
	fs.StringVar(&f.traceFile, "trace", "", "append the run's trace events to FILE.jsonl")
	fs.StringVar(&f.backends, "backends", "", "backends directory for --provider backend:NAME (default $AUTOAGENT_BACKENDS, else ~/.config/autoagent/backends; never the working directory's unless named)")
	fs.StringVar(&f.policy, "policy", "", "JSON tool policy (allow/deny/approve rules) consulted before every tool call")
	fs.StringVar(&f.record, "record", "", "record model responses and tool results to `FILE.jsonl` (secrets redacted) for autoagent replay")
	fs.StringVar(&f.trifecta, "trifecta", "deny", "once untrusted content entered the run, calls to egress tools are: deny|approve|off")
	fs.BoolVar(&f.shadowGuards, "shadow-guards", false, "trace what the loop and trifecta guards would refuse without enforcing it")
	fs.IntVar(&f.maxResultChars, "max-tool-result-chars", 0, "cut each tool result the model sees to N characters, keeping head and tail (default: no cut)")
	fs.IntVar(&f.pruneAfter, "prune-after", 0, "keep only the N most recent tool results in full in what the model is sent (default: keep all)")
	fs.IntVar(&f.maxToolCalls, "max-tool-calls", 0, "cap the run's tool calls at N: past it tools are disabled and the model is asked to answer (default: no cap)")
	fs.DurationVar(&f.toolTimeout, "tool-timeout", 0, "end a tool call that takes longer than D (e.g. 30s) with an error result (default: no limit; sandboxed tools keep their own)")
	fs.IntVar(&f.maxRepeatedCalls, "max-repeated-calls", 0, "refuse a call repeated with the same arguments more than N times (default: no loop guard)")
	fs.StringArrayVar(&f.mcpCommands, "mcp", nil, "mount the tools of an MCP server started with this command line (split like a shell would; repeatable); untrusted: their results taint the run")
	fs.StringArrayVar(&f.mcpURLs, "mcp-url", nil, "mount the tools of an MCP server at this streamable-HTTP URL (repeatable); untrusted, like --mcp")
	fs.StringVar(&f.memory, "memory", "", "memory of the conversation: buffer|summarizing|fact (fact keeps what the user said across runs, in --memory-dir)")
	fs.StringVar(&f.memoryDir, "memory-dir", "", "directory of the fact memory's store (default: facts held in memory only)")
	fs.BoolVar(&f.otel, "otel", false, "export the run's spans over OTLP/HTTP to the endpoint of the OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) variable, default http://localhost:4318")
	fs.StringVar(&f.outputSchema, "output-schema", "", "JSON Schema `FILE` the answer must match: the answer is validated (sent back when it does not match) and printed as JSON; --json adds \"structured\"")
	fs.BoolVar(&f.promptCache, "prompt-cache", false, "ask the provider to cache repeated prompt prefixes (Anthropic's cache_control; others cache by themselves)")
	fs.StringArrayVar(&f.toolGrants, "tool-grant", nil, "a grant tools written by --create-tool may receive, e.g. net:api.example.com (repeatable; default: none)")
	fs.IntVar(&f.createTool, "create-tool", 0, "offer the model create_tool: it may write up to N sandboxed tools (no capabilities) for this run; accepted ones are staged in PLUGINS/staging (--plugins)")
	fs.StringVar(&f.toolLang, "tool-lang", "js", "language of the tools create_tool writes: js|go")
	fs.StringVar(&f.writerProvider, "writer-provider", "", "provider of the model that writes create_tool's tools, e.g. a cheaper one (default: --provider)")
	fs.StringVar(&f.writerModel, "writer-model", "", "model that writes create_tool's tools (default: --model with the same provider, else that provider's default)")
	fs.StringVar(&f.writerScript, "writer-script", "", "script played by a scripted writer (--writer-provider scripted)")
	fs.StringVar(&f.workspace, "workspace", "", "give the model read_file, write_file, list_dir, list_changes and rollback fenced to `DIR`, every write journaled (autoagent workspace log|diff|rollback DIR)")
	fs.StringVar(&f.workspaceReadExt, "workspace-read-ext", "", "extensions the workspace's files may be read with, e.g. md,json,log (default: any)")
	fs.StringVar(&f.workspaceWriteExt, "workspace-write-ext", "", "extensions the workspace's files may be written with, e.g. md (default: any)")
	fs.StringVar(&f.codeMode, "code-mode", "off", "offer the model run_program, a JavaScript program calling the tools (each call through the same checks and approvals): off|also (beside the tools)|only (instead of them)")
	fs.StringArrayVar(&f.rules, "rules", nil, "put a rule `FILE` before the system prompt, read as instructions (repeatable); auto: the first of AGENTS.md, .agents/AGENTS.md, CLAUDE.md, .claude/CLAUDE.md from the working directory up to the repository's root (off unless asked: a checkout's file is its authors' instructions)")
	fs.StringArrayVar(&f.skills, "skills", nil, "offer the model the SKILL.md skills of `DIR` (a skill folder, or a folder of them; repeatable) through list_skills, load_skill and read_skill_file; untrusted: what they say is framed as data and taints the run; their tools/*.wasm modules stay pending until approved")
	fs.StringArrayVar(&f.trustedSkills, "trusted-skills", nil, "like --skills, for skills you wrote: read as instructions, their descriptions in the system prompt")
	fs.StringVar(&f.cache, "cache", "", "answer a request the model was sent before, exactly, from its answer kept in `FILE` (secrets redacted), with no provider call; hits and the tokens saved are in the trace (default: no cache; use only a cache file you wrote)")
	fs.StringArrayVar(&f.retrieve, "retrieve", nil, "before each model call, put passages of the text files of `DIR` relevant to the question before the model, in one block within its share of the context budget (repeatable); untrusted: framed as data, they taint the run; binary, huge and linked-out files are skipped with a note")
	fs.StringArrayVar(&f.trustedRetrieve, "trusted-retrieve", nil, "like --retrieve, for documents you wrote: not framed, no taint; no tool may write in `DIR`")
	fs.BoolVar(&f.retrieveMemory, "retrieve-memory", false, "retrieve from the fact memory (--memory fact) and the stored sessions (--session) too")
	fs.BoolVar(&f.retrieveEmbeddings, "retrieve-embeddings", false, "rank what --retrieve and --trusted-retrieve index by the provider's embeddings too, fused with BM25 (openai, its presets and gemini; default: BM25 alone)")
	fs.DurationVar(&f.cacheTTL, "cache-ttl", 0, "how long a --cache answer is reused, e.g. 1h (default 24h; -1s: for ever)")
	fs.StringVar(&f.codeLanguage, "code-language", "javascript", "languages of code mode's programs: javascript, python (needs the Python engine: `make python-engine`, $AUTOAGENT_PY_ENGINE) or javascript,python")
}

// defaultKeyVars lists each provider's default key variable, from the
// provider table.
func defaultKeyVars() string {
	var vars []string
	for _, name := range catalog.Names() {
		if v := catalog.DefaultAPIKeyEnv(name); v != "" {
			vars = append(vars, v)
		}
	}
	return strings.Join(vars, ", ")
}

func (f *agentFlags) validate() error {
	if f.maxSteps < 0 {
		return usageError(fmt.Errorf("--max-steps must be 0 or more, got %d", f.maxSteps))
	}
	if f.tokenBudget < 0 {
		return usageError(fmt.Errorf("--token-budget must be 0 or more, got %d", f.tokenBudget))
	}
	if err := f.bounds().Validate(); err != nil {
		return usageError(err)
	}
	if f.createTool < 0 {
		return usageError(fmt.Errorf("--create-tool must be 0 or more, got %d", f.createTool))
	}
	switch f.memory {
	case "", "buffer", "summarizing", "fact":
	default:
		return usageError(fmt.Errorf("--memory %q: want buffer, summarizing or fact", f.memory))
	}
	if f.memoryDir != "" && f.memory != "fact" {
		return usageError(errors.New("--memory-dir holds the fact memory's store: give --memory fact"))
	}
	if len(f.toolGrants) > 0 && f.createTool == 0 {
		return usageError(errors.New("--tool-grant is the ceiling of the tools --create-tool writes: give --create-tool N"))
	}
	if _, err := codemode.ParseMode(f.codeMode); err != nil {
		return usageError(fmt.Errorf("--code-mode: %v", err))
	}
	if _, err := codemode.ParseLanguages(f.codeLanguage); err != nil {
		return usageError(fmt.Errorf("--code-language: %v", err))
	}
	if m, _ := codemode.ParseMode(f.codeMode); m == codemode.Off && f.agent == "" && f.codeLanguage != "javascript" {
		return usageError(errors.New("--code-language is the language of code mode's programs: give --code-mode also or only too"))
	}
	if f.toolLang != "js" && f.toolLang != "go" {
		return usageError(fmt.Errorf("--tool-lang %q: want js or go", f.toolLang))
	}
	return nil
}

// bounds are the run's limits from the flags.
func (f *agentFlags) bounds() loop.Bounds {
	return loop.Bounds{
		MaxSteps:              f.maxSteps,
		TokenBudget:           f.tokenBudget,
		MaxToolResultChars:    f.maxResultChars,
		PruneToolResultsAfter: f.pruneAfter,
		MaxRepeatedToolCalls:  f.maxRepeatedCalls,
		MaxToolCalls:          f.maxToolCalls,
		ToolTimeout:           f.toolTimeout,
		Trifecta:              loop.TrifectaMode(f.trifecta),
		ShadowGuards:          f.shadowGuards,
	}
}

// agentConfig is what the flags and an agent file describe: the runtime's
// Config and, as data until newAgent builds them, its features with
// weight, so that flags given lay over the file's.
type agentConfig struct {
	autoagent.Config
	provider   catalog.Config  // built by newAgent into Config.LLM
	writer     *catalog.Config // create_tool's writer, when not the run's model
	plugins    *sandbox.PluginsConfig
	codeMode   sandbox.CodeModeConfig
	createTool sandbox.CreateToolConfig
	mcp        mount.Servers
}

// features builds the features the config describes: the sandbox, the
// MCP servers.
func (c *agentConfig) features() []autoagent.Feature {
	fs := []autoagent.Feature{&sandbox.Sandbox{Plugins: c.plugins, CodeMode: c.codeMode, CreateTool: c.createTool}}
	if len(c.mcp) > 0 {
		fs = append(fs, c.mcp)
	}
	return fs
}

// config maps the flags onto the runtime's Config: all the wiring is the
// facade's (autoagent.New) and the features'.
func (f *agentFlags) config(stderr io.Writer) (agentConfig, error) {
	cfg := agentConfig{provider: catalog.Config{
		Name: f.provider, Model: f.model, BaseURL: f.baseURL, APIKeyEnv: f.apiKeyEnv, ScriptFile: f.script,
		PromptCaching: f.promptCache,
	}, Config: autoagent.Config{
		Model:          f.model,
		BackendsDir:    f.backends,
		System:         f.system,
		Bounds:         f.bounds(),
		PolicyFile:     f.policy,
		TraceFile:      f.traceFile,
		RecordFile:     f.record,
		CheckpointFile: f.checkpoint,
		Memory:         autoagent.MemoryConfig{Kind: f.memory, Dir: f.memoryDir},
		Notes:          stderr,
		Rules:          autoagent.ParseRules(f.rules, func(p string) string { return p }),
		Retrieval: autoagent.RetrievalConfig{Dirs: f.retrieve, TrustedDirs: f.trustedRetrieve,
			Memory: f.retrieveMemory, Embeddings: f.retrieveEmbeddings},
	}}
	if f.cache != "" {
		cfg.Cache = &autoagent.CacheConfig{File: f.cache, TTL: f.cacheTTL}
	} else if f.cacheTTL != 0 {
		if f.agent == "" {
			return cfg, usageError(errors.New("--cache-ttl is how long --cache FILE's answers are reused: give --cache FILE"))
		}
		cfg.Cache = &autoagent.CacheConfig{TTL: f.cacheTTL} // for the agent file's cache (overrides)
	}
	for _, d := range f.trustedSkills {
		cfg.Skills = append(cfg.Skills, skills.Source{Dir: d, Trusted: true})
	}
	for _, d := range f.skills {
		cfg.Skills = append(cfg.Skills, skills.Source{Dir: d})
	}
	if m, err := codemode.ParseMode(f.codeMode); err == nil {
		cfg.codeMode.Mode = m
	}
	if f.workspace == "" && f.agent == "" && (f.workspaceReadExt != "" || f.workspaceWriteExt != "") {
		return cfg, usageError(errors.New("--workspace-read-ext and --workspace-write-ext need --workspace DIR"))
	}
	cfg.Workspace = autoagent.WorkspaceConfig{Dir: f.workspace,
		ReadExt: workspace.ParseExts(f.workspaceReadExt), WriteExt: workspace.ParseExts(f.workspaceWriteExt)}
	if langs, err := codemode.ParseLanguages(f.codeLanguage); err == nil && f.codeLanguage != "javascript" {
		cfg.codeMode.Languages = langs
	}
	if f.outputSchema != "" {
		b, err := os.ReadFile(f.outputSchema)
		if err != nil {
			return cfg, fmt.Errorf("--output-schema: %w", err)
		}
		if !json.Valid(b) {
			return cfg, usageError(fmt.Errorf("--output-schema %s: not JSON", f.outputSchema))
		}
		cfg.OutputSchema = b
	}
	for _, line := range f.mcpCommands {
		argv, err := splitCommand(line)
		if err != nil {
			return cfg, usageError(fmt.Errorf("--mcp %q: %v", line, err))
		}
		if len(argv) == 0 {
			return cfg, usageError(errors.New("--mcp: the command line is empty"))
		}
		cfg.mcp = append(cfg.mcp, mount.Server{Command: argv})
	}
	for _, u := range f.mcpURLs {
		cfg.mcp = append(cfg.mcp, mount.Server{URL: u})
	}
	if _, statErr := os.Stat(f.plugins); statErr == nil {
		cfg.plugins = &sandbox.PluginsConfig{Dir: f.plugins, Manifest: f.manifest, Quarantine: f.quarantine}
	} else if f.plugins != "plugins" || f.manifest != "" {
		return cfg, fmt.Errorf("plugins directory %s: %w", f.plugins, statErr)
	}
	if f.createTool > 0 {
		ceiling, err := manifest.ParseGrants(f.toolGrants)
		if err != nil {
			return cfg, usageError(fmt.Errorf("--tool-grant: %v", err))
		}
		cfg.createTool = sandbox.CreateToolConfig{Budget: f.createTool, Language: f.toolLang, Progress: stderr, Ceiling: ceiling}
		if f.writerProvider != "" || f.writerScript != "" || f.writerModel != "" {
			name := cmp.Or(f.writerProvider, f.provider)
			w := catalog.Config{Name: name, Model: f.writerModel, ScriptFile: f.writerScript}
			if name == f.provider {
				w.BaseURL, w.APIKeyEnv = f.baseURL, f.apiKeyEnv
				w.Model = cmp.Or(f.writerModel, f.model)
			}
			cfg.writer = &w
		}
	}
	return cfg, nil
}

// overrides copy, from the flags' config onto an agent file's, what each
// flag sets, for the flags given on the command line.
var overrides = map[string]func(dst, src *agentConfig){
	"provider":              func(d, s *agentConfig) { d.provider.Name = s.provider.Name },
	"model":                 func(d, s *agentConfig) { d.provider.Model, d.Model = s.provider.Model, s.Model },
	"base-url":              func(d, s *agentConfig) { d.provider.BaseURL = s.provider.BaseURL },
	"api-key-env":           func(d, s *agentConfig) { d.provider.APIKeyEnv = s.provider.APIKeyEnv },
	"script":                func(d, s *agentConfig) { d.provider.ScriptFile = s.provider.ScriptFile },
	"backends":              func(d, s *agentConfig) { d.BackendsDir = s.BackendsDir },
	"system":                func(d, s *agentConfig) { d.System = s.System },
	"max-steps":             func(d, s *agentConfig) { d.Bounds.MaxSteps = s.Bounds.MaxSteps },
	"token-budget":          func(d, s *agentConfig) { d.Bounds.TokenBudget = s.Bounds.TokenBudget },
	"max-tool-result-chars": func(d, s *agentConfig) { d.Bounds.MaxToolResultChars = s.Bounds.MaxToolResultChars },
	"prune-after":           func(d, s *agentConfig) { d.Bounds.PruneToolResultsAfter = s.Bounds.PruneToolResultsAfter },
	"max-repeated-calls":    func(d, s *agentConfig) { d.Bounds.MaxRepeatedToolCalls = s.Bounds.MaxRepeatedToolCalls },
	"max-tool-calls":        func(d, s *agentConfig) { d.Bounds.MaxToolCalls = s.Bounds.MaxToolCalls },
	"tool-timeout":          func(d, s *agentConfig) { d.Bounds.ToolTimeout = s.Bounds.ToolTimeout },
	"trifecta":              func(d, s *agentConfig) { d.Bounds.Trifecta = s.Bounds.Trifecta },
	"shadow-guards":         func(d, s *agentConfig) { d.Bounds.ShadowGuards = s.Bounds.ShadowGuards },
	"plugins":               func(d, s *agentConfig) { d.plugins = s.plugins },
	"code-mode":             func(d, s *agentConfig) { d.codeMode.Mode = s.codeMode.Mode },
	"code-language":         func(d, s *agentConfig) { d.codeMode.Languages = s.codeMode.Languages },
	"manifest":              func(d, s *agentConfig) { d.plugins = s.plugins },
	"quarantine":            func(d, s *agentConfig) { d.plugins = s.plugins },
	"policy":                func(d, s *agentConfig) { d.PolicyFile = s.PolicyFile },
	"trace":                 func(d, s *agentConfig) { d.TraceFile = s.TraceFile },
	"record":                func(d, s *agentConfig) { d.RecordFile = s.RecordFile },
	"checkpoint":            func(d, s *agentConfig) { d.CheckpointFile = s.CheckpointFile },
	"memory":                func(d, s *agentConfig) { d.Memory = s.Memory },
	"memory-dir":            func(d, s *agentConfig) { d.Memory = s.Memory },
	// Servers given as flags join the file's.
	"mcp":           func(d, s *agentConfig) { d.mcp = append(d.mcp, s.mcp...) },
	"mcp-url":       func(d, s *agentConfig) {},
	"create-tool":   func(d, s *agentConfig) { d.createTool, d.writer = s.createTool, s.writer },
	"tool-grant":    func(d, s *agentConfig) { d.createTool.Ceiling = s.createTool.Ceiling },
	"prompt-cache":  func(d, s *agentConfig) { d.provider.PromptCaching = s.provider.PromptCaching },
	"output-schema": func(d, s *agentConfig) { d.OutputSchema = s.OutputSchema },
	"workspace":     func(d, s *agentConfig) { d.Workspace = s.Workspace },
	"rules":         func(d, s *agentConfig) { d.Rules = s.Rules },
	"cache":         func(d, s *agentConfig) { d.Cache = s.Cache },
	"cache-ttl": func(d, s *agentConfig) {
		if d.Cache != nil && s.Cache != nil {
			c := *d.Cache
			c.TTL = s.Cache.TTL
			d.Cache = &c
		}
	},
	// Directories given as flags join the file's.
	"retrieve": func(d, s *agentConfig) { d.Retrieval.Dirs = append(d.Retrieval.Dirs, s.Retrieval.Dirs...) },
	"trusted-retrieve": func(d, s *agentConfig) {
		d.Retrieval.TrustedDirs = append(d.Retrieval.TrustedDirs, s.Retrieval.TrustedDirs...)
	},
	"retrieve-memory":     func(d, s *agentConfig) { d.Retrieval.Memory = s.Retrieval.Memory },
	"retrieve-embeddings": func(d, s *agentConfig) { d.Retrieval.Embeddings = s.Retrieval.Embeddings },
	// Skills given as flags join the file's.
	"skills":         func(d, s *agentConfig) { d.Skills = append(d.Skills, skillsOf(s.Skills, false)...) },
	"trusted-skills": func(d, s *agentConfig) { d.Skills = append(d.Skills, skillsOf(s.Skills, true)...) },
	"workspace-read-ext": func(d, s *agentConfig) {
		d.Workspace.ReadExt = s.Workspace.ReadExt
	},
	"workspace-write-ext": func(d, s *agentConfig) {
		d.Workspace.WriteExt = s.Workspace.WriteExt
	},
}

// skillsOf returns the sources of list whose Trusted is trusted.
func skillsOf(list []skills.Source, trusted bool) []skills.Source {
	var out []skills.Source
	for _, s := range list {
		if s.Trusted == trusted {
			out = append(out, s)
		}
	}
	return out
}

// withAgentFile loads --agent and applies the flags given over it. It
// returns the session store's file too: the file's, or the flags'.
func (f *agentFlags) withAgentFile(flags agentConfig) (agentConfig, string, error) {
	af, err := autoagent.Load(f.agent, sandbox.Keys(), mount.Keys())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return agentConfig{}, "", err
		}
		return agentConfig{}, "", usageError(err)
	}
	p := af.Provider
	cfg := agentConfig{Config: af.Config, provider: catalog.Config{Name: p.Name, Model: p.Model, BaseURL: p.BaseURL, APIKeyEnv: p.APIKeyEnv, ScriptFile: p.ScriptFile}}
	// The file's features, as data the flags lay over.
	cfg.Features = nil
	for _, feat := range af.Config.Features {
		switch feat := feat.(type) {
		case *sandbox.Sandbox:
			cfg.plugins, cfg.codeMode, cfg.createTool = feat.Plugins, feat.CodeMode, feat.CreateTool
		case mount.Servers:
			cfg.mcp = feat
		default:
			return agentConfig{}, "", fmt.Errorf("agent file %s: a feature %T the command does not know", f.agent, feat)
		}
	}
	cfg.Notes = flags.Notes
	if cfg.Notes != nil {
		for _, note := range af.Deprecated {
			fmt.Fprintf(cfg.Notes, "autoagent: %s\n", termtext.Text(note))
		}
	}
	mcpGiven := false
	for name, apply := range overrides {
		if f.fs == nil || !f.fs.Changed(name) {
			continue
		}
		if name == "mcp" || name == "mcp-url" {
			mcpGiven = true
			continue
		}
		apply(&cfg, &flags)
	}
	if mcpGiven {
		cfg.mcp = append(cfg.mcp, flags.mcp...)
	}
	// chat --session keeps the file's store unless --sessions names one.
	sessions := af.Sessions
	if f.sessions != "" && (sessions == "" || f.fs.Changed("sessions")) {
		sessions = f.sessions
	}
	return cfg, sessions, nil
}

// agentRuntime is the runtime the flags describe, with what the command
// opened for it and closes after it: the session store, the OTLP
// exporter, a backend's process.
type agentRuntime struct {
	*autoagent.Runtime
	box   *sandbox.Sandbox // the plugins directory, code mode, create_tool
	owned []func(context.Context) error
}

// Close closes the runtime, then what was opened for it, last first.
func (r *agentRuntime) Close(ctx context.Context) error {
	var errs []error
	if r.Runtime != nil {
		errs = append(errs, r.Runtime.Close(ctx))
	}
	for i := len(r.owned) - 1; i >= 0; i-- {
		errs = append(errs, r.owned[i](ctx))
	}
	r.owned = nil
	return errors.Join(errs...)
}

// newAgent builds the runtime the flags describe. Notes about plugins that
// were not loaded go to stderr; watch keeps the plugins directory current
// (chat), a single run does not need it.
func (f *agentFlags) newAgent(ctx context.Context, stderr io.Writer, watch bool) (_ *agentRuntime, err error) {
	cfg, err := f.config(stderr)
	if err != nil {
		return nil, err
	}
	sessions := f.sessions
	if f.agent != "" {
		if cfg, sessions, err = f.withAgentFile(cfg); err != nil {
			return nil, err
		}
	}
	if f.inEval && cfg.Cache != nil {
		return nil, usageError(fmt.Errorf("the agent file's cache is not for eval: %s", refusedInEval["cache"]))
	}
	r := &agentRuntime{}
	defer func() {
		if err != nil {
			r.Close(context.WithoutCancel(ctx))
		}
	}()
	if sessions != "" {
		st, err := sqlitestore.Open(sessions, sqlitestore.Options{})
		if err != nil {
			return nil, err
		}
		r.owned = append(r.owned, func(context.Context) error { return st.Close() })
		cfg.Sessions = st
	}
	if f.otel {
		exp, err := otlp.NewExporter(ctx)
		if err != nil {
			return nil, err
		}
		r.owned = append(r.owned, exp.Close) // after the runtime: flushes the spans
		cfg.TraceSinks = append(cfg.TraceSinks, exp)
	}
	if name, ok := strings.CutPrefix(cfg.provider.Name, "backend:"); ok {
		// A provider in its own process: it reads its key itself, this
		// process never holds it.
		p, err := remote.New(ctx, remote.Options{Name: name, Dir: cfg.BackendsDir, Stderr: stderr})
		if err != nil {
			return nil, providerSetupError(err)
		}
		r.owned = append(r.owned, func(context.Context) error { return p.Close() })
		cfg.LLM = p
	} else if cfg.LLM, err = catalog.New(cfg.provider); err != nil {
		return nil, providerSetupError(err)
	}
	if cfg.writer != nil {
		if cfg.createTool.Writer, err = catalog.New(*cfg.writer); err != nil {
			return nil, providerSetupError(fmt.Errorf("create_tool writer: %w", err))
		}
		cfg.createTool.WriterModel = cfg.writer.Model
	}
	if cfg.plugins != nil {
		cfg.plugins.NoWatch = cfg.plugins.NoWatch || !watch
	}
	if cfg.plugins != nil && cfg.plugins.Trust == nil {
		// The manifest found here counts only as far as this user
		// trusts it, whether the flags or an agent file named it.
		if cfg.plugins.Trust, err = trustStore(cmp.Or(cfg.plugins.Dir, defaultPluginsDir)); err != nil {
			return nil, err
		}
	}
	features := cfg.features()
	r.box = features[0].(*sandbox.Sandbox)
	cfg.Features = append(cfg.Features, features...)
	if r.Runtime, err = autoagent.New(ctx, cfg.Config); err != nil {
		return nil, providerSetupError(err)
	}
	return r, nil
}

// streamOut is where a streamed answer goes: stdout, or stderr when --json
// keeps stdout for the result object.
func (f agentFlags) streamOut(c *cobra.Command) io.Writer {
	if f.json {
		return c.ErrOrStderr()
	}
	return c.OutOrStdout()
}

// streamRun prints a streamed run: text deltas on stdout, tool activity on
// stderr. It returns what Run would.
func streamRun(out, errw io.Writer, events func(yield func(loop.Event, error) bool)) (*loop.Result, error) {
	var res *loop.Result
	var runErr error
	midLine := false // the answer's last delta did not end a line
	endLine := func() {
		if midLine {
			fmt.Fprintln(out)
			midLine = false
		}
	}
	for ev, err := range events {
		switch ev.Type {
		case loop.EventText:
			fmt.Fprint(out, termtext.Text(ev.Text))
			midLine = ev.Text != "" && !strings.HasSuffix(ev.Text, "\n") || midLine && ev.Text == ""
		case loop.EventToolStart:
			endLine()
			if ev.Call != nil {
				fmt.Fprintf(errw, "→ %s %s\n", termtext.Name(ev.Call.Name), termtext.Name(trace.Preview(string(ev.Call.Arguments), 120)))
			}
		case loop.EventToolEnd:
			if ev.ToolResult != nil {
				mark := "✓"
				if ev.ToolResult.IsError {
					mark = "✗"
				}
				fmt.Fprintf(errw, "%s %s: %s\n", mark, termtext.Name(ev.ToolResult.Name), termtext.Name(trace.Preview(ev.ToolResult.Content, 200)))
			}
		case loop.EventCorrection:
			fmt.Fprintf(errw, "\n↺ correction: %s\n", termtext.Name(trace.Preview(ev.Text, 200)))
		case loop.EventApproval:
			for _, p := range ev.Pending {
				fmt.Fprintf(errw, "⏸ approval required for %s (call %s): %s\n", termtext.Name(p.Call.Name), termtext.Name(p.Call.ID), termtext.Name(p.Reason))
			}
		case loop.EventDone:
			res = ev.Result
		}
		if err != nil {
			runErr = err
		}
	}
	endLine()
	return res, runErr
}

// providerSetupError classifies an error of catalog.New: an
// unknown provider name, or a setting the provider needs that no flag gave
// (--base-url for openai-compatible, --script for scripted), is a usage
// error (exit 2); anything else is a failure.
func providerSetupError(err error) error {
	if errors.Is(err, catalog.ErrUnknown) || errors.Is(err, catalog.ErrMissingSetting) || errors.Is(err, autoagent.ErrConfig) {
		return usageError(err)
	}
	return err
}
