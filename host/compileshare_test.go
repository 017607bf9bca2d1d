package host

import (
	"context"
	"testing"
	"time"
)

// A compilation two callers share is not failed for the second because
// the first gave up: the first caller's context is cancelled while the
// module compiles, and the second, still waiting, compiles it itself and
// loads it (issue 38's leftover: "a shared compile is cancelled by one
// caller's ctx").
func TestSharedCompileOutlivesItsFirstCaller(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 2)
	hold := make(chan struct{})
	builds := 0
	h, _ := newTestHost(t, Options{NoDiskCache: true, buildHook: func(ctx context.Context) error {
		builds++ // builds run one after the other here: the second starts after the first failed
		started <- struct{}{}
		if builds == 1 {
			<-hold
		}
		return ctx.Err()
	}})
	m := Module{Name: "echo", Bytes: wasmFile(t, "echo.wasm")}
	first, cancel := context.WithCancel(context.Background())
	firstDone := make(chan error, 1)
	go func() {
		_, err := h.Load(first, m)
		firstDone <- err
	}()
	<-started
	secondDone := make(chan error, 1)
	var second *Loaded
	go func() {
		l, err := h.Load(context.Background(), m)
		second = l
		secondDone <- err
	}()
	// The second caller waits on the first's compilation (it holds a
	// reference to the entry) before the first is cancelled.
	for {
		h.mu.Lock()
		refs := 0
		for _, e := range h.compiled {
			refs += e.refs
		}
		h.mu.Unlock()
		if refs == 2 {
			break
		}
		select {
		case err := <-secondDone:
			t.Fatalf("the second load ended before waiting: %v", err)
		default:
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	close(hold)
	if err := <-firstDone; err == nil {
		t.Fatal("the cancelled first load succeeded")
	}
	if err := <-secondDone; err != nil {
		t.Fatalf("the second load failed with the first's cancellation: %v", err)
	}
	defer second.Close(context.Background())
	if builds != 2 {
		t.Errorf("%d compilations; want the second caller's own", builds)
	}
}
