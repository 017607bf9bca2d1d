package host

import (
	"context"
	"errors"
	"testing"

	"github.com/autoagent-go/autoagent/host/internal/wasiguard"
)

// TestWASICallsCheckTheStop: before each WASI function runs, its listener
// checks, as the host's own functions do, whether the call was told to
// stop (time limit, caller gone, watchdog): a stopped call ends there, at
// the WASI call, not at the guest's next fuel check. The loops' checks and
// the granted file system's own deadline checks hide this from any guest
// of the corpus, so the listener is called directly.
func TestWASICallsCheckTheStop(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "wasicmd.wasm", Module{})
	inst, err := l.newInstance(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.close()
	ctx := context.WithValue(context.Background(), instanceKey{}, inst)
	lis := wasiguard.NewListener("random_get", findWASI)

	before := func() (p any) {
		defer func() { p = recover() }()
		lis.Before(ctx, nil, nil, nil, nil)
		return nil
	}
	if p := before(); p != nil {
		t.Fatalf("a WASI call of a running call panicked with %v", p)
	}
	if !inst.watch.inHost.Load() {
		t.Error("a WASI call is not marked as time in a host function")
	}
	lis.After(ctx, nil, nil, nil)
	if inst.watch.inHost.Load() {
		t.Error("the host-function mark outlives the WASI call")
	}

	inst.interrupt()
	p := before()
	if err, ok := p.(error); !ok || !errors.Is(err, errInterrupted) {
		t.Fatalf("a WASI call of a call told to stop went on (recovered %v), want it ended with errInterrupted", p)
	}
}
