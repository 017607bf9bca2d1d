package host

import (
	"context"
	"errors"
	"testing"
)

// TestDefectiveHostRefusesModules: through Load, a host whose rewrite has
// a defect refuses the module with ErrUnsafe and keeps serving others.
func TestDefectiveHostRefusesModules(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{NoDiskCache: true, defect: "loop"})
	_, err := h.Load(context.Background(), Module{Name: "loop", Bytes: wasmFile(t, "loop.wasm")})
	if !errors.Is(err, ErrUnsafe) {
		t.Fatalf("Load with a defective rewrite: %v, want ErrUnsafe", err)
	}
	good, _ := newTestHost(t, Options{})
	mustEcho(t, good)
}
