package host

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/autoagent-go/autoagent/host/internal/fscap"
	"github.com/autoagent-go/autoagent/host/internal/kernel"
	"github.com/autoagent-go/autoagent/host/internal/kernelfn"
	"github.com/autoagent-go/autoagent/host/internal/netcap"
	"github.com/autoagent-go/autoagent/host/internal/rewrite"
)

// instanceKey finds the running instance in a host function's context.
type instanceKey struct{}

// instance is one instantiation of a module. It serves one call (or, for
// a module with Reuse, calls one after another), never two at once.
type instance struct {
	l      *Loaded
	limits Limits
	mod    api.Module
	linear *linearMemory // the guest's memory
	kmem   *linearMemory // the kernel's memory, nil without a kernel
	k      kernel.Memory // the kernel instance's blocks
	vars   kernel.Vars   // the Extism variables
	net    *netcap.Session
	fn     api.Function // `call` (Extism) or `_start` (WASI command)
	// raw is set while fn is an export tool's function, which takes its
	// input and gives its output through Extism memory (runExport).
	raw bool
	// deadline, until the instance's first run, is the one it was made
	// under: a call that instantiates for itself is bounded by one time
	// limit in all. Zero once consumed, or for a pool's ready instance.
	deadline time.Time
	// runDeadline is the deadline of the instance's last run: a re-read
	// of the module's lists after a call (redescribe) is part of the call
	// and ends by it.
	runDeadline time.Time
	stack       [1]uint64 // fn's parameters and results
	// cur is the run in progress (see runContext), timer the instance's
	// deadline timer, reset for each run. deadlinePassedFunc and
	// parentEndedFunc are the methods as func values, made with the
	// instance (a method value made at every run is an allocation).
	cur                                 atomic.Pointer[runContext]
	timer                               *time.Timer
	deadlinePassedFunc, parentEndedFunc func()
	// stopRequested asks the guest to stop at its next yield (see
	// rewrite); interrupted records that it was asked, after which the
	// instance must not run again.
	stopRequested atomic.Bool
	interrupted   bool
	// watch is the watchdog's view of the instance.
	watch watchView
	// recycle is set by close: the host closes the instance itself, so its
	// memory may serve another instance.
	recycle bool

	// running is set while a guest function of the instance runs; the
	// reservations the runtime freed meanwhile wait in unmap until it
	// returns.
	runMu        sync.Mutex
	running      atomic.Bool
	unmapPending atomic.Bool
	unmap        [][]byte

	// fs counts the guest's open files under its fs grants and the bytes
	// the running call wrote there (see fscap).
	fs fscap.Usage

	// tainted is set once the instance served a caller that had seen
	// untrusted content, or read a value such a caller wrote: its memory
	// may hold it for the calls it serves next.
	tainted bool

	// idleMem and idleFiles are what the instance is charged to the
	// host's idle budgets while it waits in a pool.
	idleMem, idleFiles int64

	// tree is the call tree the instance serves during a call, and
	// treeCharged the bytes of its memory charged to it.
	tree        *callTree
	treeCharged int64
	// node is the instance's place in the tree during a call, rootTree
	// the tree itself when the call is outermost.
	node     callNode
	rootTree callTree

	// stubs stand in for host functions this host lacks, for describe
	// under Inspect (see stubFunctions).
	stubs map[string]api.Module

	stdin  swapReader
	stdout cappedBuffer
	stderr cappedBuffer

	// describing is set while the instance serves a describe, which
	// runs with no capabilities.
	describing bool
	// readEntropy is set once the guest read the real clock or
	// randomness (granted or not): a snapshot of its initialisers' state
	// would share a seed they drew from either.
	readEntropy bool
	// fake is a deterministic instance's clock and generator, nil for
	// others (and while describing).
	fake *fakeSources

	// call is the state of the call in progress, reset by begin.
	call callState

	// failed is set once a guest function of the instance returned an
	// error (a trap, an exit, an interruption), changedState once the
	// guest called a WASI function that may change its WASI state: either
	// keeps the instance from being reset (see whyNoReset).
	failed, changedState bool
	// resetGlobals are the globals reset sets, found at its first reset
	// (see instance.reset).
	resetGlobals []api.MutableGlobal
}

// callState is what an instance keeps of the call it serves: reset by
// begin, read into the call's record when it ends.
type callState struct {
	tool     string
	abort    error // the first host-side failure of the call
	exceeded *LimitError
	used     map[string]bool
	denied   []string
	peak     int64
	logs     int
	// clockUsed and randUsed are set when the call read the granted
	// clock or randomness.
	clockUsed, randUsed bool
	// listChanged is set by notify_*_list_changed during the call.
	listChanged bool
	// kvWritten counts the bytes the call wrote under its kv grants (see
	// kvcap).
	kvWritten int64
}

// watchView is the watchdog's view of an instance (see watchdog.go):
// what the guest's goroutine publishes (its exits to Go, whether it is
// in a host function, its invocation's deadline) and what the watchdog
// keeps of it between ticks.
type watchView struct {
	// exits counts the guest's exits to Go; inHost is set while it is in
	// a host function (or other Go code run for it).
	exits  atomic.Uint64
	inHost atomic.Bool
	// stopped is set when the watchdog had to stop the guest.
	stopped atomic.Bool
	// deadline is the running invocation's deadline (Unix ns), 0 when
	// idle.
	deadline atomic.Int64
	// The watchdog's own: the deadline and exit count it last saw, when
	// it last saw exits move, and whether it reported the invocation.
	seen      int64
	seenExits uint64
	moved     time.Time
	reported  bool
}

// fail records err as the reason the call ends and unwinds the guest.
func (inst *instance) fail(err error) {
	if inst.call.abort == nil {
		inst.call.abort = err
	}
	panic(err)
}

// deny records and fails with a refusal.
func (inst *instance) deny(err *DeniedError) {
	inst.call.denied = append(inst.call.denied, err.Error())
	inst.fail(err)
}

func (inst *instance) notePeak() {
	if n := inst.linear.size() + inst.kmem.size(); n > inst.call.peak {
		inst.call.peak = n
	}
}

// newInstance instantiates and initialises the module, with its own kernel
// when it uses Extism memory. describing instances get no capabilities at
// all.
func (l *Loaded) newInstance(ctx context.Context, describing bool) (*instance, error) {
	inst := &instance{l: l, limits: l.limits, describing: describing}
	if l.net != nil {
		inst.net = netcap.NewSession(l.net)
	}
	inst.deadlinePassedFunc, inst.parentEndedFunc = inst.deadlinePassed, inst.parentEnded
	inst.stdout.stop = inst.stopOutput
	l.h.watch.register(inst)
	inst.stdout.limit = l.limits.Output
	inst.stdout.strict = true
	inst.stderr.limit = maxStderr

	inst.deadline = time.Now().Add(l.limits.Timeout)
	rc := inst.startRun(ctx, inst.deadline)
	inst.begin("")
	err := inst.instantiate(rc, describing)
	inst.endRun(rc)
	if err == nil && inst.interrupted {
		// The start-up returned as its time ran out or its caller gave
		// up: the instance was asked to stop and must not run.
		err = inst.classify(rc, errInterrupted)
	}
	if err != nil {
		inst.close()
		return nil, err
	}
	return inst, nil
}

// instantiate makes inst's kernel and module instances under the run rc
// and runs the module's initialisers.
func (inst *instance) instantiate(rc *runContext, describing bool) error {
	l := inst.l
	h := l.h
	cfg := l.moduleConfig(inst, describing)
	var ictx context.Context = rc
	// A describing instance runs with no capabilities, the snapshot was
	// taken under the module's: it runs its initialisers.
	var snap *snapshot
	if !describing && l.snapshotsOn() {
		snap = l.snaps.snap.Load()
	}
	if l.needsKernel() {
		a := memoryAllocator{inst: inst, kernel: true}
		if snap != nil {
			a.restored = len(snap.kmem)
		}
		kctx := experimental.WithMemoryAllocator(ictx, a)
		g := l.entry.gen
		kmod, err := g.rt.InstantiateModule(kctx, g.kernel.mod, g.kernel.config)
		if err != nil {
			return inst.classify(rc, fmt.Errorf("instantiating the Extism kernel: %w", err))
		}
		inst.k.Init(kmod, h.kernel.layout, l.limits.Output)
		if snap != nil {
			if err := restore(kmod, inst.kmem, snap.kmem, h.kernel.globals, snap.kglobals); err != nil {
				return inst.classify(rc, err)
			}
		}
		if h.opts.deadlines == deadlineInterrupt {
			if err := setStack(kmod, kernelStack); err != nil {
				return inst.classify(rc, err)
			}
		}
	}
	if describing {
		// Under Inspect, functions an application registers elsewhere
		// are stood in for (see stubFunctions).
		stubs, err := h.stubFunctions(ictx, l.entry)
		if err != nil {
			return err
		}
		inst.stubs = stubs
	}
	if kmod := inst.k.Module(); kmod != nil || inst.stubs != nil {
		ictx = experimental.WithImportResolver(ictx, func(name string) api.Module {
			if name == envModule && kmod != nil {
				return kmod
			}
			if m, ok := inst.stubs[name]; ok {
				return m
			}
			return nil
		})
	}
	a := memoryAllocator{inst: inst}
	if snap != nil {
		a.restored = len(snap.mem)
	}
	ictx = experimental.WithMemoryAllocator(ictx, a)
	if err := h.ensureWASI(l.entry.gen); err != nil {
		return err
	}
	mod, err := l.entry.gen.rt.InstantiateModule(ictx, l.entry.mod, cfg)
	if err != nil {
		return inst.classify(rc, fmt.Errorf("instantiating: %w", err))
	}
	inst.mod = mod
	if h.opts.deadlines == deadlineInterrupt {
		if err := setStack(mod, l.limits.Stack); err != nil {
			return inst.classify(rc, err)
		}
	}
	switch {
	case snap != nil:
		if err := restore(mod, inst.linear, snap.mem, l.entry.snapGlobals, snap.globals); err != nil {
			return inst.classify(rc, err)
		}
		if err := inst.resumeFake(snap.fake); err != nil {
			return inst.classify(rc, err)
		}
	default:
		lookups := inst.fs.Lookups.Load() // the runtime opens the mounts
		if err := inst.initialise(ictx); err != nil {
			return inst.classify(rc, fmt.Errorf("initialising: %w", err))
		}
		if !describing && l.takesSnapshot() {
			inst.takeSnapshot(inst.fs.Lookups.Load() != lookups)
		}
	}
	// The next instance's memory starts as large as this one's after its
	// start-up, so a Go guest's runtime does not copy its heap as it grows.
	if n := inst.linear.size(); n > l.memHint.Load() {
		l.memHint.Store(n)
	}
	switch {
	case l.entry.v2:
		inst.fn = mod.ExportedFunction("call_tool")
	case l.entry.abi == ABIExtism:
		inst.fn = mod.ExportedFunction("call")
	default:
		inst.fn = mod.ExportedFunction("_start")
	}
	return nil
}

// kernelStack is the Extism kernel's stack budget: its functions do not
// recurse.
const kernelStack = 256 << 10

// setStack gives a new instance its stack budget, the global the rewrite
// added and exported for the host alone.
func setStack(mod api.Module, budget int64) error {
	g, ok := mod.ExportedGlobal(rewrite.StackExport).(api.MutableGlobal)
	if !ok {
		return errors.New("the module lacks the host's stack budget")
	}
	g.Set(uint64(uint32(budget)))
	return nil
}

// initialise runs the module's start function (which the rewrite made an
// export) and, for an Extism plugin, its runtime's initialiser, as Extism
// hosts do.
func (inst *instance) initialise(ctx context.Context) error {
	m, inits := inst.mod, inst.l.entry.inits
	var stack [2]uint64
	if inits.start {
		if err := inst.invoke(ctx, m.ExportedFunction(rewrite.StartExport), stack[:]); err != nil {
			return err
		}
	}
	if inst.l.entry.abi != ABIExtism && !inst.l.extismInit {
		return nil
	}
	if inits.runtime != "" {
		if err := inst.invoke(ctx, m.ExportedFunction(inits.runtime), stack[:]); err != nil {
			return err
		}
	}
	if inits.hsInit {
		stack = [2]uint64{}
		if err := inst.invoke(ctx, m.ExportedFunction("hs_init"), stack[:]); err != nil {
			return err
		}
	}
	return nil
}

// initExports are the initialisers a module exports.
type initExports struct {
	start   bool   // rewrite.StartExport, the module's start function
	runtime string // _initialize, else __wasm_call_ctors (without parameters); "" for neither
	hsInit  bool   // hs_init(argc, argv), GHC's
}

// findInits reads a module's initialisers from its exports.
func findInits(exports map[string]api.FunctionDefinition) initExports {
	var in initExports
	in.start = exports[rewrite.StartExport] != nil
	for _, name := range []string{"_initialize", "__wasm_call_ctors"} {
		if f := exports[name]; f != nil && len(f.ParamTypes()) == 0 {
			in.runtime = name
			break
		}
	}
	if f := exports["hs_init"]; f != nil && len(f.ParamTypes()) == 2 {
		in.hsInit = true
	}
	return in
}

// invoke calls f with its parameters and results in stack, under the run
// ctx (a runContext, which interrupts the guest when the run ends first:
// see startRun), with the watchdog told its deadline. A panic that escaped the runtime (which
// recovers guest and host-function panics itself) becomes an error.
func (inst *instance) invoke(ctx context.Context, f api.Function, stack []uint64) (err error) {
	if dl, ok := ctx.Deadline(); ok {
		inst.watch.deadline.Store(dl.UnixNano())
		defer inst.watch.deadline.Store(0)
	}
	if def := f.Definition(); def.GoFunction() != nil {
		// A host function the module exports as its own: the runtime
		// would run it with its host module as the caller (WASI's
		// proc_exit then closes WASI for the process). Load refuses such
		// modules (checkReexports); this is the host's last word on it.
		return fmt.Errorf("the module exports the host function %s.%s as its own, which the host does not call", def.ModuleName(), def.Name())
	}
	inst.watch.inHost.Store(false) // a host function that failed may have left it set
	inst.running.Store(true)
	defer inst.stopRunning()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("runtime panic: %v", p)
		}
		if err != nil {
			inst.failed = true
		}
	}()
	return f.CallWithStack(ctx, stack)
}

// stopRunning records that the guest function returned, and unmaps the
// reservations the runtime freed while it ran.
func (inst *instance) stopRunning() {
	inst.running.Store(false)
	if !inst.unmapPending.Load() {
		return
	}
	inst.runMu.Lock()
	done := inst.unmap
	inst.unmap = nil
	inst.unmapPending.Store(false)
	inst.runMu.Unlock()
	for _, r := range done {
		unreserve(r)
	}
}

// unmapLater unmaps a reservation now, or when the running guest returns.
func (inst *instance) unmapLater(r []byte) {
	inst.runMu.Lock()
	if inst.running.Load() {
		inst.unmap = append(inst.unmap, r)
		inst.unmapPending.Store(true)
		inst.runMu.Unlock()
		return
	}
	inst.runMu.Unlock()
	unreserve(r)
}

// interrupt makes the running guest stop at its next yield. It runs on
// another goroutine than the guest.
func (inst *instance) interrupt() { inst.stopRequested.Store(true) }

// errInterrupted unwinds a guest the host interrupted; classify reports
// why from the call's context (time limit or cancellation).
var errInterrupted = errors.New("interrupted")

// checkStop ends the call when the host is closing or the call was asked
// to stop (its time is up, its caller gave up).
func (inst *instance) checkStop() {
	inst.exited()
	if inst.l.h.shut.Load() {
		inst.fail(fmt.Errorf("call stopped: %w", ErrClosed))
	}
	if inst.stopRequested.Load() {
		panic(errInterrupted)
	}
}

// begin resets the per-call state.
func (inst *instance) begin(toolName string) {
	inst.call = callState{tool: toolName}
	if inst.net != nil {
		inst.net.Reset()
	}
	inst.fs.Begin()
	inst.notePeak()
}

// close frees the instance; its memory may serve the module's next one.
func (inst *instance) close() {
	inst.l.h.watch.unregister(inst)
	inst.recycle = true
	if inst.mod != nil {
		_ = inst.mod.Close(context.Background())
	}
	if kmod := inst.k.Module(); kmod != nil {
		_ = kmod.Close(context.Background())
	}
	for _, m := range inst.stubs {
		_ = m.Close(context.Background())
	}
	inst.stubs = nil
}

// classify turns what ended a call into the error the model sees: the
// host's own reason first (a limit, a refusal), then the deadline, then the
// runtime's error.
func (inst *instance) classify(ctx context.Context, err error) error {
	if inst.call.abort != nil {
		return inst.call.abort
	}
	if inst.call.exceeded != nil {
		return inst.call.exceeded
	}
	if err != nil {
		if kerr := inst.kernelFailure(); kerr != nil {
			return kerr
		}
	}
	if inst.watch.stopped.Load() {
		return timeLimitErr(inst.limits.Timeout)
	}
	if inst.stdout.overflow {
		return limitErr(LimitOutput, inst.limits.Output)
	}
	if err != nil {
		var exit *sys.ExitError
		if errors.As(err, &exit) {
			switch exit.ExitCode() {
			case sys.ExitCodeDeadlineExceeded:
				return timeLimitErr(inst.limits.Timeout)
			case sys.ExitCodeContextCanceled:
				return context.Canceled
			}
		}
	}
	if ctx.Err() == context.DeadlineExceeded {
		return timeLimitErr(inst.limits.Timeout)
	}
	// A guest that did not return to Go for a while may come back before
	// the context's timer has fired: the clock decides.
	if dl, ok := ctx.Deadline(); ok && time.Now().After(dl) {
		return timeLimitErr(inst.limits.Timeout)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil {
		return nil
	}
	return &TrapError{Reason: trapReason(err)}
}

// kernelFailure is the error of the failure a kernel function recorded
// as it trapped (kernel.Memory.Failure), nil when the trap was not the
// kernel's.
func (inst *instance) kernelFailure() error {
	code, arg, ok := inst.k.Failure()
	if !ok {
		return nil
	}
	return inst.guard(func() { kernelfn.Fail(inst, code, arg) })
}

// trapReason keeps the first line of a runtime error, without wazero's
// "wasm error: " prefix; the stack trace that follows is for debugging the
// guest, not for the model.
func trapReason(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.TrimPrefix(msg, "instantiating: ")
	msg = strings.TrimPrefix(msg, "initialising: ")
	msg = strings.TrimPrefix(msg, "wasm error: ")
	return msg
}

// moduleConfig is the WASI view of the module's grants.
func (l *Loaded) moduleConfig(inst *instance, describing bool) wazero.ModuleConfig {
	l.baseConfigOnce.Do(func() {
		l.baseConfig = wazero.NewModuleConfig().WithName("").WithStartFunctions().WithArgs(l.name)
	})
	cfg := l.baseConfig.
		WithStdin(&inst.stdin).
		WithStdout(&inst.stdout).
		WithStderr(&inst.stderr)
	if describing {
		return newFakeSources().config(cfg)
	}
	for _, kv := range l.env {
		cfg = cfg.WithEnv(kv[0], kv[1])
	}
	if len(l.mounts) > 0 {
		cfg = cfg.WithFSConfig(fscap.Config(l.mounts, inst))
	}
	if l.h.opts.Deterministic || l.deterministic {
		inst.fake = newFakeSources()
		return inst.fake.config(cfg)
	}
	// The real clock, to the millisecond without the clock grant (a
	// coarse clock is what keeps timing attacks on the host's memory and
	// caches slow), to the microsecond with it.
	fine := l.has["clock"]
	res := clockResolution(fine)
	wall, mono := realClocks(res, func() {
		inst.readEntropy = true
		inst.call.clockUsed = inst.call.clockUsed || fine
	})
	cfg = cfg.WithWalltime(wall, sys.ClockResolution(res)).
		WithNanotime(mono, sys.ClockResolution(res)).
		WithNanosleep(inst.sleep)
	// Cryptographic randomness always: a seeded generator would give a
	// tool minting tokens or nonces the same ones on every call.
	random := l.has["random"]
	return cfg.WithRandSource(readerFunc(func(p []byte) (int, error) {
		inst.readEntropy = true
		inst.call.randUsed = inst.call.randUsed || random
		return inst.readRandom(p)
	}))
}

// randomChunk bounds one read of the system's generator: it runs where
// the Go scheduler cannot preempt it (the vDSO), so a guest asking for
// 60 MiB at once would otherwise hold every garbage collection of the
// process for half a second. wazero reads again until the guest's buffer
// is full.
const randomChunk = 64 << 10

// readRandom fills at most randomChunk bytes of p with cryptographic
// randomness, and fails once the call is over (its time limit, or its
// caller gave up), so one huge random_get ends with the call.
func (inst *instance) readRandom(p []byte) (int, error) {
	if inst.stopRequested.Load() {
		return 0, errInterrupted // the guest's next host call ends it
	}
	if c := inst.cur.Load(); c != nil {
		if err := c.Err(); err != nil {
			return 0, err
		}
	}
	return rand.Read(p[:min(len(p), randomChunk)])
}

var processStart = time.Now()

// clockResolution is the real clock's resolution for a module with or
// without the clock grant.
func clockResolution(granted bool) time.Duration {
	if granted {
		return time.Microsecond
	}
	return time.Millisecond
}

// realClocks are the real wall and monotonic clocks, each reading cut to a
// multiple of res; read is called at every reading.
func realClocks(res time.Duration, read func()) (sys.Walltime, sys.Nanotime) {
	wall := func() (int64, int32) {
		read()
		t := time.Now().Truncate(res)
		return t.Unix(), int32(t.Nanosecond())
	}
	mono := func() int64 {
		read()
		return time.Since(processStart).Truncate(res).Nanoseconds()
	}
	return wall, mono
}

// sleep is the real-clock nanosleep; it ends early when the call does, so
// a sleeping guest cannot outlive its time limit: it ends with the run
// (wazero's nanosleep takes no context).
func (inst *instance) sleep(ns int64) {
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-inst.Context().Done():
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// swapReader is an instance's stdin: the call input of the current call.
type swapReader struct{ r io.Reader }

func (s *swapReader) Read(p []byte) (int, error) {
	if s.r == nil {
		return 0, io.EOF
	}
	return s.r.Read(p)
}

const maxStderr = 64 << 10

// cappedBuffer keeps at most limit bytes and remembers that more came.
// For stdout (strict) a write past the limit fails and ends the call at
// once, so a guest flooding its output does not run until its deadline;
// stderr just drops the excess.
type cappedBuffer struct {
	buf      []byte
	limit    int64
	strict   bool
	overflow bool
	stop     func() // ends the current call
}

var errOutputLimit = errors.New("output limit reached")

func (b *cappedBuffer) Write(p []byte) (int, error) {
	room := b.limit - int64(len(b.buf))
	if int64(len(p)) > room {
		if room > 0 {
			b.buf = append(b.buf, p[:room]...)
		}
		b.overflow = true
		if !b.strict {
			return len(p), nil
		}
		if b.stop != nil {
			b.stop()
		}
		return int(max(room, 0)), errOutputLimit
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *cappedBuffer) reset() { b.buf, b.overflow = b.buf[:0], false }

// tail returns the last n bytes, for error messages.
func (b *cappedBuffer) tail(n int) string {
	s := b.buf
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return strings.TrimSpace(string(s))
}
