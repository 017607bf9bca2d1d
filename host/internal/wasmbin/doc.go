// Package wasmbin decodes and validates WebAssembly 2.0 binaries, and
// verifies the instrumentation the host's rewrite adds to them.
//
//	m, err := wasmbin.Validate(bin, wasmbin.Limits{})
//	if err != nil {
//		return err // *wasmbin.Error (malformed or invalid) or *wasmbin.LimitError
//	}
//	fmt.Println(len(m.Funcs), "functions")
//
// Validate is the host's first line of defence: a module is validated in
// full (every section, every index space, every instruction's operand
// types, as the specification's validation algorithm does) before the host
// rewrites or compiles it, so the rewrite only ever sees modules that are
// valid as written. Validation also enforces [Limits] on what a module may
// declare (sizes, counts, locals, operand stack height, nesting), which
// keeps decoding, rewriting and compiling bounded in time and memory.
//
// Verify is the second: it validates the rewritten module again, with this
// package's own decoder (not the rewriter's), and checks the
// [Instrumentation] the rewrite must have added (a fuel check at every loop
// header, stack accounting around every function that calls, a charge
// before every bulk instruction) and that guest code reaches none of the
// state the rewrite added. A defect in the rewriter is then a refused
// module, not a guest the host cannot stop.
//
// It accepts exactly WebAssembly 2.0 (sign extension, saturating
// conversions, bulk memory, reference types, multi-value, SIMD) and
// refuses every later proposal, as the host's runtime does.
package wasmbin
