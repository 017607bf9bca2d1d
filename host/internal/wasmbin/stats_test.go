package wasmbin

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCorpusStats logs, per module, the largest value each limit sees, to
// show how far the defaults are from real toolchains' output.
func TestCorpusStats(t *testing.T) {
	lim := Limits{Nesting: 1 << 20, StackHeight: 1 << 20, Locals: 1 << 24, FunctionBytes: 1 << 26,
		FunctionWork: 1 << 60, CompileWork: 1 << 60, CallValues: 1 << 30}
	for _, f := range corpus(t) {
		b, _ := os.ReadFile(f)
		m, err := Validate(b, lim)
		if err != nil {
			continue
		}
		var maxSize, maxLocals, maxStack, maxBr, totalBr int
		var sq, lb, maxLB, work, maxWork, maxPhi, maxCall int64
		for i, c := range m.Code {
			params := len(m.FuncType(uint32(m.ImportedFuncs + i)).Params)
			lb = int64(c.Locals+params) * int64(c.Branches)
			maxLB = max(maxLB, lb)
			maxSize = max(maxSize, c.Size)
			maxLocals = max(maxLocals, c.Locals)
			maxStack = max(maxStack, c.MaxStack)
			maxBr = max(maxBr, c.Branches)
			totalBr += c.Branches
			sq += int64(c.Branches) * int64(c.Branches)
			work += c.Work
			maxWork = max(maxWork, c.Work)
			maxPhi = max(maxPhi, c.PhiWork)
			maxCall = max(maxCall, c.CallValues)
		}
		arity := 0
		for _, ty := range m.Types {
			arity += len(ty.Params) + len(ty.Results)
		}
		t.Logf("%-28s %9d bytes %6d funcs; largest function %7d bytes, %5d locals, stack %4d, nesting %d, branches %d (total %d, squares %d), locals x branches %d, type arity %d in %d types, element entries %d; compile work %.3g (largest function's %.3g, phis %.3g, call values %d)",
			filepath.Base(f), len(b), len(m.Funcs), maxSize, maxLocals, maxStack, m.maxNesting, maxBr, totalBr, sq, maxLB, arity, len(m.Types), m.elementEntries,
			float64(work), float64(maxWork), float64(maxPhi), maxCall)
	}
}
