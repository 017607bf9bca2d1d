package host

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// runContext is the context of one run of an instance's guest code (a
// call, describe, or the start-up of a new instance): what its host
// functions see. It carries the caller's values, the run's deadline and
// the instance itself (Value(instanceKey{})), and it ends when the
// deadline passes, the caller's context ends or the run is over.
//
// It is what context.WithDeadline, context.WithValue and a
// context.AfterFunc that interrupts the guest did together, for a
// quarter of a warm call's cost in all (about 1 µs: a timer, a channel,
// a registration with the parent and their allocations). Here the
// deadline is the instance's one timer, reset for each run; the caller's
// context is watched only when it can end; and the channel Done returns
// (a real context.WithDeadline) is made only when something waits on it,
// a sleeping guest or an HTTP request. When the run ends early the guest
// is interrupted at its next yield or host call.
type runContext struct {
	parent   context.Context
	deadline time.Time
	inst     *instance
	// ended is why the run ended, nil while it lasts: the deadline,
	// the parent's error, or context.Canceled when the run is over.
	ended atomic.Pointer[error]

	mu     sync.Mutex
	real   atomic.Pointer[context.Context] // made by Done
	cancel context.CancelFunc
	// stopParent stops watching the parent (context.AfterFunc).
	stopParent func() bool
}

// startRun begins a run of inst under parent, ending by deadline (or the
// parent's own, when earlier). The run must be ended with endRun.
func (inst *instance) startRun(parent context.Context, deadline time.Time) *runContext {
	if pd, ok := parent.Deadline(); ok && pd.Before(deadline) {
		deadline = pd
	}
	c := &runContext{parent: parent, deadline: deadline, inst: inst}
	inst.cur.Store(c)
	if err := parent.Err(); err != nil {
		inst.stopOnEnd()
		c.end(err)
		return c
	}
	if parent.Done() != nil {
		c.stopParent = context.AfterFunc(parent, inst.parentEndedFunc)
	}
	d := time.Until(deadline)
	if d <= 0 {
		inst.stopOnEnd()
		c.end(context.DeadlineExceeded)
		return c
	}
	if inst.timer == nil {
		inst.timer = time.AfterFunc(d, inst.deadlinePassedFunc)
	} else {
		inst.timer.Reset(d)
	}
	return c
}

// endRun ends the run c. An instance whose run was ended by its deadline
// or its caller, or that was asked to stop, is marked interrupted: it does
// not run again (a stop requested late would end its next call).
func (inst *instance) endRun(c *runContext) {
	if inst.timer != nil && !inst.timer.Stop() {
		// The timer fired (its function may still be on its way), or it
		// was not set because the run ended as it began.
		inst.interrupted = true
	}
	if c.stopParent != nil && !c.stopParent() {
		inst.interrupted = true
	}
	if c.ended.Load() != nil || inst.stopRequested.Load() {
		inst.interrupted = true
	}
	c.end(context.Canceled)
	inst.cur.CompareAndSwap(c, nil)
}

// deadlinePassed is the instance timer's function: the current run's
// time is up.
func (inst *instance) deadlinePassed() {
	inst.stopOnEnd()
	if c := inst.cur.Load(); c != nil {
		c.end(context.DeadlineExceeded)
	}
}

// parentEnded runs when the current run's caller's context ends.
func (inst *instance) parentEnded() {
	inst.stopOnEnd()
	if c := inst.cur.Load(); c != nil {
		c.end(c.parent.Err())
	}
}

// stopOutput ends the current run when its output passed the limit
// (cappedBuffer.stop).
func (inst *instance) stopOutput() {
	inst.stopOnEnd()
	if c := inst.cur.Load(); c != nil {
		c.end(context.Canceled)
	}
}

// stopOnEnd interrupts the guest of a run that is ending (before its
// context is done, so whoever sees it done sees the guest asked to stop),
// unless the host
// runs without interruption (a comparison benchmark, or the defect the
// watchdog's test injects).
func (inst *instance) stopOnEnd() {
	if inst.l.h.opts.deadlines == deadlineInterrupt && inst.l.h.opts.defect != "nointerrupt" {
		inst.interrupt()
	}
}

// end records why the run ended, the first time, and closes Done.
func (c *runContext) end(err error) {
	if err == nil {
		err = context.Canceled
	}
	if !c.ended.CompareAndSwap(nil, &err) {
		return
	}
	c.mu.Lock()
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (c *runContext) Deadline() (time.Time, bool) { return c.deadline, true }

// Done is a real context's channel, made the first time it is asked for.
func (c *runContext) Done() <-chan struct{} { return (*c.realContext()).Done() }

func (c *runContext) realContext() *context.Context {
	if r := c.real.Load(); r != nil {
		return r
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.real.Load(); r != nil {
		return r
	}
	ctx, cancel := context.WithDeadline(c.parent, c.deadline)
	if c.ended.Load() != nil {
		cancel()
	}
	c.real.Store(&ctx)
	c.cancel = cancel
	return &ctx
}

func (c *runContext) Err() error {
	if e := c.ended.Load(); e != nil {
		return *e
	}
	if r := c.real.Load(); r != nil {
		return (*r).Err()
	}
	return nil
}

// Value returns the instance for instanceKey; other keys are the
// parent's (or, once Done was asked for, the real context's, so a context
// derived from this one is cancelled with it without a goroutine of its
// own).
func (c *runContext) Value(key any) any {
	if _, ok := key.(instanceKey); ok {
		return c.inst
	}
	if r := c.real.Load(); r != nil {
		return (*r).Value(key)
	}
	return c.parent.Value(key)
}
