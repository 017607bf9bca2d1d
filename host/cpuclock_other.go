//go:build !unix

package host

import "time"

// selfCPU reports no CPU clock: a compilation is then bounded by
// Options.CompileTimeout of wall time alone.
func selfCPU() (time.Duration, bool) { return 0, false }
