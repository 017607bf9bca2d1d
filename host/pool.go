package host

import (
	"context"
	"sync"
)

// pool keeps pre-initialised instances of one module so a call rarely
// waits for instantiation (and, for Go guests, runtime start-up). Each
// instance serves one call and is discarded, unless the module has Reuse.
// One goroutine per module refills it; it ends with the module.
type pool struct {
	l     *Loaded
	ready chan *instance
	kick  chan struct{}
	stop  chan struct{}
	wg    sync.WaitGroup
}

func newPool(l *Loaded, size int) *pool {
	if size <= 0 {
		return nil
	}
	p := &pool{
		l:     l,
		ready: make(chan *instance, size),
		kick:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
	}
	p.wg.Add(1)
	go p.fill()
	return p
}

// fill instantiates until the pool is full, then waits for room. After a
// failed instantiation it waits for the next call before trying again, so
// a module that cannot start does not spin.
func (p *pool) fill() {
	defer p.wg.Done()
	for {
		inst, err := p.l.newInstance(context.Background(), false)
		if err != nil {
			select {
			case <-p.kick:
				continue
			case <-p.stop:
				return
			}
		}
		select {
		case p.ready <- inst:
		case <-p.stop:
			inst.close()
			return
		}
	}
}

func (p *pool) close() {
	close(p.stop)
	p.wg.Wait()
	for {
		select {
		case inst := <-p.ready:
			inst.close()
		default:
			return
		}
	}
}

// acquire returns a ready instance, or instantiates one.
func (l *Loaded) acquire(ctx context.Context) (inst *instance, pooled bool, err error) {
	if p := l.pool; p != nil {
		select {
		case inst := <-p.ready:
			return inst, true, nil
		default:
			select {
			case p.kick <- struct{}{}:
			default:
			}
		}
	}
	inst, err = l.newInstance(ctx, false)
	return inst, false, err
}

// releaseInstance discards inst, or keeps it for the next call when the
// module reuses instances and the call ended well.
func (l *Loaded) releaseInstance(inst *instance, ok bool) {
	if ok && l.reuse && l.pool != nil && !inst.mod.IsClosed() {
		l.mu.Lock()
		closed := l.closed
		l.mu.Unlock()
		if !closed {
			select {
			case l.pool.ready <- inst:
				return
			default:
			}
		}
	}
	inst.close()
}
