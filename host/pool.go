package host

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// pool keeps pre-initialised instances of one module so a call rarely
// waits for instantiation (and, for Go guests, runtime start-up). Each
// instance serves one call and is discarded, unless the module has Reuse.
//
// Refilling happens in the background, one instantiation at a time per
// module, and at most refillSlots at a time across the host, so refills
// never take every core from the callers they exist to serve. A refill
// starts when a call's instance is discarded after the call (not when the
// call starts: an instantiation running beside the call would slow it
// down, Go guests' above all, whose start-up allocates megabytes), so
// never before the module's first call; it ends when the pool is full, so
// an idle module costs no goroutine.
type pool struct {
	l    *Loaded
	size int

	mu      sync.Mutex
	ready   []*instance
	filling bool // a refill goroutine is running
	failed  bool // the last refill could not instantiate: wait for a call to succeed
	stopped bool
	// called is set by the module's first call: only then may the pool
	// make instances ahead of calls (see startRefill).
	called bool
	// ctx is the refills' context: close cancels it, so an instantiation
	// in progress (a start function spinning to its time limit) ends at
	// once instead of holding close up.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// refillSlots bounds the background instantiations running at once across
// a host: one core is always left to the callers.
func refillSlots() int { return max(1, runtime.GOMAXPROCS(0)-1) }

func newPool(l *Loaded, size int) *pool {
	if size <= 0 {
		return nil
	}
	p := &pool{l: l, size: size, ready: make([]*instance, 0, size)}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.mu.Lock()
	p.startRefill() // nothing yet: the module has not been called
	p.mu.Unlock()
	return p
}

// startRefill starts the refill goroutine unless one runs; p.mu is held.
// Nothing is made before the module's first call: making an instance
// runs its start function and initialisers with the module's grants, and
// nothing a module does with its grants may happen before a call asks
// for it (an initialiser sent a granted secret away as `mcp serve`
// started). See RATIONALE.md "Why does the pool wait for a first call?".
func (p *pool) startRefill() {
	if !p.called || p.filling || p.stopped || p.failed || len(p.ready) >= p.size {
		return
	}
	p.filling = true
	p.wg.Add(1)
	go p.refill()
}

func (p *pool) refill() {
	defer p.wg.Done()
	slots := p.l.h.refill
	select {
	case slots <- struct{}{}:
		defer func() { <-slots }()
	case <-p.ctx.Done():
		p.mu.Lock()
		p.filling = false
		p.mu.Unlock()
		return
	}
	for {
		p.mu.Lock()
		if p.stopped || len(p.ready) >= p.size {
			p.filling = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		inst, err := p.l.newInstance(p.ctx, false)
		if err == nil {
			inst.deadline = time.Time{} // a call that takes it has the whole limit
		}
		p.mu.Lock()
		switch {
		case err != nil:
			// A module that cannot start is not retried in a loop: the
			// next call instantiates for itself and, if that works,
			// re-enables refills.
			p.failed, p.filling = true, false
			p.mu.Unlock()
			return
		case p.stopped:
			p.filling = false
			p.mu.Unlock()
			inst.close()
			return
		case !p.l.h.holdIdle(inst):
			// Ready instances of every module together may hold only
			// Options.PoolMemory and maxIdleFiles: this one would pass
			// one of them.
			p.filling = false
			p.mu.Unlock()
			inst.close()
			return
		}
		p.ready = append(p.ready, inst)
		p.mu.Unlock()
	}
}

// maxIdleFiles bounds the files the ready instances of every module may
// hold open together: a start function that opens files runs when a pool
// makes an instance ahead of a call, and the instance keeps them while it
// waits (three modules each opening 250 at the default pool size held
// 1 016 of a process's 1 024 files, outside any call).
const maxIdleFiles = 256

// holdIdle charges inst's memory and open files to the host's idle
// budgets, reporting false (charging nothing) when a budget cannot take
// them: the instance is then closed, and the next call makes its own.
func (h *Host) holdIdle(inst *instance) bool {
	n := inst.linear.size() + inst.kmem.size()
	f := inst.fs.Open.Load()
	h.idleMu.Lock()
	defer h.idleMu.Unlock()
	if h.idleMem+n > h.poolMemory || h.idleFiles+f > maxIdleFiles {
		return false
	}
	h.idleMem += n
	h.idleFiles += f
	inst.idleMem, inst.idleFiles = n, f
	return true
}

// releaseIdle gives inst's idle charges back, as it leaves a pool.
func (h *Host) releaseIdle(inst *instance) {
	h.idleMu.Lock()
	h.idleMem -= inst.idleMem
	h.idleFiles -= inst.idleFiles
	h.idleMu.Unlock()
	inst.idleMem, inst.idleFiles = 0, 0
}

// get returns a ready instance, or nil. It is asked at every call, which
// makes the module called.
func (p *pool) get() *instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.called = true
	if n := len(p.ready); n > 0 {
		inst := p.ready[n-1]
		p.ready[n-1] = nil
		p.ready = p.ready[:n-1]
		p.l.h.releaseIdle(inst)
		return inst
	}
	return nil
}

// discarded notes that a call's instance was dropped or kept reset (each
// one is, unless the module has Reuse and the call went well), so the
// pool refills.
func (p *pool) discarded() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.startRefill()
}

// instantiated notes that a caller could instantiate the module, so
// refills may run again after a failure.
func (p *pool) instantiated() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed {
		p.failed = false
		p.startRefill()
	}
}

// put keeps inst for the next call (Module.Reuse: get takes the last one
// in), or closes it when the pool is stopped. When a refill filled the
// pool meanwhile, the oldest ready instance makes room: the one kept is
// the warm one the module asked to reuse.
func (p *pool) put(inst *instance) {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		inst.close()
		return
	}
	var evicted *instance
	if len(p.ready) >= p.size && len(p.ready) > 0 {
		evicted = p.ready[0]
		p.ready = append(p.ready[:0], p.ready[1:]...)
		p.l.h.releaseIdle(evicted)
	}
	if !p.l.h.holdIdle(inst) {
		p.mu.Unlock()
		inst.close()
		if evicted != nil {
			evicted.close()
		}
		return
	}
	p.ready = append(p.ready, inst)
	p.mu.Unlock()
	if evicted != nil {
		evicted.close()
	}
}

// close stops refilling, ends an instantiation in progress and waits for
// it, and frees the ready instances.
func (p *pool) close() {
	p.mu.Lock()
	if !p.stopped {
		p.stopped = true
		p.cancel()
	}
	ready := p.ready
	p.ready = nil
	p.mu.Unlock()
	p.wg.Wait()
	for _, inst := range ready {
		p.l.h.releaseIdle(inst)
		inst.close()
	}
}

// acquire returns a ready instance, or instantiates one on the caller's
// goroutine when none is ready.
func (l *Loaded) acquire(ctx context.Context) (inst *instance, pooled bool, err error) {
	if s := l.single; s != nil {
		// A stateful module's one instance: calls wait for it in turn.
		s.mu.Lock()
		if s.inst != nil {
			return s.inst, true, nil
		}
		inst, err := l.newInstance(ctx, false)
		if err != nil {
			s.mu.Unlock()
		}
		return inst, false, err
	}
	// An instance reset after an earlier call is as new as the pool's,
	// and warmer: its memory is resident. One still being reset is waited
	// for only when the pool has none ready: either beats instantiating.
	if inst := l.resets.get(l.h, false); inst != nil {
		return inst, true, nil
	}
	p := l.pool
	if p != nil {
		if inst := p.get(); inst != nil {
			return inst, true, nil
		}
	}
	if inst := l.resets.get(l.h, true); inst != nil {
		return inst, true, nil
	}
	inst, err = l.newInstance(ctx, false)
	if err == nil && p != nil {
		p.instantiated()
	}
	return inst, false, err
}

// releaseInstance discards inst, or keeps it for the next call when the
// module reuses instances (and inst served no tainted caller: mayKeep),
// or resets it to the module's snapshot for the next call when the
// module's instances may be reset, in either case only after a call that
// ended well (ok).
func (l *Loaded) releaseInstance(inst *instance, ok bool) {
	if s := l.single; s != nil {
		s.inst = nil
		if ok && !inst.interrupted && !inst.mod.IsClosed() && !l.isClosed() {
			s.inst = inst
		} else {
			inst.close()
		}
		s.mu.Unlock()
		return
	}
	p := l.pool
	if p != nil && l.reuse && ok && inst.mayKeep() && !inst.interrupted && !inst.mod.IsClosed() {
		p.put(inst)
		return
	}
	if ok && l.resetsOn() && l.keepReset(inst) {
		// The reset instance serves a later call, but the pool may be
		// short of what this call took, or never filled (nothing fills it
		// before a first call ends): refill it as for a discarded one,
		// after the call and not beside it (an instantiation beside a
		// call slowed a pooled Go call by half on two cores).
		if p != nil {
			p.discarded()
		}
		return
	}
	inst.close()
	if p != nil {
		p.discarded()
	}
}

// resetPool keeps a module's instances reset to its snapshot after their
// calls (see instance.reset) for the calls that follow: a few, charged to
// the host's idle budgets as a pool's ready instances are. A reset runs
// after the call it followed has returned (keepReset), so the caller does
// not wait for it; the next call waits for one in progress rather than
// make an instance of its own.
type resetPool struct {
	mu      sync.Mutex
	settled sync.Cond // signalled as each reset in progress ends
	ready   []*instance
	pending int // resets in progress
	closed  bool
}

// maxResets bounds the reset instances a module keeps: as many as calls
// can run at once on the host's cores, at least two.
func maxResets() int { return max(2, runtime.GOMAXPROCS(0)) }

// cond returns r.settled tied to r.mu; r.mu is held.
func (r *resetPool) cond() *sync.Cond {
	if r.settled.L == nil {
		r.settled.L = &r.mu
	}
	return &r.settled
}

// get returns a reset instance, or nil; with wait, it waits for a reset
// in progress when none is ready.
func (r *resetPool) get(h *Host, wait bool) *instance {
	r.mu.Lock()
	defer r.mu.Unlock()
	for wait && len(r.ready) == 0 && r.pending > 0 {
		r.cond().Wait()
	}
	n := len(r.ready)
	if n == 0 {
		return nil
	}
	inst := r.ready[n-1]
	r.ready[n-1] = nil
	r.ready = r.ready[:n-1]
	h.releaseIdle(inst)
	return inst
}

// begin registers a reset about to run, reporting false when the module
// is closing.
func (r *resetPool) begin() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.pending++
	return true
}

// end ends a reset begin registered: inst, reset when ok, is kept unless
// enough are kept, an idle budget cannot take it, or the module is
// closing; then it is closed (releaseInstance already asked the pool to
// refill). The reset counts as in progress until inst is kept or closed:
// close waits for that, so the host does not free the runtime under an
// instance still closing (Options.resetHook is the tests' way in).
func (r *resetPool) end(inst *instance, ok bool) {
	hook := inst.l.h.opts.resetHook
	if hook != nil {
		hook("end")
	}
	r.mu.Lock()
	keep := ok && !r.closed && len(r.ready) < maxResets() && inst.l.h.holdIdle(inst)
	if keep {
		r.ready = append(r.ready, inst)
	}
	r.mu.Unlock()
	if !keep {
		if hook != nil {
			hook("close")
		}
		inst.close()
	}
	r.mu.Lock()
	r.pending--
	r.cond().Broadcast()
	r.mu.Unlock()
}

// count waits for the resets in progress and returns how many instances
// are kept.
func (r *resetPool) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.pending > 0 {
		r.cond().Wait()
	}
	return len(r.ready)
}

// close waits for the resets in progress, then frees the kept instances;
// none is kept after it.
func (r *resetPool) close(h *Host) {
	r.mu.Lock()
	r.closed = true
	for r.pending > 0 {
		r.cond().Wait()
	}
	ready := r.ready
	r.ready = nil
	r.mu.Unlock()
	for _, inst := range ready {
		h.releaseIdle(inst)
		inst.close()
	}
}

// keepReset resets inst, whose call ended well, to the module's snapshot
// and keeps it for a later call, reporting whether it took inst; when it
// did not, inst is the caller's to close. The reset runs on a goroutine of
// its own, after the caller has its result: for the JavaScript engine it
// reads 13 MB, a millisecond when the caches went cold between calls.
// Nothing of the call's may touch inst once it is taken.
func (l *Loaded) keepReset(inst *instance) bool {
	snap := l.snaps.snap.Load()
	if snap == nil || l.isClosed() {
		return false
	}
	if why := inst.whyNoReset(); why != "" {
		return false
	}
	if !l.resets.begin() {
		return false
	}
	go func() {
		err := inst.reset(snap)
		if err != nil {
			if lg := l.h.opts.Logger; lg != nil {
				lg.Debug("instance not reset: closing it", "module", l.name, "error", err)
			}
		}
		l.resets.end(inst, err == nil)
	}()
	return true
}
