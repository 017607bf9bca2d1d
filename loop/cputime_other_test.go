//go:build !unix

package loop_test

import "time"

// cpuTime is not measured on this platform; benchmarks then report wall
// time only.
func cpuTime() time.Duration { return 0 }
