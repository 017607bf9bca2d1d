//go:build !unix

package conformance_test

import "time"

// processCPU reports nothing where getrusage is missing: the benchmarks
// then report no cpu-ns/op.
func processCPU() time.Duration { return 0 }
