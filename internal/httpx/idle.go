package httpx

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// ErrStreamIdle is wrapped by the read error of a body watched by
// [WatchIdle] when no byte arrived within the idle timeout.
var ErrStreamIdle = errors.New("httpx: no data received within the stream idle timeout")

// WatchIdle wraps a streamed response body so that a server that goes
// silent cannot hang the reader: when no byte arrives for idle, onIdle is
// called (it must cancel the request's context, which unblocks the pending
// read) and reads fail with an error wrapping ErrStreamIdle. idle <= 0
// returns body unchanged. Closing the result stops the timer; it starts no
// goroutine of its own (the timer's callback runs only if it fires).
func WatchIdle(body io.ReadCloser, idle time.Duration, onIdle func()) io.ReadCloser {
	if idle <= 0 {
		return body
	}
	w := &idleBody{rc: body, idle: idle}
	w.timer = time.AfterFunc(idle, func() {
		w.fired.Store(true)
		onIdle()
	})
	return w
}

type idleBody struct {
	rc    io.ReadCloser
	idle  time.Duration
	timer *time.Timer
	fired atomic.Bool
}

func (w *idleBody) Read(p []byte) (int, error) {
	n, err := w.rc.Read(p)
	if w.fired.Load() {
		return n, fmt.Errorf("%w (%v)", ErrStreamIdle, w.idle)
	}
	if n > 0 {
		w.timer.Reset(w.idle)
	}
	return n, err
}

func (w *idleBody) Close() error {
	w.timer.Stop()
	return w.rc.Close()
}
