package host

import (
	"context"
	"errors"
	"testing"

	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
)

// instrumentationDefects are the ways the rewrite can be wrong that leave
// a guest the host cannot stop or bound (rewriteOptions.defect).
var instrumentationDefects = []string{"loop", "entry", "charge", "cost", "fuel", "return", "globals", "functions", "fuelAtEnd"}

// TestVerifyCatchesEveryDefect: one defect in the rewrite, whichever,
// makes the rewritten module fail its verification, so the host refuses
// the module (ErrUnsafe) instead of running a guest it may not be able to
// stop. Each defect is injected into every module of the corpus where it
// applies, and must apply to at least one.
func TestVerifyCatchesEveryDefect(t *testing.T) {
	t.Parallel()
	mods := map[string][]byte{"kernel.wasm": kernelWasm}
	for _, f := range []string{"echo.wasm", "goecho.wasm", "compute.wasm", "loop.wasm", "wasicmd.wasm", "tablegrow.wasm", "recursion.wasm"} {
		mods[f] = wasmFile(t, f)
	}
	for _, defect := range instrumentationDefects {
		t.Run(defect, func(t *testing.T) {
			injected := 0
			for name, b := range mods {
				m, err := wasmbin.Validate(b, wasmbin.Limits{})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				opts := rewriteOptions{interrupt: true, mergeData: true, tables: 1 << 20, defect: defect}
				w := &rewriter{}
				out, err := rewriteWith(w, m, b, opts)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !w.injected && defect != "globals" && defect != "functions" && defect != "fuelAtEnd" {
					continue // nothing for this defect in this module
				}
				if string(out) == string(mustRewrite(t, m, b)) {
					continue // the defect changed nothing here
				}
				injected++
				if _, err := wasmbin.Verify(out, verifyLimits(wasmbin.DefaultLimits), instrumentation(m)); err == nil {
					t.Errorf("%s: the rewrite with defect %q passed verification", name, defect)
				} else {
					t.Logf("%s: %v", name, err)
				}
			}
			if injected == 0 {
				t.Fatalf("defect %q applies to no module of the corpus", defect)
			}
		})
	}
}

func mustRewrite(t *testing.T, m *wasmbin.Module, b []byte) []byte {
	t.Helper()
	out, err := rewrite(m, b, rewriteOptions{interrupt: true, mergeData: true, tables: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

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
