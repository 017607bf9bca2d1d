package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host/internal/fscap"
	"github.com/autoagent-go/autoagent/host/internal/kvcap"
	"github.com/autoagent-go/autoagent/host/internal/netcap"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// Module is a tool module to load: its bytes and what it may do.
type Module struct {
	// Name names the module in errors and records, e.g. "fetch_url".
	Name string
	// Bytes is the WebAssembly binary. These exact bytes are hashed and
	// compiled; the host never re-reads a path.
	Bytes []byte
	// Grants are the capabilities the module gets (docs/ARCHITECTURE.md §4). Nothing
	// else is available to it.
	Grants []manifest.Grant
	// Limits bound each call; zero fields take the Host's defaults.
	Limits Limits
	// Sidecar is the describe document (NAME.tool.json) of a WASI command
	// module. An Extism plugin may have one instead of a describe export;
	// when both exist the sidecar wins and describe does not run.
	Sidecar []byte
	// Config is extra Extism config the embedding application gives the
	// module (config_get), beside the granted env: variables.
	Config map[string]string
	// Reuse lets a Extism plugin instance serve further calls after a
	// successful one instead of being discarded. It is faster but lets
	// state (globals, memory) carry over between calls; off by default.
	Reuse bool
	// Isolated runs the module in a sandbox process (see Options.Isolation)
	// instead of this one: for code no person approved, such as a plugins
	// directory's quarantined modules. It must have no grants. Calls cost
	// an exchange with the process (tens of microseconds) and run one at a
	// time. Its tools are flagged Untrusted, wherever it runs: what code
	// no person approved returns is framed as data and taints the run.
	Isolated bool
	// CallAnyTool lets the module call any host tool through tool_call,
	// as if granted tools:NAME for every name: the dispatcher
	// (Options.CallTool) alone decides which calls run. It is for an
	// embedding application's own modules whose calls its gate checks one
	// by one (code mode's program engine, codemode/jsprogram); a manifest
	// cannot express it, so no dropped-in module gets it.
	CallAnyTool bool
	// Deterministic gives this module what Options.Deterministic gives
	// every module: a fixed clock and a seeded random source, whatever its
	// grants, so that a call made again with the same input makes the same
	// calls and returns the same result. Its instances still start from a
	// snapshot, which keeps where the fixed clock and the generator stood
	// after the initialisers, so SharedSeeds changes nothing for it.
	Deterministic bool
	// SharedSeeds lets the module's instances start from one snapshot
	// even though its initialisers read the clock or randomness: every
	// instance then shares what they derived from them. For a Go guest
	// (whose runtime reads both as it starts) that is the runtime's hash
	// seed and the state of math/rand's default generator, which then
	// gives the same numbers in every call; crypto/rand reads the
	// system's generator at every call and is unaffected, and the clock
	// reads the time at every call. Without it such a module runs its
	// initialisers in every instance. A module may declare it itself by
	// exporting a function named autoagent_shared_seeds (host/ABI.md §1),
	// as the JavaScript engine does. See RATIONALE.md "Why are snapshots
	// safe, and when are they not used?" and "Why does the JavaScript
	// engine seed Math.random during the call?".
	SharedSeeds bool
}

// Loaded is a module ready to be called. Its tools are safe for concurrent
// use. Close it when the module is unloaded.
type Loaded struct {
	h      *Host
	name   string
	sha    string
	abi    ABI
	entry  *compiledEntry // nil once the module is closed and idle
	grants []manifest.Grant
	has    map[string]bool // granted kinds, and "clock"/"random"
	limits Limits
	desc   Description
	tools  []tool.Tool
	reuse  bool
	// anyTool: the module may call any host tool (Module.CallAnyTool).
	anyTool bool
	// deterministic: fixed clock and random source (Module.Deterministic).
	deterministic bool
	// unapproved: the module was loaded Isolated, as code no person
	// approved; its tools are untrusted (see toolFlags).
	unapproved bool
	// extismInit: a command module with a tool of an export other than
	// _start, whose instances get an Extism plugin's runtime
	// initialisation (a command's _start does its own).
	extismInit bool
	// exportTools: some tool calls an export (ToolDescription.Export),
	// so every instance gets Extism memory, imported or not.
	exportTools bool
	// single serves a stateful module (one that says its lists changed):
	// one instance for every call, nil for other modules.
	single *singleInstance
	// onListChanged, when set (by the Dir that loaded the module), is
	// called after a stateful module's lists changed; under mu.
	onListChanged func()

	env    [][2]string       // granted env variables that are set
	config map[string]string // Extism config
	roots  []*os.Root
	mounts []fscap.Mount // the fs grants' directories, mounted per instance
	// baseConfig is what every instance's module config shares (name,
	// arguments, environment), made once: each With of wazero's config
	// copies it.
	baseConfig     wazero.ModuleConfig
	baseConfigOnce sync.Once
	net            *netcap.Policy // nil without a net: grant
	kv             kvcap.Access   // the kv: grants' namespaces

	pool *pool
	// remote is the sandbox process of an isolated module, nil otherwise.
	remote *remote
	// memHint is the largest guest memory an instance had after its
	// start-up, the size a new instance's memory starts at; spares are the
	// memory buffers of closed instances.
	memHint atomic.Int64
	spares  spares
	// snaps is the snapshot the Loaded's instances start from (see
	// snapshot.go): one per Loaded, so per module and grant set.
	snaps snapshots
	// resets are instances reset to the snapshot after their calls.
	resets resetPool

	mu      sync.Mutex
	closed  bool
	calls   int           // calls in flight
	drained bool          // closed, and the pool has stopped
	idle    chan struct{} // closed once drained and no call is in flight
}

// protected are the host's directories no fs grant may reach: its cache of
// compiled code (a module able to write there could put machine code in
// the host) and the kv stores (every module's data), and the
// application's (Options.Protected).
func (h *Host) protected() []manifest.Protected {
	return append([]manifest.Protected{
		{Dir: h.cacheBase(), What: "the host's cache of compiled modules, where a module able to write could put machine code the host runs"},
		{Dir: h.kv.Dir(), What: "the kv stores of every module", Read: true},
	}, h.opts.Protected...)
}

// guard is what guards the mounts of a module: the protected files.
func (h *Host) guard() *fscap.Guard {
	var files []string
	for _, p := range h.opts.Protected {
		if p.File != "" {
			files = append(files, p.File)
		}
	}
	return fscap.NewGuard(files)
}

// describeTimeout caps a describe call, whatever the module's limit.
const describeTimeout = 5 * time.Second

// Load compiles m (once per distinct bytes), checks its imports against its
// grants, reads its describe document with no capabilities, and returns
// the module with one tool.Tool per described tool.
//
// It fails with an error wrapping ErrMalformed, ErrNoABI or ErrDescribe, an
// *ImportError naming an import the module may not use, a *LimitError
// when the module needs more memory at start than its limit, or a
// *manifest.ProtectedError when an fs grant reaches the host's cache of
// compiled code (fs.write) or the kv stores (fs.read or fs.write).
func (h *Host) Load(ctx context.Context, m Module) (*Loaded, error) {
	if m.Name == "" {
		m.Name = "module"
	}
	limits := m.Limits.WithDefaults(h.limits)
	if err := limits.Validate(); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	if err := manifest.CheckProtected(m.Grants, h.protected()); err != nil {
		return nil, fmt.Errorf("host: module %q: %w", m.Name, err)
	}
	for _, g := range m.Grants {
		if g.Kind == manifest.KindFSWorkspace && h.opts.Journal == nil {
			return nil, fmt.Errorf("host: module %q: grant %s: %w: set host.Options.Journal (the autoagent runtime sets it to open the workspace), or grant fs.write to let the module change the directory unrecorded", m.Name, g, ErrNoJournal)
		}
	}
	if err := h.begin(); err != nil {
		return nil, err
	}
	defer h.busy.Done()
	if m.Isolated && m.CallAnyTool {
		return nil, fmt.Errorf("host: module %q: an isolated module runs with no grants, so it cannot be given CallAnyTool", m.Name)
	}
	if m.Isolated && h.isolated() {
		return h.loadIsolated(ctx, m, limits)
	}
	sha := manifest.Sum(m.Bytes)
	entry, err := h.compile(ctx, sha, m.Bytes, limits.Tables)
	if err != nil {
		return nil, compileErr(m.Name, err)
	}
	l := &Loaded{
		h: h, name: m.Name, sha: sha, abi: entry.abi, entry: entry, idle: make(chan struct{}),
		grants: slices.Clone(m.Grants), limits: limits, reuse: m.Reuse && entry.abi == ABIExtism,
		has: map[string]bool{}, unapproved: m.Isolated,
		anyTool: m.CallAnyTool, deterministic: m.Deterministic,
	}
	l.snaps.sharedSeeds = m.SharedSeeds || entry.sharedSeeds
	if err := l.setup(ctx, m); err != nil {
		l.closeResources()
		return nil, err
	}
	l.spares.max = max(h.opts.PoolSize, 0) + 2
	switch {
	case l.has[string(manifest.KindState)] && l.abi == ABIExtism && !m.Isolated:
		// One instance, kept across calls, as hyper-mcp runs a plugin: a
		// person granted it (see RATIONALE.md "Why is keeping state
		// between calls a grant?").
		l.single, l.reuse = &singleInstance{}, true
	case entry.stateful && !m.Isolated:
		// A hyper-mcp plugin that says its lists change, without the
		// grant: a fresh instance per call, whose lists are read again
		// after a call that changed them.
		if lg := h.opts.Logger; lg != nil {
			lg.Info("the module imports notify_*_list_changed but was not granted state: each call gets a fresh instance, which remembers nothing of the calls before", "module", m.Name)
		}
		l.pool = newPool(l, h.opts.PoolSize)
	default:
		l.pool = newPool(l, h.opts.PoolSize)
	}
	h.mu.Lock()
	h.loaded[l] = true
	h.mu.Unlock()
	return l, nil
}

func (l *Loaded) setup(ctx context.Context, m Module) error {
	for _, g := range l.grants {
		l.has[string(g.Kind)] = true
		if g.Kind == manifest.KindHost {
			l.has[g.String()] = true
		}
		if g.IsFS() {
			l.has["fs"] = true
		}
	}
	if l.anyTool {
		l.has[string(manifest.KindTools)] = true
	}
	if err := l.h.checkImports(l.name, l.entry, false); err != nil {
		return err
	}
	if l.entry.minMem > l.limits.Memory {
		return fmt.Errorf("host: module %q needs %s of memory at start: %w",
			l.name, formatBytes(l.entry.minMem), limitErr(LimitMemory, l.limits.Memory))
	}
	if err := l.setupGrants(m.Config); err != nil {
		return err
	}
	desc, err := l.h.describe(ctx, l.entry, l.name, m.Sidecar, l.limits)
	if err != nil {
		return err
	}
	if m.Sidecar != nil {
		for k, v := range desc.desc.Config {
			if _, set := l.config[k]; !set {
				l.config[k] = v
			}
		}
	}
	return l.setTools(desc)
}

// setTools makes the described tools (and prompts and resources) the
// module's; at load, and again when a stateful module says its lists
// changed.
func (l *Loaded) setTools(desc described) error {
	var tools []tool.Tool
	extismInit := false
	for i, td := range desc.desc.Tools {
		if err := l.checkExport(td); err != nil {
			return err
		}
		if td.Export != "" && td.Export != "_start" {
			extismInit = true
		}
		flags := l.toolFlags(td.Annotations)
		desc.desc.Tools[i].Annotations = grantedAnnotations(td.Annotations, flags)
		tools = append(tools, &moduleTool{
			l: l, name: td.Name, in: desc.in[i], out: desc.out[i], export: td.Export,
			spec:      toolSpec(td),
			flags:     flags,
			prefix:    l.callPrefix(td.Name),
			suffix:    l.callSuffix(),
			anyObject: acceptsAnyObject(desc.in[i].JSON()),
		})
	}
	l.mu.Lock()
	l.desc, l.tools = desc.desc, tools
	l.extismInit = l.extismInit || extismInit
	l.mu.Unlock()
	return nil
}

// toolFlags returns the flags of a tool of l with annotations a: those
// its grants and annotations give (flagsFor), and Untrusted for a module
// no person approved (Module.Isolated). Such a module has no grants, so
// nothing else would mark it, yet whatever it returns is its unknown
// author's words.
func (l *Loaded) toolFlags(a *Annotations) tool.Flags {
	f := flagsFor(l.grants, a, l.h.functions)
	if l.unapproved {
		f.Untrusted = true
	}
	return f
}

// checkExport checks the export a tool of a sidecar names (see
// ToolDescription.Export): an Extism function, () -> i32, or a command's
// _start, in a module that has Extism memory for its input and output.
func (l *Loaded) checkExport(td ToolDescription) error {
	if td.Export == "" {
		if l.abi == ABIExtism && !l.entry.v2 && l.entry.mod.ExportedFunctions()["call"] == nil {
			return fmt.Errorf("host: module %q: %w: tool %q: the module exports no call function; a sidecar names the export each tool calls (\"export\")", l.name, ErrDescribe, td.Name)
		}
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("host: module %q: %w: tool %q: export %q %s", l.name, ErrDescribe, td.Name, td.Export, fmt.Sprintf(format, args...))
	}
	def := l.entry.mod.ExportedFunctions()[td.Export]
	switch {
	case def == nil:
		return bad("is not a function the module exports")
	case len(def.ParamTypes()) > 0 || len(def.ResultTypes()) > 1 || len(def.ResultTypes()) == 1 && def.ResultTypes()[0] != api.ValueTypeI32:
		return bad("has type %s; an Extism function takes nothing and returns an i32 (or nothing)", signature(def))
	}
	l.exportTools = true
	return nil
}

// setupGrants prepares what the grants give: env, config, preopened
// directories, the HTTP client, kv namespaces.
func (l *Loaded) setupGrants(extra map[string]string) error {
	l.config = map[string]string{}
	for k, v := range extra {
		l.config[k] = v
	}
	var netGrants []manifest.Grant
	var guard *fscap.Guard
	for _, g := range l.grants {
		switch g.Kind {
		case manifest.KindEnv:
			if v, ok := l.h.opts.LookupEnv(g.Name); ok {
				l.env = append(l.env, [2]string{g.Name, v})
				l.config[g.Name] = v
			}
		case manifest.KindConfig:
			if v, ok := g.ConfigValue(l.h.opts.LookupEnv); ok {
				l.config[g.Name] = v
			}
		case manifest.KindFSRead, manifest.KindFSWrite, manifest.KindFSWorkspace:
			root, err := os.OpenRoot(g.Path)
			if err != nil {
				return fmt.Errorf("host: module %q: grant %s: %w", l.name, g, err)
			}
			l.roots = append(l.roots, root)
			at := g.Path
			if g.Guest != "" {
				at = g.Guest
			}
			for _, m := range l.mounts {
				if m.Path == at {
					return fmt.Errorf("host: module %q: grant %s: another fs grant already appears at %s", l.name, g, at)
				}
			}
			if guard == nil {
				guard = l.h.guard()
			}
			m := fscap.Mount{Root: root, Path: at, ReadOnly: g.Kind == manifest.KindFSRead, Guard: guard}
			if g.Kind == manifest.KindFSWorkspace {
				j, err := l.h.opts.Journal(g.Path)
				if err == nil && j == nil {
					err = errors.New("Options.Journal returned no journal")
				}
				if err != nil {
					return fmt.Errorf("host: module %q: grant %s: opening the workspace journal: %w", l.name, g, err)
				}
				m.Journal, m.Hidden = j, JournalDir
			}
			l.mounts = append(l.mounts, m)
		case manifest.KindNet:
			netGrants = append(netGrants, g)
		case manifest.KindKV:
			l.kv.Namespaces = append(l.kv.Namespaces, g.Name)
		}
	}
	l.kv.Stores = l.h.kv
	if len(netGrants) > 0 {
		l.net = netcap.NewPolicy(netGrants, l.h.opts.Resolver)
	}
	return nil
}

// described is a validated describe document with compiled schemas.
type described struct {
	desc    Description
	in, out []*tool.Schema
}

// describe reads the module's describe document: the sidecar when given,
// else the output of its describe export run with no capabilities (cached
// on disk for large modules, see artifacts).
func (h *Host) describe(ctx context.Context, e *compiledEntry, name string, sidecar []byte, limits Limits) (described, error) {
	raw := sidecar
	if raw == nil {
		var err error
		if raw, err = h.runDescribe(ctx, e, name, limits); err != nil {
			return described{}, err
		}
	}
	d, in, out, err := parseDescription(raw)
	if err != nil {
		return described{}, fmt.Errorf("host: module %q: %w", name, err)
	}
	return described{d, in, out}, nil
}

// runDescribe returns the output of the module's describe export.
func (h *Host) runDescribe(ctx context.Context, e *compiledEntry, name string, limits Limits) ([]byte, error) {
	if e.abi == ABIWASICommand {
		return nil, fmt.Errorf("host: module %q: %w: a WASI command module needs a sidecar %s.tool.json", name, ErrDescribe, name)
	}
	describe := "describe"
	if e.v2 {
		describe = "list_tools"
	}
	if e.mod.ExportedFunctions()[describe] == nil {
		return nil, fmt.Errorf("host: module %q: %w: it exports no %s function and has no sidecar %s.tool.json", name, ErrDescribe, describe, name)
	}
	dl := &Loaded{h: h, name: name, abi: e.abi, entry: e, has: map[string]bool{}, limits: limits}
	dl.limits.Timeout = min(limits.Timeout, describeTimeout)
	dl.limits.Output = MaxDescribe
	key := fmt.Sprintf("%s-%s-%s-%d-%d", e.sha, describeVersion, rewriteVersion, dl.limits.Memory, dl.limits.Timeout)
	cache := e.size >= artifactMinSize
	if cache {
		if cached := h.artifacts.get("describe", key); cached != nil {
			if _, _, _, err := parseDescription(cached); err == nil {
				return cached, nil
			}
		}
	}
	out, err := dl.describeOnce(ctx)
	if err != nil {
		return nil, fmt.Errorf("host: module %q: %w: describe failed: %w", name, ErrDescribe, err)
	}
	if _, _, _, err := parseDescription(out); err == nil && cache {
		h.artifacts.put("describe", key, out)
	}
	return out, nil
}

func (l *Loaded) describeOnce(ctx context.Context) ([]byte, error) {
	if l.entry.v2 {
		return l.describeV2(ctx)
	}
	return l.describeExport(ctx, "describe")
}

// describeExport runs one export of the module as describe runs: in a new
// instance with no capabilities.
func (l *Loaded) describeExport(ctx context.Context, export string) ([]byte, error) {
	inst, err := l.newInstance(ctx, true)
	if err != nil {
		return nil, err
	}
	defer inst.close()
	inst.fn = inst.mod.ExportedFunction(export)
	var input callInput
	if l.entry.v2 {
		input = callInput{v2ListInput}
	}
	out, failure, err := inst.run(ctx, "describe", input)
	if err != nil {
		return nil, err
	}
	if failure != "" {
		return nil, errors.New(failure)
	}
	return bytes.Clone(out), nil
}

// compileErr names the module in an error of compile.
func compileErr(name string, err error) error {
	var ie *ImportError
	if errors.As(err, &ie) {
		named := *ie // the compiled entry, and its error, are shared
		named.Module = name
		return &named
	}
	return fmt.Errorf("host: module %q: %w", name, err)
}

// Tools returns the module's tools, in describe order.
func (l *Loaded) Tools() []tool.Tool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.tools)
}

// Tool returns the tool named name.
func (l *Loaded) Tool(name string) (tool.Tool, bool) {
	for _, t := range l.Tools() {
		if t.Spec().Name == name {
			return t, true
		}
	}
	return nil, false
}

// Name returns the module's name.
func (l *Loaded) Name() string { return l.name }

// SHA256 returns the hex sha256 of the module's bytes, the bytes compiled.
func (l *Loaded) SHA256() string { return l.sha }

// ABI returns how the host talks to the module.
func (l *Loaded) ABI() ABI { return l.abi }

// Describe returns the module's describe document: its tools and the
// capabilities it asks for. Each tool's annotations are as its grants
// allow them: a module granted effects is not read-only, idempotent or
// non-destructive, whatever it said (see [Annotations]).
func (l *Loaded) Describe() Description {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.desc
}

// Grants returns the module's grants.
func (l *Loaded) Grants() []manifest.Grant { return slices.Clone(l.grants) }

// Limits returns the module's limits, defaults applied.
func (l *Loaded) Limits() Limits { return l.limits }

// Close unloads the module: pooled instances are freed and later calls
// fail with ErrClosed at once. Calls in flight finish first: Close waits for
// them, and when ctx ends before they do it returns ctx's error while the
// module is freed after the last one (call Close again to wait).
func (l *Loaded) Close(ctx context.Context) error {
	l.mu.Lock()
	first := !l.closed
	l.closed = true
	l.mu.Unlock()
	if first {
		if l.pool != nil {
			l.pool.close()
		}
		l.resets.close(l.h)

		l.mu.Lock()
		l.drained = true
		if l.calls == 0 {
			l.finish()
		}
		l.mu.Unlock()
	}
	select {
	case <-l.idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish frees the module's resources once it is closed and idle; l.mu is
// held.
func (l *Loaded) finish() {
	l.closeResources()
	close(l.idle)
}

func (l *Loaded) closeResources() {
	l.h.mu.Lock()
	delete(l.h.loaded, l)
	l.h.mu.Unlock()
	if s := l.single; s != nil && s.inst != nil {
		// No call is running: the module is idle.
		s.inst.close()
		s.inst = nil
	}
	// A call that ended after Close emptied the resets kept nothing
	// (resetPool.close); this is the host's last word on it.
	l.resets.close(l.h)
	for _, r := range l.roots {
		_ = r.Close()
	}
	l.roots = nil
	l.spares.free()
	if l.remote != nil {
		l.remote.close()
	}
	if l.net != nil {
		l.net.Close()
	}
	if l.entry != nil {
		l.h.release(l.entry)
		l.entry = nil
	}
}

// isClosed reports whether Close was called.
func (l *Loaded) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// enter registers a call, failing once the module is closed.
func (l *Loaded) enter() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.h.shut.Load() {
		return ErrClosed
	}
	if l.entry != nil && l.entry.stuck.Load() {
		return errStuck(l.name)
	}
	l.calls++
	return nil
}

// leave ends a call registered by enter; the last call after Close frees
// the module.
func (l *Loaded) leave() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls--
	if l.drained && l.calls == 0 {
		l.finish()
	}
}

// config returns a config value for config_get, recording env use.
func (inst *instance) Config(key string) (string, bool) {
	if inst.describing {
		return "", false
	}
	v, ok := inst.l.config[key]
	if ok {
		for _, kv := range inst.l.env {
			if kv[0] == key {
				inst.Use("env:" + key)
			}
		}
	}
	return v, ok
}
