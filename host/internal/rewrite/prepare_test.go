package rewrite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/autoagent-go/autoagent/host/internal/rewrite"
	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
)

// prepareChecked runs what compile does before the runtime sees a module
// (validate, rewrite, verify) and reports whether it accepted b; when it
// did, wazero must accept both the module and its rewrite.
func prepareChecked(t testing.TB, rt wazero.Runtime, b []byte) bool {
	t.Helper()
	m, err := wasmbin.Validate(b, wasmbin.Limits{})
	if err != nil {
		return false
	}
	out, err := rewrite.Apply(m, b, rewrite.Options{Interrupt: true, MergeData: true, Tables: 1 << 20})
	if err != nil {
		return false // refused by the rewrite (a reserved name), not run
	}
	if _, err := wasmbin.Verify(out, rewrite.VerifyLimits(wasmbin.DefaultLimits()), rewrite.Instrumentation(m)); err != nil {
		t.Fatalf("a valid module's rewrite fails verification: %v", err)
	}
	for what, bin := range map[string][]byte{"module": b, "rewritten module": out} {
		if err := compileRecovering(rt, bin); err != nil {
			t.Fatalf("validation accepted a %s wazero refuses: %v", what, err)
		}
	}
	return true
}

func compileRecovering(rt wazero.Runtime, b []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("wazero panicked: %v", p)
		}
	}()
	m, err := rt.CompileModule(context.Background(), b)
	if err == nil {
		_ = m.Close(context.Background())
	}
	return err
}

// TestPrepareMutatedCorpus: every module of testdata/wasm, and thousands
// of one-byte mutations of the small ones: whatever validation, rewrite
// and verification accept, wazero accepts, before and after the rewrite.
func TestPrepareMutatedCorpus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	files, _ := filepath.Glob(filepath.Join(testdata, "*.wasm"))
	r := rand.New(rand.NewPCG(5, 6))
	accepted, mutants := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !prepareChecked(t, rt, b) {
			// A module the limits refuse (the compile bombs) yields
			// mutants that are refused as well, at a validation as
			// costly as the bomb: they test nothing the bomb's own
			// tests do not, at minutes under -race.
			continue
		}
		accepted++
		if len(b) > 64<<10 {
			continue
		}
		for range 100 {
			m := append([]byte(nil), b...)
			m[8+r.IntN(len(m)-8)] ^= byte(1 + r.IntN(255))
			if prepareChecked(t, rt, m) {
				mutants++
			}
		}
	}
	t.Logf("%d corpus modules and %d mutants prepared; wazero accepted every one, and every rewrite", accepted, mutants)
}

// FuzzPrepare: the same property under the fuzzer.
func FuzzPrepare(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testdata, "*.wasm"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	f.Cleanup(func() { _ = rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, b []byte) { prepareChecked(t, rt, b) })
}
