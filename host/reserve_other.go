//go:build !(linux || darwin || freebsd)

package host

// Elsewhere linear memories live in the Go heap (linearMemory grows them
// by copying).
func reserve(int) ([]byte, bool) { return nil, false }
func unreserve([]byte)           {}
func discard(b []byte, n int)    { clear(b[:n]) }
