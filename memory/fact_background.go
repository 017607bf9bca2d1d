package memory

import (
	"context"
	"errors"
	"sync"
)

// bgState tracks the one background consolidation a Fact runs at a time.
type bgState struct {
	mu      sync.Mutex
	done    chan struct{} // closed when the running job ends; nil when idle
	errs    []error
	closed  bool
	ctx     context.Context // cancelled by Close
	cancel  context.CancelFunc
	started int // jobs started, for tests and stats
}

func (b *bgState) init() {
	b.ctx, b.cancel = context.WithCancel(context.Background())
}

// startBackground starts folding conversation messages [covered, j) of t
// in a goroutine, unless a job is already running (the next Compact will
// try again). It reports false when the memory is closed, so the caller
// folds in the foreground instead.
//
// Nothing is dropped from any transcript until the job has stored its
// facts: the job only records the fold, and a later Compact of the same
// conversation (recognised by its prefix fingerprint) adopts it. A job that
// fails leaves the slice to be folded again later.
func (f *Fact) startBackground(ctx context.Context, t *transcript, h [][32]byte, covered, j int, tainted bool) bool {
	b := &f.bg
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	if b.done != nil {
		return true
	}
	done := make(chan struct{})
	b.done = done
	b.started++
	folded := t.slice(covered, j)
	key := h[j]
	foldTainted := tainted || t.anyTainted(covered, j)
	// The job outlives the Compact call by design; it keeps the caller's
	// context values (tracing) but not its cancellation, and stops when
	// the memory is closed.
	jobCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(b.ctx, stop)
	go func() {
		defer close(done)
		defer stop()
		defer unhook()
		f.foldMu.Lock()
		usage, err := f.fold(jobCtx, folded, foldTainted)
		if err == nil {
			f.mu.Lock()
			f.cov.store(&coverEntry{key: key, n: j, tainted: foldTainted})
			f.mu.Unlock()
		}
		f.foldMu.Unlock()
		f.addPending(usage)
		if err != nil {
			f.log.Warn("memory: background fact extraction failed; the messages will be folded later", "error", err)
		}
		b.mu.Lock()
		if err != nil {
			b.errs = append(b.errs, err)
		}
		b.done = nil
		b.mu.Unlock()
	}()
	return true
}

// Flush implements [Flusher]: it waits for the running background
// consolidation, if any, and returns the errors of the jobs that failed
// since the last Flush (nil when all succeeded). It returns ctx.Err() if
// ctx ends first; the job keeps running.
func (f *Fact) Flush(ctx context.Context) error {
	b := &f.bg
	b.mu.Lock()
	done := b.done
	b.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	err := errors.Join(b.errs...)
	b.errs = nil
	return err
}

// close stops background work: the running job is cancelled (its messages
// stay unfolded; nothing is lost) and waited for.
func (b *bgState) close() error {
	b.mu.Lock()
	b.closed = true
	b.cancel()
	done := b.done
	b.mu.Unlock()
	if done != nil {
		<-done
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errs = nil
	return nil
}
