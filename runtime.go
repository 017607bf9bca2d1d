package autoagent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/codemode/jsprogram"
	"github.com/autoagent-go/autoagent/codemode/pyprogram"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/pluginload"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/llm/cache"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/memtool"
	"github.com/autoagent-go/autoagent/policy"
	"github.com/autoagent-go/autoagent/session"
	"github.com/autoagent-go/autoagent/skills"
	"github.com/autoagent-go/autoagent/synth"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/autoagent-go/autoagent/workspace"
)

// Config is everything a Runtime is built from. Every field is optional
// but the model (Provider or LLM): the zero value of a field means none,
// or the default it names. What has weight (a session database, an
// OpenTelemetry exporter, a provider in its own process) comes in as an
// interface, built by the package that owns it; the Runtime does not
// close what it is given.
type Config struct {
	// Provider names the model provider (ProviderNames) and configures it,
	// its Model field naming the model. LLM, when set, is used instead:
	// a provider built by hand (a go-plugin backend's remote.Provider, a
	// test double), which the Runtime does not close.
	Provider ProviderConfig
	LLM      llm.Provider
	// BackendsDir is the directory of go-plugin backend binaries
	// (providers/remote) the program may run; "" means $AUTOAGENT_BACKENDS,
	// else the user's default. No sandboxed tool may reach it (Protects),
	// whether or not this run uses a backend.
	BackendsDir string
	// System is the system prompt (loop.DefaultSystemPrompt when empty);
	// Bounds are the run's limits (loop's defaults when zero).
	System string
	Bounds loop.Bounds
	// Rules are rule files (AGENTS.md…) put before System: see
	// RulesConfig. None by default.
	Rules RulesConfig
	// Skills are directories of SKILL.md skills the model discloses
	// through tools (package skills); each skill's tools/ modules load
	// like Plugins' (pending until approved in its manifest). A source
	// not Trusted is untrusted content: it taints the run.
	Skills []skills.Source
	// OutputSchema, when set, is the JSON Schema the final answer must
	// match (loop.Agent.OutputSchema): Result.Structured holds the value.
	OutputSchema json.RawMessage

	// Tools are Go tools of the embedding program.
	Tools []tool.Tool
	// Workspace, when its Dir is set, gives the model read_file,
	// write_file, list_dir, list_changes and rollback over that directory
	// (package workspace): fenced to it, with its allowlists, every write
	// journaled and undoable. The files Protects names are never read or
	// written through it.
	Workspace WorkspaceConfig
	// Plugins, when set, loads a plugins directory of approved WebAssembly
	// tools (Dir "" is ./plugins), kept current as files and approvals
	// change unless Plugins.NoWatch. Sandboxed calls are traced, and code
	// mode is gated by the run (HostOptions).
	Plugins *PluginsConfig
	// MCP mounts the tools of MCP servers: untrusted by default (their
	// results taint the run), under a name prefix when given.
	MCP []MCPServer

	// Policy decides every tool call before it runs; PolicyFile, when
	// Policy is nil, loads one (policy.Load: allow/deny/approve
	// rules).
	Policy     loop.Policy
	PolicyFile string
	// Memory compacts long conversations and, for facts, keeps what the
	// user said across sessions.
	Memory MemoryConfig
	// Tracer receives the trace events; TraceFile, when Tracer is nil,
	// appends them to a JSONL file, and TraceSinks receive them too (for
	// OpenTelemetry, trace/otel/otlp's exporter: close it after the
	// Runtime, which flushes its spans). Give TraceSinks without a Tracer
	// of your own: add them to your tracer instead.
	Tracer     *trace.Tracer
	TraceFile  string
	TraceSinks []trace.Sink
	// CheckpointFile, when set, saves the run's state after every step,
	// and journals tool calls to CheckpointFile.journal, for loop's Resume
	// after an approval pause, a bound or a crash (loop.OpenFileStore).
	CheckpointFile string
	// Cache, when set, answers a request the model was sent before from
	// its earlier answer (package llm/cache): off by default.
	Cache *CacheConfig
	// RecordFile, when set, records model responses and tool results
	// (secrets redacted) for loop's replay.
	RecordFile string
	// CreateTool, when its Budget is positive, offers the model
	// create_tool: it may write that many sandboxed tools for the run.
	CreateTool CreateToolConfig
	// CodeMode offers the model run_program (package codemode): one
	// JavaScript program calling the run's tools, each call through the
	// run's gate, run in the sandbox's JavaScript engine (codemode/
	// jsprogram; `make synth-engine-tools` builds it). Off by default.
	CodeMode CodeModeConfig
	// Sessions, when set, is the store Continue keeps conversations in:
	// session/sqlitestore's file, or a Store of your own. The Runtime does not
	// close it.
	Sessions session.Store
	// Notes receives what the runtime tells a person: plugins not
	// approved or invalid, reloads, trifecta warnings. Nil discards them.
	Notes io.Writer
	// Protected are directories and files of the application no fs grant
	// of a sandboxed tool may reach, beside those the runtime protects
	// itself: the files that govern the run (PolicyFile, CheckpointFile,
	// the Sessions store's files, TraceFile, RecordFile), the backends
	// directory, the fact memory, the trust store's directory and the
	// program's executable (host.Options.Protected says how). Load adds
	// the agent file.
	Protected []manifest.Protected
}

// WorkspaceConfig configures the run's workspace (Config.Workspace).
type WorkspaceConfig struct {
	// Dir is the workspace's directory; "" means none.
	Dir string
	// ReadExt and WriteExt, when not nil, are the extensions that may be
	// read and written (workspace.Options).
	ReadExt, WriteExt []string
	// MaxFileBytes and MaxTotalBytes bound a file and all of them (0:
	// workspace's defaults, 16 MiB and 1 GiB).
	MaxFileBytes, MaxTotalBytes int64
}

// CodeModeConfig configures code mode (loop.Agent.CodeMode).
type CodeModeConfig struct {
	// Mode is codemode.Off (the zero value), Also or Only.
	Mode codemode.Mode
	// MaxCalls bounds one program's tool calls (0: codemode.DefaultMaxCalls).
	MaxCalls int
	// Limits bound one program's time, memory and output (zero fields:
	// the host's 10 s, 64 MiB, 1 MiB).
	Limits host.Limits
	// Engine is the engine module's path; "" means the one
	// $AUTOAGENT_JS_ENGINE names (jsengine-tools.wasm beside it), else the
	// user cache's (autoagent/synth), never a working directory's
	// checkout: see TrustedEngine.
	Engine string
	// Languages are the languages the model may write programs in:
	// codemode.JavaScript, codemode.Python or both (codemode.ParseLanguages
	// reads them); nil means JavaScript alone. A program naming no
	// language is JavaScript when JavaScript is offered, else Python.
	Languages []string
	// PythonEngine is the Python engine's path (pyengine.wasm, built by
	// `make python-engine`); "" means the one $AUTOAGENT_PY_ENGINE names,
	// else the user cache's (autoagent/python), never a working
	// directory's checkout: see TrustedPythonEngine.
	PythonEngine string
}

// MCPServer is one MCP server to mount: a stdio Command (argv) or a URL.
type MCPServer struct {
	Command []string
	Env     []string // KEY=VALUE for a Command's process
	URL     string
	// Prefix goes before every tool name; Include, when set, mounts only
	// these tools (server names).
	Prefix  string
	Include []string
	// Trusted reads the server's results as instructions, not only data:
	// leave it false unless the server is yours.
	Trusted bool
	// Egress flags the tools as able to send data out (stopped by the
	// trifecta guard once a run is tainted).
	Egress bool
}

// CreateToolConfig offers the model create_tool (package synth): tools it
// writes run quarantined in the sandbox, with no capabilities; accepted
// ones are staged for a person's approval.
type CreateToolConfig struct {
	// Budget is how many tools the run may write (0: no create_tool).
	Budget int
	// Language is "js" (default) or "go".
	Language string
	// Writer is the model that writes them: the runtime's own when its
	// Name is empty (with Writer.Model, when set, instead of the run's).
	Writer ProviderConfig
	// Progress receives the builds' progress lines (nil: Notes).
	Progress io.Writer
	// Ceiling is the most a written tool may be granted (none by
	// default: a tool asking for a capability is refused).
	Ceiling []manifest.Grant
	// StagingDir is where accepted tools are written for review; ""
	// means the plugins directory's staging/ (Plugins.Dir, else
	// ./plugins), from where `autoagent synth promote` moves one in.
	StagingDir string
}

// MemoryConfig selects the run's memory.
type MemoryConfig struct {
	// Kind is "" (none), "buffer", "summarizing" or "fact".
	Kind string
	// Dir holds the fact memory's store (facts.json); "" keeps facts in
	// memory only.
	Dir string
	// Identity is whose facts they are (fact memory).
	Identity string
	// MaxMessages is the compaction trigger (each kind's default when 0).
	MaxMessages int
}

// ErrConfig is wrapped by New's errors for a Config that cannot work.
var ErrConfig = errors.New("autoagent: invalid config")

// Runtime is a governed agent and what it owns: the provider, the WASM
// host and plugins directory, MCP sessions, memory, tracing, policy,
// checkpoints and sessions. Runs share it; Close releases everything.
type Runtime struct {
	agent       *loop.Agent
	tools       *tool.Registry
	host        *host.Host
	plugins     *plugindir.Dir
	clients     []*mcp.Client
	tracer      *trace.Tracer // owned (TraceFile, TraceSinks)
	sessions    session.Store // not owned
	fact        *memory.Fact
	recorder    *loop.Recorder
	checkpoints *loop.FileStore
	builder     *synth.Builder
	programs    []ProgramCloser
	creator     *synth.CreateTool
	workspace   *workspace.Workspace
	workspaces  *workspace.Set // the run's workspace, and those of fs.workspace grants
	skillTools  []*plugindir.Dir
	cache       *cache.Cache
	notes       io.Writer

	stopWatch context.CancelFunc
	watching  sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// New builds a Runtime from cfg. On error nothing is left open.
func New(ctx context.Context, cfg Config) (_ *Runtime, err error) {
	rt := &Runtime{tools: &tool.Registry{}, notes: cfg.Notes}
	if rt.notes == nil {
		rt.notes = io.Discard
	}
	defer func() {
		if err != nil {
			rt.Close(context.WithoutCancel(ctx))
		}
	}()
	model := cfg.LLM
	if model == nil {
		if name, ok := strings.CutPrefix(cfg.Provider.Name, "backend:"); ok {
			// Its process and RPC are providers/remote's weight, not the
			// front door's.
			return nil, fmt.Errorf("%w: Provider %q is a go-plugin backend: start it with providers/remote (remote.New(ctx, remote.Options{Name: %q})) and give it as Config.LLM", ErrConfig, cfg.Provider.Name, name)
		}
		if model, err = NewProvider(cfg.Provider); err != nil {
			return nil, err
		}
	}
	tr := cfg.Tracer
	sinks := cfg.TraceSinks
	if tr != nil && len(sinks) > 0 {
		return nil, fmt.Errorf("%w: TraceSinks with a Tracer of your own: add the sinks to your Tracer instead", ErrConfig)
	}
	if slices.Contains(sinks, nil) {
		return nil, fmt.Errorf("%w: TraceSinks holds a nil sink", ErrConfig)
	}
	switch {
	case tr == nil && cfg.TraceFile != "":
		if tr, err = trace.OpenFile(cfg.TraceFile, sinks...); err != nil {
			return nil, err
		}
		rt.tracer = tr
	case tr == nil && len(sinks) > 0:
		tr = trace.New(sinks...)
		rt.tracer = tr
	}
	if model, err = rt.openCache(cfg.Cache, model, tr); err != nil {
		return nil, err
	}
	for _, t := range cfg.Tools {
		if err := rt.tools.Add(t); err != nil {
			return nil, fmt.Errorf("%w: Tools: %v", ErrConfig, err)
		}
	}
	ruleFiles, rulesText, err := loadRules(cfg.Rules, tr, rt.notes)
	if err != nil {
		return nil, err
	}
	skillSet, skillsProtected, err := openSkills(cfg)
	if err != nil {
		return nil, err
	}
	protected := append(append(cfg.Protects(), rulesProtected(ruleFiles)...), skillsProtected...)
	rt.workspaces = workspace.NewSet(workspace.Options{Tracer: tr, Protected: workspaceProtected(protected)})
	if wc := cfg.Workspace; wc.Dir != "" {
		if err := rt.openWorkspace(wc, tr, protected); err != nil {
			return nil, err
		}
	}
	if cfg.Plugins != nil {
		pc := *cfg.Plugins
		pc.Tracer = cmp.Or(pc.Tracer, tr)
		pc.Protected = append(slices.Clone(pc.Protected), protected...)
		if pc.Journal == nil {
			pc.Journal = WorkspaceJournal(rt.workspaces)
		}
		hopts := HostOptions(pc.Tracer)
		hopts.Protected, hopts.Journal = pc.Protected, pc.Journal
		dopts := plugindir.Options{Dir: pc.Dir, Manifest: pc.Manifest, Quarantine: pc.Quarantine, Trust: pc.Trust}
		if rt.host, rt.plugins, err = pluginload.Open(ctx, hopts, dopts); err != nil {
			return nil, fmt.Errorf("plugins %s: %w", cmp.Or(pc.Dir, "plugins"), err)
		}
		if err := rt.plugins.Publish(rt.tools); err != nil {
			fmt.Fprintf(rt.notes, "autoagent: %s\n", termtext.Text(err.Error()))
		}
		pluginload.Report(rt.notes, rt.plugins.Snapshot())
		if !pc.NoWatch {
			wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			rt.stopWatch = cancel
			rt.watching.Add(1)
			go func() {
				defer rt.watching.Done()
				for ch, err := range rt.plugins.Watch(wctx) {
					switch {
					case err != nil:
						fmt.Fprintf(rt.notes, "autoagent: plugins: %s\n", termtext.Text(err.Error()))
					case !ch.Empty():
						fmt.Fprintf(rt.notes, "autoagent: tools changed: +%v -%v ~%v\n", ch.Added, ch.Removed, ch.Replaced)
					}
				}
			}()
		}
	}
	for i, s := range cfg.MCP {
		c, err := mcp.Connect(ctx, mcp.ClientOptions{
			Command: s.Command, Env: s.Env, URL: s.URL, Prefix: s.Prefix, Include: s.Include,
			Trusted: s.Trusted, Egress: s.Egress, Stderr: rt.notes,
		})
		if err != nil {
			return nil, fmt.Errorf("MCP server %d: %w", i+1, err)
		}
		rt.clients = append(rt.clients, c)
		if err := c.Publish(rt.tools); err != nil {
			return nil, fmt.Errorf("MCP server %d: %w", i+1, err)
		}
	}
	if skillSet != nil {
		if err := rt.offerSkills(ctx, cfg, skillSet, tr, protected); err != nil {
			return nil, err
		}
	}
	rt.agent = &loop.Agent{
		Provider: model,
		Tools:    rt.tools,
		System:   knowledgePrompt(rulesText, skillSet, cfg.System),
		Model:    cfg.Provider.Model,
		Bounds:   cfg.Bounds,
		Tracer:   tr,
		Policy:   cfg.Policy,

		OutputSchema: cfg.OutputSchema,
	}
	if cfg.Policy == nil && cfg.PolicyFile != "" {
		pol, err := policy.Load(cfg.PolicyFile)
		if err != nil {
			return nil, err
		}
		rt.agent.Policy = pol
	}
	if cfg.CheckpointFile != "" {
		if rt.checkpoints, err = loop.OpenFileStore(cfg.CheckpointFile); err != nil {
			return nil, err
		}
		rt.checkpoints.Attach(rt.agent)
	}
	if cfg.RecordFile != "" {
		if rt.recorder, err = loop.CreateRecording(cfg.RecordFile, loop.RecordOptions{}); err != nil {
			return nil, err
		}
		rt.agent.Recorder = rt.recorder
	}
	if cfg.CreateTool.Budget > 0 {
		if err := rt.offerCreateTool(ctx, cfg, model, tr, protected); err != nil {
			return nil, err
		}
	}
	if cfg.CodeMode.Mode != codemode.Off {
		if err := rt.offerCodeMode(ctx, cfg.CodeMode, tr, protected); err != nil {
			return nil, err
		}
	}
	if err := rt.openMemory(ctx, cfg.Memory, model); err != nil {
		return nil, err
	}
	rt.sessions = cfg.Sessions
	for _, finding := range rt.agent.AuditTrifecta() {
		fmt.Fprintf(rt.notes, "autoagent: warning: %s\n", termtext.Text(fmt.Sprint(finding)))
	}
	return rt, nil
}

// openWorkspace opens the run's workspace and adds its tools.
// It joins the runtime's set of workspaces, so a module granted
// fs.workspace on the same directory writes through it, under its
// allowlists.
func (rt *Runtime) openWorkspace(wc WorkspaceConfig, tr *trace.Tracer, protected []manifest.Protected) error {
	w, err := workspace.Open(wc.Dir, workspace.Options{ReadExt: wc.ReadExt, WriteExt: wc.WriteExt,
		MaxFileBytes: wc.MaxFileBytes, MaxTotalBytes: wc.MaxTotalBytes, Tracer: tr, Protected: workspaceProtected(protected)})
	if err != nil {
		return fmt.Errorf("%w: Workspace: %w", ErrConfig, err)
	}
	rt.workspace = w
	if err := rt.workspaces.Add(w); err != nil {
		w.Close()
		return err
	}
	for _, t := range workspace.Tools(w) {
		if err := rt.tools.Add(t); err != nil {
			return fmt.Errorf("%w: Workspace: %v (a plugin or tool of that name is loaded too)", ErrConfig, err)
		}
	}
	return nil
}

// workspaceProtected is what the runtime protects, as workspace options.
func workspaceProtected(protected []manifest.Protected) []workspace.Protected {
	var ps []workspace.Protected
	for _, p := range protected {
		ps = append(ps, workspace.Protected{Path: cmp.Or(p.File, p.Dir), What: p.What})
	}
	return ps
}

// Workspace returns the run's workspace, nil without Config.Workspace.
func (rt *Runtime) Workspace() *workspace.Workspace { return rt.workspace }

// offerCodeMode loads the program engine into the runtime's host (made
// here when no plugins directory made one) and turns code mode on.
func (rt *Runtime) offerCodeMode(ctx context.Context, cm CodeModeConfig, tr *trace.Tracer, protected []manifest.Protected) error {
	if _, err := codemode.ParseMode(string(cm.Mode)); err != nil || cm.Mode == codemode.Off {
		return fmt.Errorf("%w: CodeMode.Mode %q: want codemode.Also or Only", ErrConfig, cm.Mode)
	}
	if err := rt.ensureHost(ctx, tr, protected); err != nil {
		return err
	}
	r, closers, err := ProgramRunner(ctx, rt.host, cm, rt.notes)
	if err != nil {
		return fmt.Errorf("code mode: %w", err)
	}
	rt.programs = closers
	rt.agent.CodeMode = codemode.Config{Mode: cm.Mode, Runner: r, MaxCalls: cm.MaxCalls}
	return nil
}

// ProgramRunner loads into h the engines of the languages cm offers
// (JavaScript when cm.Languages is nil) and returns the runner of code
// mode's programs: the one engine's runner, or a codemode.ByLanguage over
// them. The engines are the trusted ones (TrustedEngine,
// TrustedPythonEngine) unless cm names them; progress tells of a slow
// first compilation. Close the returned closers when done.
func ProgramRunner(ctx context.Context, h *host.Host, cm CodeModeConfig, progress io.Writer) (codemode.Runner, []ProgramCloser, error) {
	langs := cm.Languages
	if len(langs) == 0 {
		langs = []string{codemode.JavaScript}
	}
	runners := codemode.ByLanguage{}
	var closers []ProgramCloser
	fail := func(err error) (codemode.Runner, []ProgramCloser, error) {
		for _, c := range closers {
			_ = c.Close(context.WithoutCancel(ctx))
		}
		return nil, nil, err
	}
	for _, lang := range langs {
		if _, dup := runners[lang]; dup {
			continue
		}
		switch lang {
		case codemode.JavaScript:
			engine := cm.Engine
			if engine == "" {
				var err error
				if engine, err = TrustedEngine(); err != nil {
					return fail(err)
				}
			}
			r, err := jsprogram.New(ctx, h, jsprogram.Options{Engine: engine, Limits: cm.Limits, Progress: progress})
			if err != nil {
				return fail(err)
			}
			runners[lang], closers = r, append(closers, r)
		case codemode.Python:
			engine := cm.PythonEngine
			if engine == "" {
				var err error
				if engine, err = TrustedPythonEngine(); err != nil {
					return fail(err)
				}
			}
			r, err := pyprogram.New(ctx, h, pyprogram.Options{Engine: engine, Limits: cm.Limits, Progress: progress})
			if err != nil {
				return fail(err)
			}
			runners[lang], closers = r, append(closers, r)
		default:
			return fail(fmt.Errorf("%w: CodeMode.Languages: %q: want %q or %q", ErrConfig, lang, codemode.JavaScript, codemode.Python))
		}
	}
	if len(runners) == 1 {
		for _, r := range runners {
			return r, closers, nil
		}
	}
	return runners, closers, nil
}

// ProgramCloser is an engine ProgramRunner loaded.
type ProgramCloser interface{ Close(context.Context) error }

// TrustedEngine returns the path of the code-mode engine
// (synth.BridgeEngineFile) the runtime loads: beside the engine
// $AUTOAGENT_JS_ENGINE names, else in the user cache directory
// (autoagent/synth), never in the .cache/synth of a checkout holding the
// working directory (synth.FindEngine's rule: the engine runs with
// host.Module.CallAnyTool, and a checkout is not trusted to bring the code
// that gets it). The error wraps synth.ErrNoEngine and says what to do.
func TrustedEngine() (string, error) {
	return synth.FindEngine(synth.BridgeEngineFile)
}

// TrustedPythonEngine returns the path of code mode's Python engine
// (pyprogram.EngineFile) the runtime may load: the one
// $AUTOAGENT_PY_ENGINE names, else the one in the user cache directory
// (autoagent/python), never the one in the .cache/python of a checkout
// holding the working directory: it is pyprogram.FindEngine, named as
// TrustedEngine is for the JavaScript engine. The error wraps
// pyprogram.ErrNoEngine and says what to do.
func TrustedPythonEngine() (string, error) { return pyprogram.FindEngine() }

// ensureHost makes the runtime's WASM host when no plugins directory made
// one: traced, with code mode's calls gated by the run (HostOptions).
func (rt *Runtime) ensureHost(ctx context.Context, tr *trace.Tracer, protected []manifest.Protected) error {
	if rt.host != nil {
		return nil
	}
	opts := HostOptions(tr)
	opts.Protected = protected
	opts.Journal = WorkspaceJournal(rt.workspaces)
	h, err := host.New(ctx, opts)
	if err != nil {
		return err
	}
	rt.host = h
	return nil
}

// offerCreateTool adds create_tool: the writer model writes tools that run
// quarantined in the runtime's host, and the run's budget counts what
// writing them cost.
func (rt *Runtime) offerCreateTool(ctx context.Context, cfg Config, model llm.Provider, tr *trace.Tracer, protected []manifest.Protected) error {
	ct := cfg.CreateTool
	writer, writerModel := model, cmp.Or(ct.Writer.Model, cfg.Provider.Model)
	if ct.Writer.Name != "" {
		w, err := NewProvider(ct.Writer)
		if err != nil {
			return fmt.Errorf("create_tool writer: %w", err)
		}
		writer, writerModel = w, ct.Writer.Model
	}
	if err := rt.ensureHost(ctx, tr, protected); err != nil {
		return err
	}
	progress := ct.Progress
	if progress == nil {
		progress = rt.notes
	}
	b, err := synth.New(synth.Options{
		Host: rt.host, Writer: writer, Model: writerModel, Language: cmp.Or(ct.Language, "js"), Ceiling: ct.Ceiling,
		Observer: TraceSynth(tr), Progress: progress,
		// The writer's spend counts against the run whose create_tool
		// call caused it.
		OnUsage:    func(ctx context.Context, u llm.Usage) { loop.ReportUsage(ctx, u) },
		StagingDir: cmp.Or(ct.StagingDir, filepath.Join(pluginsDir(cfg.Plugins), "staging")),
	})
	if err != nil {
		return err
	}
	rt.builder = b
	rt.creator = b.CreateTool(rt.tools, synth.CreateToolOptions{Budget: ct.Budget})
	return rt.tools.Add(rt.creator)
}

func (rt *Runtime) openMemory(ctx context.Context, mc MemoryConfig, model llm.Provider) error {
	var m memory.Memory
	var err error
	switch mc.Kind {
	case "":
		return nil
	case "buffer":
		m, err = memory.NewBuffer(memory.BufferOptions{MaxMessages: mc.MaxMessages})
	case "summarizing":
		m, err = memory.NewSummarizing(memory.SummarizingOptions{Provider: model, MaxMessages: mc.MaxMessages})
	case "fact":
		opts := memory.FactOptions{Provider: model, Identity: mc.Identity, MaxMessages: mc.MaxMessages}
		if mc.Dir != "" {
			if err := os.MkdirAll(mc.Dir, 0o700); err != nil {
				return fmt.Errorf("memory directory: %w", err)
			}
			opts.Path = filepath.Join(mc.Dir, "facts.json")
		}
		var f *memory.Fact
		if f, err = memory.NewFact(ctx, opts); err == nil {
			rt.fact, m = f, f
		}
	default:
		return fmt.Errorf("%w: Memory.Kind %q: want buffer, summarizing or fact", ErrConfig, mc.Kind)
	}
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	rt.agent.Memory = m
	// The memory's tools (recall, and remember/forget where it has them).
	tools, err := memtool.All(m, memtool.Options{})
	if err != nil {
		return fmt.Errorf("memory tools: %w", err)
	}
	for _, t := range tools {
		if err := rt.tools.Add(t); err != nil {
			return fmt.Errorf("memory tools: %w", err)
		}
	}
	return nil
}

// Agent is the runtime's agent: run it with Run, Stream, RunMessages or
// Resume. Its fields may be adjusted before the first run.
func (rt *Runtime) Agent() *loop.Agent { return rt.agent }

// Tools is the registry the agent calls: Go tools, approved plugins
// (current with the directory), MCP tools, memory tools.
func (rt *Runtime) Tools() *tool.Registry { return rt.tools }

// Plugins is the plugins directory, nil without one.
func (rt *Runtime) Plugins() *plugindir.Dir { return rt.plugins }

// Sessions is the session store, nil without Config.Sessions.
func (rt *Runtime) Sessions() session.Store { return rt.sessions }

// Run runs the agent on prompt.
func (rt *Runtime) Run(ctx context.Context, prompt string) (*loop.Result, error) {
	return rt.agent.Run(ctx, prompt)
}

// SessionKey names a stored conversation: its user (a scope) and name
// (package session).
type SessionKey = session.Key

// ErrNoSessions is returned by Continue on a runtime without a session
// store (Config.Sessions).
var ErrNoSessions = errors.New("autoagent: this runtime has no session store (Config.Sessions)")

// Continue runs prompt as the next turn of session k: the stored
// conversation is the history, and when the run is done its new messages
// are appended to the session (a paused or failed run stores nothing, so
// the session never holds half a turn).
func (rt *Runtime) Continue(ctx context.Context, k SessionKey, prompt string) (*loop.Result, error) {
	if rt.sessions == nil {
		return nil, ErrNoSessions
	}
	stored, err := session.Messages(ctx, rt.sessions, k)
	if err != nil {
		return nil, err
	}
	history := append([]llm.Message{llm.SystemText(cmp.Or(rt.agent.System, loop.DefaultSystemPrompt))}, stored...)
	msgs := append(history, llm.UserText(prompt))
	res, runErr := rt.agent.RunMessages(ctx, msgs)
	if res != nil && res.StopReason == loop.StopDone {
		// The transcript may be compacted (memory), so the turn is found
		// from its end, not at len(history).
		turn := session.TurnOf(res.Messages, prompt)
		if turn == nil {
			return res, fmt.Errorf("session %s: the run's transcript lost the prompt; nothing stored", k)
		}
		// A run tainted by what the session does not keep (the facts a
		// memory showed) leaves a note that keeps the turn tainted.
		turn = session.TurnToStore(stored, turn, res.Tainted)
		if _, err := rt.sessions.Append(ctx, k, turn...); err != nil {
			return res, fmt.Errorf("session %s: store the turn: %w", k, err)
		}
	}
	return res, runErr
}

// Close stops the watcher and closes the MCP sessions, the plugins
// directory, the host, the memory and the trace file, in that order; what
// Config gave it (LLM, Sessions, TraceSinks, Tracer) is the caller's to
// close, after this. It is safe to call more than once.
func (rt *Runtime) Close(ctx context.Context) error {
	rt.closeOnce.Do(func() {
		var errs []error
		if rt.stopWatch != nil {
			rt.stopWatch()
			rt.watching.Wait()
		}
		if rt.creator != nil {
			rt.creator.Close(ctx)
		}
		if rt.builder != nil {
			rt.builder.Close(ctx)
		}
		for _, p := range rt.programs {
			errs = append(errs, p.Close(ctx))
		}
		if rt.recorder != nil {
			errs = append(errs, rt.recorder.Close())
		}
		if rt.checkpoints != nil {
			errs = append(errs, rt.checkpoints.Close())
		}
		for _, c := range rt.clients {
			errs = append(errs, c.Close())
		}
		if rt.plugins != nil {
			errs = append(errs, rt.plugins.Close(ctx))
		}
		for _, d := range rt.skillTools {
			errs = append(errs, d.Close(ctx))
		}
		if rt.host != nil {
			errs = append(errs, rt.host.Close(ctx))
		}
		if rt.fact != nil {
			errs = append(errs, rt.fact.Close())
		}
		if rt.workspaces != nil {
			errs = append(errs, rt.workspaces.Close())
		}
		if rt.cache != nil {
			errs = append(errs, rt.cache.Close())
		}
		if rt.tracer != nil {
			errs = append(errs, rt.tracer.Close())
		}
		rt.closeErr = errors.Join(errs...)
	})
	return rt.closeErr
}

// pluginsDir is the plugins directory p names: its Dir, else ./plugins.
func pluginsDir(p *PluginsConfig) string {
	if p == nil || p.Dir == "" {
		return "plugins"
	}
	return p.Dir
}
