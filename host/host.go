package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/autoagent-go/autoagent/host/internal/kvcap"
	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// Options configure a [Host]. The zero value works: compiled modules are
// cached under the user cache directory, kv stores live under the user
// data directory, limits are [manifest.DefaultLimits], two instances per module are
// kept ready, and nothing is observed.
type Options struct {
	// CacheDir holds compiled machine code across processes, keyed by the
	// module's hash and the runtime version, written atomically so
	// concurrent processes may share it. Empty means
	// os.UserCacheDir()/autoagent/wazero; when that cannot be created the
	// cache is in memory only. A cache that cannot be written or read
	// later (a full disk, a read-only directory) never refuses a module:
	// it compiles without it, and Logger is told once.
	CacheDir string
	// NoDiskCache keeps compiled code in memory only.
	NoDiskCache bool
	// KVDir holds the kv: stores, one file per namespace. Empty means
	// $XDG_DATA_HOME/autoagent/kv, else ~/.local/share/autoagent/kv (the
	// user config directory on macOS and Windows).
	KVDir string
	// Limits are the defaults for every module's zero limits; zero fields
	// take manifest.DefaultLimits.
	Limits Limits
	// PoolSize is how many pre-initialised instances each module keeps
	// ready so a call rarely waits for instantiation. 0 means 2; a negative
	// value disables the pool (every call gets a new instance, or one an
	// earlier call left, reset to the module's snapshot). The pool is filled
	// in the background after each call that used an instance, one
	// instantiation at a time per module, never before the module's first
	// call: making an instance runs the module's initialisers with its
	// grants.
	PoolSize int
	// PoolMemory caps the memory the ready instances of every module's
	// pool hold together while idle; 0 means 256 MiB. A refill that would
	// pass it stops (calls then instantiate for themselves).
	PoolMemory int64
	// MaxCalls bounds the calls running at once across every module of
	// the host. Each running call may hold its memory limit, its open
	// files and an OS thread, so this bounds what they hold together; a
	// call past it waits for another to end, as long as its context
	// allows. A call nested in another (a tools: grant) runs in its
	// parent's turn and is not counted. 0 means 4 per CPU and at least 16;
	// a negative value means no bound.
	MaxCalls int
	// OnCall, when set, receives a record of every sandboxed call, after
	// the call, with the call's context (where the caller's trace span and
	// run are). It is called from the calling goroutine and must be safe
	// for concurrent use. Bridge it to the trace package (see
	// sandbox.TraceSandboxCalls).
	OnCall func(ctx context.Context, r CallRecord)
	// Logger receives guests' log_* messages (with attributes module and
	// tool). Nil discards them.
	Logger *slog.Logger
	// LookupEnv reads host environment variables for env: grants. Nil
	// means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Protected are the application's own directories and files no fs
	// grant may reach, beside the host's (its cache of compiled code, the
	// kv stores): a grant whose directory holds or lies in a protected
	// directory is refused at load, and a protected file inside a
	// granted directory is refused to the guest by its identity (device
	// and inode) under any name, before and after a rename. The autoagent
	// runtime protects the files that govern a run (policy, agent file,
	// checkpoint, sessions, trace, record), the backends directory, the
	// trust store and its own executable.
	Protected []manifest.Protected
	// Resolver resolves host names for the HTTP function. Nil means
	// net.DefaultResolver. Every resolved address is checked before it is
	// dialled.
	Resolver *net.Resolver
	// CallTool dispatches a guest's tool_call to a host tool named by a
	// tools: grant. The embedding application routes it through the same
	// policy, taint and approval gates as a call from the model; ctx is the
	// context of the sandboxed call. Nil refuses every tool_call.
	CallTool func(ctx context.Context, c tool.Call) (tool.Result, error)

	// Isolation chooses where code no person approved runs (Inspect, and
	// modules loaded with Module.Isolated): by default in a sandbox
	// process that re-executes this program, which the host kills when it
	// does not answer in time.
	Isolation Isolation
	// OnStuck, when set, is told of a call the host could not stop (see
	// [StuckCall]); the watchdog also logs it at error level. A stuck
	// guest that runs machine code cannot be preempted: the process should
	// be restarted.
	OnStuck func(StuckCall)
	// ModuleLimits bound what a module may declare (sizes, counts,
	// nesting, branches), checked before it is compiled; zero fields take
	// their defaults.
	ModuleLimits ModuleLimits
	// CompileTimeout bounds the compilation of one module; 0 means 2
	// minutes. A compilation is stopped once it has taken this long and
	// the process has used as much CPU time meanwhile, or has taken eight
	// times as long whatever the CPU: a loaded machine slows a compilation
	// without failing it. ModuleLimits keep real compilations far below it.
	CompileTimeout time.Duration
	// Deterministic gives every module a fixed clock (wall time from
	// 2022-01-01T00:00:00Z, monotonic from 0, each advancing 1 ms per
	// reading; sleeps return at once) and a generator with a fixed seed,
	// whatever its grants, so calls repeat exactly: for tests and replays
	// that compare tool results. By default modules see the real clock (to
	// the millisecond; to the microsecond with the clock grant) and
	// cryptographic randomness.
	Deterministic bool

	// Functions are the application's host functions, which a module may
	// import when granted host:NAMESPACE.NAME (see [Function]).
	Functions []Function

	// Journal opens the journal of the workspace rooted at dir, the
	// absolute directory of an fs.workspace grant, when a module with the
	// grant loads (once per grant and load). Under the grant the module
	// sees dir read-write, and the host calls the journal's Before for
	// each file before the call's first change of it (see [Journal]).
	// Nil refuses every fs.workspace grant at load (ErrNoJournal). The
	// host never closes a journal: the function may return one shared by
	// every module of a directory, and whoever made it closes it.
	Journal func(dir string) (Journal, error)

	// deadlines chooses how a running guest is stopped; only the overhead
	// benchmark sets it.
	deadlines deadlineMode
	// defect injects a defect into the rewrite (see rewrite.Options), or
	// with "nointerrupt" into the deadline handling, or with "reexport"
	// lets modules export their imports (defectReexport); only tests set
	// it.
	defect string
	// noSnapshots makes every instance run its module's initialisers, as
	// before snapshots; only the benchmarks comparing the two set it.
	noSnapshots bool
	// noResets closes every instance after its call, as the host did
	// before resets (see Loaded.resetsOn): for benchmarks and tests.
	noResets bool
	// watchdogGrace and watchdogTick replace the watchdog's, and
	// sandboxSlack the isolation's (see sandboxSlack); only tests set them.
	watchdogGrace, watchdogTick, sandboxSlack time.Duration
	// inGoHook, when set, runs where a guest enters the host's Go code
	// for op (see instance.enterGo); only tests set it, to hold a guest
	// there.
	inGoHook func(inst *instance, op string)
	// buildHook, when set, runs as a compilation starts, with its
	// builder's context (see Host.compile); only tests set it, to hold a
	// compilation while others wait for it.
	buildHook func(ctx context.Context) error
	// resetHook, when set, runs as each background reset ends ("end"),
	// before its instance is kept or closed, and before the instance is
	// closed ("close") (see resetPool.end); only tests set it, to hold a
	// reset while the host closes.
	resetHook func(stage string)
}

// deadlineMode is how the host stops a guest at its time limit.
type deadlineMode int

const (
	// deadlineInterrupt: the host sets the global that the checks rewrite
	// adds at every function entry and loop header (see rewrite).
	deadlineInterrupt deadlineMode = iota
	// deadlineRuntime: wazero's close-on-context-done, which exits to Go at
	// every loop iteration. Only for comparison.
	deadlineRuntime
	// deadlineOff: nothing stops a guest. Only for comparison.
	deadlineOff
)

// cacheSubdir keeps the code compiled in each mode apart: wazero's cache
// key does not include the close-on-context-done setting, so code compiled
// without its checks must never be found by a runtime that relies on them.
func (m deadlineMode) cacheSubdir() string {
	return [...]string{"", "runtime-checks", "no-checks"}[m]
}

// Host runs sandboxed tool modules. Create one per process with [New] and
// share it: it is safe for concurrent use, compiles each distinct module
// once, and owns the runtime every module runs in.
type Host struct {
	opts      Options
	functions functions // opts.Functions, indexed
	limits    Limits
	// moduleLimits and compileTimeout are opts' with defaults applied.
	moduleLimits   wasmbin.Limits
	compileTimeout time.Duration
	cache          wazero.CompilationCache
	// kernel is the first runtime's kernel, for what every runtime's
	// kernel has alike (its exports, its layout, its memory at start).
	kernel *kernelRuntime
	// gen is the runtime new modules compile into; gens every runtime
	// not yet closed (see runtimeGen). genMu serialises making one.
	gen   *runtimeGen
	gens  map[*runtimeGen]bool
	genMu sync.Mutex
	// cacheDir is the on-disk cache, "" when the cache is in memory;
	// cacheWarn logs once that it cannot be written.
	cacheDir  string
	cacheWarn sync.Once
	artifacts artifacts
	kv        *kvcap.Stores
	// refill holds a slot per background instantiation (see pool).
	refill chan struct{}
	// calls holds a slot per outermost call running (Options.MaxCalls);
	// nil without a bound.
	calls chan struct{}
	// watch follows every running guest (see watchdog).
	watch *watchdog
	// idleMem and idleFiles are the memory and the open files of every
	// pool's ready instances; poolMemory and maxIdleFiles their bounds.
	idleMu     sync.Mutex
	idleMem    int64
	idleFiles  int64
	poolMemory int64

	mu       sync.Mutex
	compiled map[string]*compiledEntry // by sha256
	loaded   map[*Loaded]bool          // modules loaded and not yet freed
	// compiles are the compilations in progress, each stopped by Close.
	compiles map[*context.CancelCauseFunc]bool
	closed   bool
	// shut is set for the call path, which does not take mu: new calls
	// fail and running guests stop at their next yield.
	shut atomic.Bool
	// busy counts the Loads and Inspects in progress; Close waits for them.
	busy sync.WaitGroup
	// done is closed, and closeErr set, once Close has freed everything.
	done     chan struct{}
	closeErr error
}

// New returns a Host configured by opts.
func New(ctx context.Context, opts Options) (*Host, error) {
	limits := opts.Limits.WithDefaults(manifest.DefaultLimits())
	if err := limits.Validate(); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	if opts.PoolSize == 0 {
		opts.PoolSize = 2
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	cache, cacheDir, err := newCompilationCache(opts)
	if err != nil {
		return nil, err
	}
	if opts.CompileTimeout == 0 {
		opts.CompileTimeout = defaultCompileTimeout
	}
	// A copy: the caller's slice may change after New.
	fs, err := newFunctions(slices.Clone(opts.Functions))
	if err != nil {
		return nil, err
	}
	h := &Host{
		functions:      fs,
		opts:           opts,
		limits:         limits,
		moduleLimits:   opts.ModuleLimits.wasmbin(),
		compileTimeout: opts.CompileTimeout,
		cache:          cache,
		gens:           map[*runtimeGen]bool{},
		cacheDir:       cacheDir,
		artifacts:      artifacts{dir: cacheDir},
		kv:             kvcap.NewStores(opts.KVDir),
		refill:         make(chan struct{}, refillSlots()),
		compiled:       map[string]*compiledEntry{},
		compiles:       map[*context.CancelCauseFunc]bool{},
		loaded:         map[*Loaded]bool{},
		done:           make(chan struct{}),
	}
	h.watch = newWatchdog(h)
	if n := opts.MaxCalls; n >= 0 {
		if n == 0 {
			n = max(16, 4*runtime.GOMAXPROCS(0))
		}
		h.calls = make(chan struct{}, n)
	}
	h.poolMemory = opts.PoolMemory
	if h.poolMemory <= 0 {
		h.poolMemory = 256 << 20
	}
	g, err := h.newGen(ctx)
	if err != nil {
		_ = cache.Close(ctx)
		return nil, err
	}
	h.gen, h.gens[g], h.kernel = g, true, g.kernel
	return h, nil
}

// newCompilationCache opens the on-disk cache, falling back to memory when
// the directory cannot be used (a read-only home must not stop the host).
func newCompilationCache(opts Options) (wazero.CompilationCache, string, error) {
	if opts.NoDiskCache {
		return wazero.NewCompilationCache(), "", nil
	}
	dir := opts.CacheDir
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return wazero.NewCompilationCache(), "", nil
		}
		dir = filepath.Join(base, "autoagent", "wazero")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return wazero.NewCompilationCache(), "", nil
		}
	}
	if sub := opts.deadlines.cacheSubdir(); sub != "" {
		dir = filepath.Join(dir, sub)
	}
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		if opts.CacheDir != "" {
			return nil, "", fmt.Errorf("host: compilation cache %s: %w", dir, err)
		}
		return wazero.NewCompilationCache(), "", nil
	}
	return c, dir, nil
}

// cacheBase is the on-disk cache's directory as Options.CacheDir names
// it (without the deadline mode's subdirectory), "" when it is in memory.
// A sandbox process shares it: see RATIONALE.md "Why does the sandbox
// process share the compilation cache?".
func (h *Host) cacheBase() string {
	if h.cacheDir == "" {
		return ""
	}
	if h.opts.deadlines.cacheSubdir() != "" {
		return filepath.Dir(h.cacheDir)
	}
	return h.cacheDir
}

// purgeCache deletes the compiled code on disk after wazero found an
// unreadable entry (a torn write, a disk error): it is only a cache, and
// the module is compiled again.
func (h *Host) purgeCache() {
	if h.cacheDir == "" {
		return
	}
	versions, _ := filepath.Glob(filepath.Join(h.cacheDir, "wazero-*"))
	for _, v := range versions {
		entries, _ := os.ReadDir(v)
		for _, e := range entries {
			if !e.IsDir() {
				_ = os.Remove(filepath.Join(v, e.Name()))
			}
		}
	}
}

// Close stops the host: later calls and loads fail with ErrClosed, calls
// in flight end with ErrClosed at their guest's next yield (a guest blocked
// in a host function, such as an HTTP request, at the end of that
// function's own time limit), loads compiling a module end with ErrClosed
// once the function being compiled is (ModuleLimits.FunctionWork bounds
// it), and once they have, every loaded module and the runtime are
// freed. When ctx ends first, Close returns its error and the freeing
// happens when the last call ends (call Close again to wait).
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	first := !h.closed
	h.closed = true
	for stop := range h.compiles {
		(*stop)(ErrClosed)
	}
	h.mu.Unlock()
	if first {
		h.shut.Store(true)
		go h.free()
	}
	select {
	case <-h.done:
		return h.closeErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// free closes every module once the loads in progress are over, then the
// runtime, which must not free memory a guest still runs in.
func (h *Host) free() {
	h.busy.Wait()
	h.mu.Lock()
	loaded := make([]*Loaded, 0, len(h.loaded))
	for l := range h.loaded {
		loaded = append(loaded, l)
	}
	h.mu.Unlock()
	ctx := context.Background()
	for _, l := range loaded {
		_ = l.Close(ctx)
	}
	errs := []error{}
	h.mu.Lock()
	for g := range h.gens {
		errs = append(errs, g.rt.Close(ctx))
	}
	clear(h.gens)
	h.mu.Unlock()
	h.closeErr = errors.Join(append(errs, h.cache.Close(ctx))...)
	h.watch.close()
	close(h.done)
}

// begin registers a load or inspection, failing once the host is closed.
func (h *Host) begin() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	h.busy.Add(1)
	return nil
}

// Limits returns the host's default limits.
func (h *Host) Limits() Limits { return h.limits }
