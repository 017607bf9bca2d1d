package host

import (
	"fmt"
	"sync"
	"time"
)

// The watchdog is the host's last line against a guest its other defences
// failed to stop (see RATIONALE.md "What stops a guest the instrumentation
// missed?"). Every guest invocation registers with it; every exit to Go
// (yield, a host function) is counted. Twice a second it looks at the
// invocations past their deadline by more than watchdogGrace:
//
//   - one that still exits to Go was not stopped there, a defect of the
//     host's deadline handling: the watchdog stops it at its next exit;
//   - one that has not exited for a whole grace period is running machine
//     code that never returns to Go. Nothing inside the process can
//     preempt it (and every garbage collection will wait for it), so the
//     watchdog refuses every new call of its module, logs the failure and
//     reports it through Options.OnStuck, so the operator can restart the
//     process.
//
// A guest in the host's Go code (a host function; memory.grow, table.grow
// or ref.func, which the runtime runs in Go: see instance.enterGo) is not
// in machine code; it is reported the same way, without disabling its
// module.
type watchdog struct {
	h           *Host
	grace, tick time.Duration
	mu          sync.Mutex
	insts       map[*instance]struct{} // every live instance
	stop        chan struct{}
	once        sync.Once
}

// watchdogGrace is how long past its deadline an invocation may run
// before the watchdog acts; watchdogTick how often it looks.
const (
	watchdogGrace = 2 * time.Second
	watchdogTick  = 500 * time.Millisecond
)

// StuckCall describes a guest the host could not stop (Options.OnStuck).
type StuckCall struct {
	Module, SHA256, Tool string
	// Deadline is when the call should have ended.
	Deadline time.Time
	// InHost is set when the guest is held in the host's Go code (a host
	// function, or memory.grow, table.grow or ref.func, which the runtime
	// runs in Go); otherwise it runs machine code that no longer returns
	// to the host, and its module is disabled.
	InHost bool
}

func (s StuckCall) String() string {
	if s.InHost {
		return fmt.Sprintf("tool %s of module %s (sha256 %s) is held in the host's Go code (a host function, or a growth of its memory or table) %v past its deadline", s.Tool, s.Module, s.SHA256, time.Since(s.Deadline).Round(time.Second))
	}
	return fmt.Sprintf("tool %s of module %s (sha256 %s) has not returned to the host for %v past its deadline: its time-limit instrumentation failed; the module is disabled and the process should be restarted (its garbage collections wait for that goroutine)",
		s.Tool, s.Module, s.SHA256, time.Since(s.Deadline).Round(time.Second))
}

func newWatchdog(h *Host) *watchdog {
	w := &watchdog{h: h, grace: watchdogGrace, tick: watchdogTick, insts: map[*instance]struct{}{}, stop: make(chan struct{})}
	if g := h.opts.watchdogGrace; g > 0 {
		w.grace = g
	}
	if t := h.opts.watchdogTick; t > 0 {
		w.tick = t
	}
	return w
}

// register follows a new instance; an invocation of it then only stores
// its deadline (instance.watch.deadline), so watching a call costs two
// atomic stores.
func (w *watchdog) register(inst *instance) {
	w.once.Do(func() { go w.run() })
	w.mu.Lock()
	w.insts[inst] = struct{}{}
	w.mu.Unlock()
}

func (w *watchdog) unregister(inst *instance) {
	w.mu.Lock()
	delete(w.insts, inst)
	w.mu.Unlock()
}

func (w *watchdog) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
}

func (w *watchdog) run() {
	t := time.NewTicker(w.tick)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case now := <-t.C:
			w.check(now)
		}
	}
}

// check looks at every running invocation once. The watch* fields of an
// instance other than watchDeadline are the watchdog goroutine's own.
func (w *watchdog) check(now time.Time) {
	var stuck []StuckCall
	w.mu.Lock()
	for inst := range w.insts {
		dl := inst.watch.deadline.Load()
		if dl == 0 {
			continue
		}
		if dl != inst.watch.seen {
			// Another invocation: it counts as moving from now.
			inst.watch.seen, inst.watch.reported, inst.watch.moved = dl, false, now
		}
		exits := inst.watch.exits.Load()
		moved := exits != inst.watch.seenExits
		inst.watch.seenExits = exits
		if moved {
			inst.watch.moved = now
		}
		deadline := time.Unix(0, dl)
		if now.Before(deadline.Add(w.grace)) {
			continue
		}
		switch {
		case moved:
			// It returns to Go but was not stopped: stop it there.
			inst.watch.stopped.Store(true)
			inst.stopRequested.Store(true)
		case !inst.watch.reported && now.Sub(inst.watch.moved) >= w.grace:
			// No exit for a whole grace period, not one tick: a guest
			// whose thread the system did not run for a while (a loaded
			// machine) is not taken for one that never returns.
			inst.watch.reported = true
			s := StuckCall{Module: inst.l.name, SHA256: inst.l.sha, Tool: inst.call.tool, Deadline: deadline, InHost: inst.watch.inHost.Load()}
			if !s.InHost && inst.l.entry != nil {
				inst.l.entry.stuck.Store(true)
			}
			stuck = append(stuck, s)
		}
	}
	w.mu.Unlock()
	for _, s := range stuck {
		if lg := w.h.opts.Logger; lg != nil {
			lg.Error("host: watchdog: " + s.String())
		}
		if fn := w.h.opts.OnStuck; fn != nil {
			fn(s)
		}
	}
}

// errStuck is why the calls of a module the watchdog disabled fail.
func errStuck(name string) error {
	return fmt.Errorf("%w: module %q stopped returning to the host during an earlier call (its time-limit instrumentation failed); it is disabled until the process restarts", ErrUnsafe, name)
}

// exited counts one exit of the guest to Go.
func (inst *instance) exited() { inst.watch.exits.Add(1) }

// enterGo marks the guest as in the host's Go code until leaveGo: a host
// function, or what the runtime runs in Go for the guest (memory.grow,
// which reaches linearMemory.Reallocate; ref.func and table.grow, which
// the rewrite brackets with yields). A guest there is not running machine
// code, however long it stays (a loaded machine, a large growth): the
// watchdog reports it but never takes it for one that stopped returning.
// The runtime's growth of the guest's stack is the one exit to Go left
// unmarked: it happens a few times per instance, and copies at most
// twice the stack the stack limit bounds. It returns what leaveGo
// restores: the marks nest (a host function's allocation grows the
// kernel's memory).
func (inst *instance) enterGo(op string) (was bool) {
	inst.exited()
	was = inst.watch.inHost.Swap(true)
	if hook := inst.l.h.opts.inGoHook; hook != nil {
		hook(inst, op)
	}
	return was
}

// leaveGo ends what enterGo marked, restoring the mark it found.
func (inst *instance) leaveGo(was bool) {
	inst.watch.inHost.Store(was)
	inst.exited()
}
