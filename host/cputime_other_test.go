//go:build !unix

package host

import "time"

// processCPU is not measured on this system: benchmarks report wall time
// only.
func processCPU() time.Duration { return 0 }
