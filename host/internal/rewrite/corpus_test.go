package rewrite_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/autoagent-go/autoagent/host/internal/kernel"
	"github.com/autoagent-go/autoagent/host/internal/rewrite"
	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
)

// The rewrite against every test module and the verifier against every
// defect the rewrite can be given: the two slowest checks of the host's
// instrumentation, in a package of their own so they run beside the
// host's tests (go test runs packages in parallel).

// wasmFile reads a module of testdata/wasm.
func wasmFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, name))
	if err != nil {
		t.Fatalf("reading test module: %v", err)
	}
	return b
}

// testdata is the repository's testdata/wasm, seen from this package.
var testdata = filepath.Join("..", "..", "..", "testdata", "wasm")

// TestRewriteCorpus: every module the runtime accepts is rewritten into
// one it accepts too, with the same exports (plus the start function's),
// and the kernel as well.
func TestRewriteCorpus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The interpreter validates a module as the compiler does, in a
	// fraction of the time.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	files, _ := filepath.Glob(filepath.Join(testdata, "*.wasm"))
	mods := map[string][]byte{"kernel.wasm": kernel.Wasm}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		mods[filepath.Base(f)] = b
	}
	if len(mods) < 15 {
		t.Fatalf("only %d modules", len(mods))
	}
	for name, b := range mods {
		orig, err := rt.CompileModule(ctx, b)
		m, verr := wasmbin.Validate(b, wasmbin.Limits{})
		// Validation may refuse more (the compile bombs, past a limit),
		// never less.
		if (err == nil) != (verr == nil) && !(err == nil && wasmbin.IsLimit(verr)) {
			t.Errorf("%s: the runtime says %v, validation %v", name, err, verr)
		}
		if err != nil || verr != nil {
			continue
		}
		opts := rewrite.Options{Interrupt: true, MergeData: true, Tables: 1 << 20}
		out, err := rewrite.Apply(m, b, opts)
		var le *wasmbin.LimitError
		if errors.As(err, &le) && le.Limit == "Tables" && name == "tabledeclared.wasm" {
			continue // refused for its table, as it must be
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if _, err := wasmbin.Verify(out, rewrite.VerifyLimits(wasmbin.DefaultLimits()), rewrite.Instrumentation(m)); err != nil {
			t.Errorf("%s: the rewrite fails verification: %v", name, err)
		}
		got, err := rt.CompileModule(ctx, out)
		if err != nil {
			t.Errorf("%s: the rewritten module does not compile: %v", name, err)
			continue
		}
		for export := range orig.ExportedFunctions() {
			if got.ExportedFunctions()[export] == nil {
				t.Errorf("%s: export %s lost", name, export)
			}
		}
		imports := got.ImportedFunctions()
		if m, n, _ := imports[len(imports)-1].Import(); m != rewrite.KernelModule || n != rewrite.YieldImport {
			t.Errorf("%s: the last import is %s.%s, want the yield", name, m, n)
		}
		if !bytes.Contains(out, []byte{0x41, 0x01, 0x48, 0x04, 0x40, 0x41, 0x00, 0x10}) && strings.Contains(name, "loop") {
			t.Errorf("%s: no fuel check was inserted", name)
		}
	}
}

// instrumentationDefects are the ways the rewrite can be wrong that leave
// a guest the host cannot stop or bound (rewrite.Options.Defect).
var instrumentationDefects = []string{"loop", "entry", "charge", "cost", "fuel", "return", "globals", "functions", "fuelAtEnd", "refFunc", "refCost", "bigEntry", "entryCalls", "unpaid", "importUnpaid", "scopeExit", "scopeCalls", "scopeBranch", "goEnter", "goLeave"}

// defectFinding is what verification says of each defect ("" where the
// finding depends on the module: renumbering functions wrongly breaks
// types first or the yield import's use, whichever comes first).
var defectFinding = map[string]string{
	"loop":         "a loop without a fuel check",
	"entry":        "a call outside a block charged to the stack budget",
	"charge":       "a bulk instruction without its fuel charge",
	"cost":         "stack cost 1 below the frame's",
	"fuel":         "a fuel check charges 1 for code of",
	"return":       "without the stack budget's restore",
	"globals":      "guest code uses the host's global 0",
	"functions":    "",
	"fuelAtEnd":    "",
	"refFunc":      "a ref.func without its stack budget charge",
	"refCost":      "a stack budget charge of -64, below 64",
	"bigEntry":     "instructions without a fuel check",
	"entryCalls":   "a function that calls outside its loops has no fuel check",
	"unpaid":       "a fuel check charges",
	"importUnpaid": "a fuel check charges",
	"scopeExit":    "a charged block is not followed by the stack budget's restore",
	"scopeCalls":   "a call outside a block charged to the stack budget",
	"scopeBranch":  "a branch out of a charged block",
	"goEnter":      "a ref.func or table.grow without the host's enter of Go",
	"goLeave":      "a ref.func or table.grow not followed by the host's leave of Go",
}

// TestVerifyCatchesEveryDefect: one defect in the rewrite, whichever,
// makes the rewritten module fail its verification, so the host refuses
// the module (ErrUnsafe) instead of running a guest it may not be able to
// stop. Each defect is injected into every module of the corpus where it
// applies, and must apply to at least one.
func TestVerifyCatchesEveryDefect(t *testing.T) {
	t.Parallel()
	mods := map[string][]byte{"kernel.wasm": kernel.Wasm}
	for _, f := range []string{"echo.wasm", "goecho.wasm", "compute.wasm", "loop.wasm", "wasicmd.wasm", "tablegrow.wasm", "recursion.wasm", "reffunc.wasm"} {
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
				opts := rewrite.Options{Interrupt: true, MergeData: true, Tables: 1 << 20, Defect: defect}
				out, placed, err := rewrite.ApplyInjected(m, b, opts)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !placed && defect != "globals" && defect != "functions" && defect != "fuelAtEnd" {
					continue // nothing for this defect in this module
				}
				if string(out) == string(mustRewrite(t, m, b)) {
					continue // the defect changed nothing here
				}
				injected++
				_, err = wasmbin.Verify(out, rewrite.VerifyLimits(wasmbin.DefaultLimits()), rewrite.Instrumentation(m))
				switch want := defectFinding[defect]; {
				case err == nil:
					t.Errorf("%s: the rewrite with defect %q passed verification", name, defect)
				case !strings.Contains(err.Error(), want):
					// The check meant for this defect must be the one that
					// finds it: another catching it by chance proves nothing
					// about this one.
					t.Errorf("%s: defect %q refused with %q, want %q", name, defect, err, want)
				default:
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
	out, err := rewrite.Apply(m, b, rewrite.Options{Interrupt: true, MergeData: true, Tables: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
