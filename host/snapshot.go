package host

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host/internal/kernel"
	"github.com/autoagent-go/autoagent/host/internal/rewrite"
)

// snapshot is a module's state right after its initialisers ran, taken
// once per Loaded (one module, one grant set, one set of limits) from the
// first instance that started well, before any call gave it input. Each
// later instance of the Loaded starts from a copy of it instead of running
// the initialisers again (see RATIONALE.md "Why are snapshots safe, and
// when are they not used?"). It is never written after it is made.
type snapshot struct {
	mem      []byte   // the guest's memory, its whole size
	globals  []uint64 // the guest's mutable globals, by entry.snapGlobals
	kmem     []byte   // the kernel's memory, nil without a kernel
	kglobals []uint64 // the kernel's mutable globals, by kernel.globals
	// memZero and kmemZero mark the memories' pages of zeros (zeroPages),
	// for reset.
	memZero, kmemZero []bool
	// fake is where a deterministic module's clocks and generator stood,
	// nil for other modules.
	fake *fakeState
}

// snapshots is a Loaded's snapshot and whether one may still be taken.
type snapshots struct {
	snap atomic.Pointer[snapshot]
	mu   sync.Mutex
	// refused says why the Loaded gets no snapshot ("" until then): the
	// first instance's initialisers did something a copy of its memory
	// would not repeat, or read the clock or randomness.
	refused string
	// sharedSeeds: Module.SharedSeeds, or the module's own declaration
	// (sharedSeedsExport).
	sharedSeeds bool
}

// sharedSeedsExport is the function a module exports to declare, as
// Module.SharedSeeds does for a loader, that its instances may start from
// one snapshot although its initialisers read the clock or randomness
// (host/ABI.md §1, the initialisers). It is never called. The JavaScript engine exports
// it: it seeds Math.random during the call.
const sharedSeedsExport = "autoagent_shared_seeds"

// snapshotsOn reports whether the Loaded's new instances start from a
// snapshot: it may have one (snapshotsAllowed) and the module has
// initialisers (without, a new instance is its snapshot already, and
// copying costs more than nothing).
func (l *Loaded) snapshotsOn() bool { return l.hasInits() && l.snapshotsAllowed() }

// snapshotsAllowed reports whether the Loaded may have a snapshot at all:
// the rewrite found it safe for the module (and the kernel), the host
// interrupts guests (only then is the module rewritten), and it is not a
// stateful module's one instance. A deterministic module's fake clocks
// and generator are part of its snapshot (fakeState).
func (l *Loaded) snapshotsAllowed() bool {
	h := l.h
	return !h.opts.noSnapshots && h.opts.deadlines == deadlineInterrupt &&
		l.entry.snapSafe && (!l.needsKernel() || h.kernel.snapSafe) && l.single == nil
}

// takesSnapshot reports whether the Loaded's first instance that starts
// well gives it a snapshot: for its new instances to start from
// (snapshotsOn), or for its used ones to be reset to (resetsOn; a module
// without initialisers gets one too, the state instantiation leaves).
func (l *Loaded) takesSnapshot() bool { return l.snapshotsOn() || l.resetsOn() }

// hasInits reports whether initialise runs anything for the Loaded.
func (l *Loaded) hasInits() bool {
	in := l.entry.inits
	return in.start || ((l.entry.abi == ABIExtism || l.extismInit) && (in.runtime != "" || in.hsInit))
}

// needsKernel reports whether the Loaded's instances get an Extism kernel.
func (l *Loaded) needsKernel() bool { return l.entry.kernel || l.exportTools }

// whyNoSnapshot returns why the state inst's initialisers left may not
// serve as the Loaded's snapshot, "" when it may: they left something
// outside the module's memories and globals (an open file, output, a
// variable, a capability used), read the file system (readFS: the
// snapshot would keep what they read), or read the clock or randomness, whose
// values every instance would then share (unless the module allows it:
// Module.SharedSeeds), as a generator seeded from either would.
func (inst *instance) whyNoSnapshot(readFS bool) string {
	c := &inst.call
	switch {
	case readFS:
		return "its initialisers read the file system, which may change"
	case inst.interrupted || inst.stopRequested.Load():
		return "its initialisers were interrupted"
	case inst.readEntropy && !inst.l.snaps.sharedSeeds:
		return "its initialisers read the clock or randomness, whose values every instance would share (Module.SharedSeeds allows it)"
	case inst.fs.Open.Load() != 0:
		return "its initialisers left files open"
	case len(inst.stdout.buf) != 0 || len(inst.stderr.buf) != 0 || c.logs != 0:
		return "its initialisers wrote output"
	case len(c.used) != 0 || c.kvWritten != 0 || c.listChanged || len(c.denied) != 0 || c.abort != nil || c.exceeded != nil:
		return "its initialisers used a capability"
	case inst.vars.Len() != 0:
		return "its initialisers set Extism variables"
	}
	return ""
}

// takeSnapshot makes inst's state, right after its initialisers ran and
// before any call, the Loaded's snapshot, unless there is one already or
// the state may not serve (whyNoSnapshot). Its cost (a copy of the
// memories) is paid once per Loaded.
func (inst *instance) takeSnapshot(readFS bool) {
	l := inst.l
	s := &l.snaps
	if s.snap.Load() != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap.Load() != nil || s.refused != "" {
		return
	}
	if why := inst.whyNoSnapshot(readFS); why != "" {
		s.refused = why
		if lg := l.h.opts.Logger; lg != nil {
			lg.Debug("no snapshot: each instance runs the module's initialisers", "module", l.name, "reason", why)
		}
		return
	}
	snap := &snapshot{mem: clone(inst.linear), globals: readGlobals(inst.mod, l.entry.snapGlobals)}
	snap.memZero = zeroPages(snap.mem)
	if inst.fake != nil {
		snap.fake = inst.fake.state()
	}
	if kmod := inst.k.Module(); kmod != nil {
		snap.kmem = clone(inst.kmem)
		snap.kmemZero = zeroPages(snap.kmem)
		snap.kglobals = readGlobals(kmod, l.h.kernel.globals)
	}
	s.snap.Store(snap)
	if lg := l.h.opts.Logger; lg != nil {
		lg.Debug("snapshot taken: later instances start from it", "module", l.name, "bytes", len(snap.mem)+len(snap.kmem))
	}
}

// clone copies a memory's contents.
func clone(m *linearMemory) []byte {
	if m == nil {
		return nil
	}
	return append([]byte(nil), m.buf...)
}

func readGlobals(mod api.Module, names []string) []uint64 {
	out := make([]uint64, len(names))
	for i, n := range names {
		out[i] = mod.ExportedGlobal(n).Get()
	}
	return out
}

// errSnapshot is a snapshot that does not fit the instance it is restored
// into: a host bug, never the guest's doing.
var errSnapshot = errors.New("host: restoring a snapshot")

// restore gives a new instance mod, whose memory m the runtime just
// allocated and filled with the module's data segments, the snapshot's
// memory and globals instead. The memory grows to the snapshot's size
// through the allocator, under the module's memory limit, as the
// initialisers' growth did; then the snapshot's bytes replace all of it,
// so nothing of an earlier instance (a spare's pages) shows.
func restore(mod api.Module, m *linearMemory, mem []byte, names []string, globals []uint64) error {
	if len(mem) != 0 {
		cur := mod.Memory()
		if cur == nil || m == nil {
			return fmt.Errorf("%w: the instance has no memory", errSnapshot)
		}
		if have := uint64(cur.Size()); have < uint64(len(mem)) {
			if _, ok := cur.Grow(uint32((uint64(len(mem)) - have) / pageSize)); !ok {
				// Only the memory limit refuses: the call's error says so.
				return fmt.Errorf("%w: growing the memory to %d bytes", errSnapshot, len(mem))
			}
		}
		if len(m.buf) != len(mem) {
			return fmt.Errorf("%w: memory of %d bytes for a snapshot of %d", errSnapshot, len(m.buf), len(mem))
		}
		copy(m.buf, mem)
	}
	for i, n := range names {
		g, ok := mod.ExportedGlobal(n).(api.MutableGlobal)
		if !ok {
			return fmt.Errorf("%w: the global %s is missing", errSnapshot, n)
		}
		g.Set(globals[i])
	}
	return nil
}

// resumeFake makes a deterministic instance restored from a snapshot read
// its clocks and generator on from where the snapshot's initialisers left
// them: otherwise it would read again what they read, and a call would
// not repeat the call of an instance that ran them.
func (inst *instance) resumeFake(s *fakeState) error {
	switch {
	case s == nil && inst.fake == nil:
		return nil
	case s == nil || inst.fake == nil:
		return fmt.Errorf("%w: a deterministic module's snapshot lacks its clocks and generator, or another module's has them", errSnapshot)
	}
	if err := inst.fake.resume(s); err != nil {
		return fmt.Errorf("%w: %v", errSnapshot, err)
	}
	return nil
}

// resetsOn reports whether the Loaded's used instances may be reset to its
// snapshot and serve another call, instead of being closed: the Loaded may
// have a snapshot (snapshotsAllowed), each call gets a fresh instance (no
// Module.Reuse), and the rewrite found that a call can change nothing of
// the module's instance, nor of its kernel's, but memory and globals (see
// rewrite.SnapshotInfo). A module without initialisers is reset too, to
// the state its instantiation left. A deterministic module's fake clocks
// and generator are put back to where the snapshot's stood, as a restored
// instance's are (resumeFake). See RATIONALE.md "Why is a reset instance a fresh instance, and
// when is it not used?".
func (l *Loaded) resetsOn() bool {
	return !l.h.opts.noResets && !l.reuse && l.snapshotsAllowed() && l.entry.resetSafe &&
		(!l.needsKernel() || l.h.kernel.resetSafe)
}

// whyNoReset returns why inst, after its call, may not be reset to the
// snapshot, "" when it may: only an instance whose every guest function
// returned, that no limit, refusal or interruption stopped, whose guest
// changed no WASI state (a file opened or closed, an offset moved) and
// that holds no open file. Anything else it may hold that a snapshot
// does not (a trapped guest's half-done work, a closed module) would
// reach the next call.
func (inst *instance) whyNoReset() string {
	c := &inst.call
	switch {
	case inst.describing:
		return "it served a describe"
	case inst.failed:
		return "a guest function failed (a trap, an exit or an interruption)"
	case inst.interrupted || inst.stopRequested.Load() || inst.watch.stopped.Load():
		return "it was interrupted"
	case c.abort != nil || c.exceeded != nil || inst.stdout.overflow:
		return "its call hit a limit or a refusal"
	case inst.mod == nil || inst.mod.IsClosed():
		return "its module is closed"
	case inst.k.Module() != nil && inst.k.Module().IsClosed():
		return "its kernel is closed"
	case inst.changedState:
		return "its guest called a WASI function that may change its WASI state"
	case inst.fs.Open.Load() != 0:
		return "it holds open files"
	}
	if _, _, failed := inst.k.Failure(); failed {
		return "its kernel recorded a failure"
	}
	return ""
}

// reset makes inst, after a call that left it fit (whyNoReset), what a
// new instance restored from snap is: the guest's and the kernel's memory
// cut back to the snapshot's size and holding its bytes, every mutable
// global the snapshot's (the fuel and stack budget as a new instance has
// them), and the host's side of it as newInstance leaves it. Its cost is
// the copy of the memories, not an instantiation.
func (inst *instance) reset(snap *snapshot) error {
	l := inst.l
	if inst.resetGlobals == nil {
		gs, err := resetGlobals(inst.mod, l.entry.snapGlobals)
		if err != nil {
			return err
		}
		if kmod := inst.k.Module(); kmod != nil {
			kgs, err := resetGlobals(kmod, l.h.kernel.globals)
			if err != nil {
				return err
			}
			gs = append(gs, kgs...)
		}
		inst.resetGlobals = gs
	}
	if m := inst.linear; m != nil {
		if err := m.shrink(inst.mod.Memory(), len(snap.mem)); err != nil {
			return err
		}
		restorePages(m.buf, snap.mem, snap.memZero)
	}
	gs := inst.resetGlobals
	n := len(l.entry.snapGlobals) + 2 // the fuel and the stack budget
	setGlobals(gs[:n], snap.globals, l.limits.Stack)
	if kmod := inst.k.Module(); kmod != nil {
		if err := inst.kmem.shrink(kmod.Memory(), len(snap.kmem)); err != nil {
			return err
		}
		restorePages(inst.kmem.buf, snap.kmem, snap.kmemZero)
		setGlobals(gs[n:], snap.kglobals, kernelStack)
	}
	// The host's side: what newInstance leaves and a call may change
	// (begin and run reset the rest as each call starts).
	inst.vars = kernel.Vars{}
	inst.tainted = false
	inst.stdin.r = nil
	inst.stdout.reset()
	inst.stderr.reset()
	inst.call = callState{}
	inst.deadline = time.Time{}
	// A deterministic module's clocks and generator read on from where
	// the snapshot's stood, not from where this call left them.
	return inst.resumeFake(snap.fake)
}

// resetGlobals finds the globals reset sets in mod: the snapshot's (names),
// then the fuel and the stack budget the rewrite added.
func resetGlobals(mod api.Module, names []string) ([]api.MutableGlobal, error) {
	gs := make([]api.MutableGlobal, 0, len(names)+2)
	for _, n := range append(names[:len(names):len(names)], rewrite.FuelExport, rewrite.StackExport) {
		g, ok := mod.ExportedGlobal(n).(api.MutableGlobal)
		if !ok {
			return nil, fmt.Errorf("%w: the global %s is missing", errSnapshot, n)
		}
		gs = append(gs, g)
	}
	return gs, nil
}

// setGlobals sets gs (resetGlobals') to the snapshot's values, the fuel to
// a new instance's and the stack budget to stack.
func setGlobals(gs []api.MutableGlobal, values []uint64, stack int64) {
	for i, v := range values {
		gs[i].Set(v)
	}
	gs[len(values)].Set(rewrite.YieldEvery)
	gs[len(values)+1].Set(uint64(uint32(stack)))
}
