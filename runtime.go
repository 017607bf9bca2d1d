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
	"sync"

	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/llm/cache"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/memtool"
	"github.com/autoagent-go/autoagent/policy"
	"github.com/autoagent-go/autoagent/retrieve"
	"github.com/autoagent-go/autoagent/session"
	"github.com/autoagent-go/autoagent/skills"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/autoagent-go/autoagent/workspace"
)

// Config is everything a Runtime is built from. Every field is optional
// but the model (LLM): the zero value of a field means none, or the
// default it names. What has weight (the model's HTTP client, a session
// database, an OpenTelemetry exporter, a provider in its own process)
// comes in as an interface, built by the package that owns it; the
// Runtime does not close what it is given.
type Config struct {
	// LLM is the model provider, and the one required field. Build it by
	// name with providers/catalog (catalog.New(catalog.Config{Name:
	// "openai"}) reads OPENAI_API_KEY), with a package of providers/ for
	// every option, or give your own llm.Provider: a go-plugin backend's
	// remote.Provider, an in-process model, a test double. The Runtime
	// does not close it.
	LLM llm.Provider
	// Model names the model each request asks for; "" leaves the choice
	// to the provider (its default, or the model it was built with).
	Model string
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
	// through tools (package skills). The WebAssembly modules a skill
	// ships in its tools/ folder load with the sandbox feature (package
	// sandbox), pending until approved in its manifest under the user's
	// trust store; without it, New notes them. A source not Trusted is
	// untrusted content: it taints the run.
	Skills []skills.Source
	// OutputSchema, when set, is the JSON Schema the final answer must
	// match (loop.Agent.Structured): Result.Structured holds the value.
	OutputSchema json.RawMessage

	// Tools are Go tools of the embedding program.
	Tools []tool.Tool
	// Workspace, when its Dir is set, gives the model read_file,
	// write_file, list_dir, list_changes and rollback over that directory
	// (package workspace): fenced to it, with its allowlists, every write
	// journaled and undoable. The files Protects names are never read or
	// written through it.
	Workspace WorkspaceConfig
	// Features are the parts with weight, each built by the package
	// that owns it: sandbox.Sandbox (plugins directory, code mode,
	// create_tool: the WASM host), mount.Servers (MCP servers). See
	// Feature; the root links none of them.
	Features []Feature

	// Policy decides every tool call before it runs; PolicyFile, when
	// Policy is nil, loads one (policy.Load: allow/deny/approve
	// rules).
	Policy     loop.Policy
	PolicyFile string
	// Memory compacts long conversations and, for facts, keeps what the
	// user said across sessions.
	Memory MemoryConfig
	// Retrieval puts passages relevant to each question, from documents,
	// the fact memory and stored sessions, before the model in one
	// bounded block: see RetrievalConfig. Off by default.
	Retrieval RetrievalConfig
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
	// directory, the fact memory, the trust store's directory, the
	// program's executable and what each Feature protects
	// (host.Options.Protected says how). Load adds the agent file.
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

// Runtime is a governed agent and what it owns: the provider, memory,
// tracing, policy, checkpoints, the workspace and what its features
// opened. Runs share it; Close releases everything.
type Runtime struct {
	agent       *loop.Agent
	tools       *tool.Registry
	tracer      *trace.Tracer // owned (TraceFile, TraceSinks)
	sessions    session.Store // not owned
	fact        *memory.Fact
	recorder    *loop.Recorder
	checkpoints *loop.FileStore
	workspace   *workspace.Workspace
	workspaces  *workspace.Set                // the run's workspace, and those of fs.workspace grants
	closers     []func(context.Context) error // the features', last first
	cache       *cache.Cache
	notes       io.Writer

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
		return nil, fmt.Errorf("%w: Config.LLM is required: build a provider by name with providers/catalog (catalog.New(catalog.Config{Name: \"openai\"})), or give any llm.Provider", ErrConfig)
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
	uncached := model // the provider itself, whose Embed retrieval uses
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
	if slices.Contains(cfg.Features, nil) {
		return nil, fmt.Errorf("%w: Features holds a nil feature", ErrConfig)
	}
	var skillModules []SkillModules
	if skillSet != nil {
		if skillModules, err = rt.offerSkills(skillSet); err != nil {
			return nil, err
		}
	}
	rt.agent = &loop.Agent{
		Provider:   model,
		Tools:      rt.tools,
		System:     knowledgePrompt(rulesText, skillSet, cfg.System),
		Model:      cfg.Model,
		Bounds:     cfg.Bounds,
		Tracer:     tr,
		Checks:     loop.Checks{Policy: cfg.Policy},
		Structured: loop.StructuredOutput{Schema: cfg.OutputSchema},
	}
	if cfg.Policy == nil && cfg.PolicyFile != "" {
		pol, err := policy.Load(cfg.PolicyFile)
		if err != nil {
			return nil, err
		}
		rt.agent.Checks.Policy = pol
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
	setup := &Setup{Agent: rt.agent, Tools: rt.tools, Provider: model, Model: cfg.Model,
		Tracer: tr, Protected: protected, Workspaces: rt.workspaces, Notes: rt.notes, skillModules: skillModules}
	for _, f := range cfg.Features {
		err := f.Start(ctx, setup)
		rt.closers = setup.closers
		if err != nil {
			return nil, err
		}
	}
	noteSkillModules(rt.notes, setup.skillModules)
	if err := rt.openMemory(ctx, cfg.Memory, model); err != nil {
		return nil, err
	}
	rt.sessions = cfg.Sessions
	if err := rt.openRetrieval(ctx, cfg.Retrieval, uncached); err != nil {
		return nil, err
	}
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
	rt.agent.Knowledge.Memory = m
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

// Tools is the registry the agent calls: Go tools, the workspace's, the
// features' (approved plugins, current with the directory; MCP tools),
// memory tools.
func (rt *Runtime) Tools() *tool.Registry { return rt.tools }

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
	// Retrieval from sessions searches this user's (retrieve.Sessions).
	res, runErr := rt.agent.RunMessages(retrieve.WithSession(ctx, k), msgs)
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

// Close closes what the features opened (last started first: the
// plugins watcher, MCP sessions, the host), then the recording, the
// checkpoint, the memory, the workspaces and the trace file, in that
// order; what Config gave it (LLM, Sessions, TraceSinks, Tracer) is the
// caller's to close, after this. It is safe to call more than once.
func (rt *Runtime) Close(ctx context.Context) error {
	rt.closeOnce.Do(func() {
		var errs []error
		for i := len(rt.closers) - 1; i >= 0; i-- {
			errs = append(errs, rt.closers[i](ctx))
		}
		if rt.recorder != nil {
			errs = append(errs, rt.recorder.Close())
		}
		if rt.checkpoints != nil {
			errs = append(errs, rt.checkpoints.Close())
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
