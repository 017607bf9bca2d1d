package host

import (
	"fmt"
	"time"
)

// Limits bound what one call of a module may use. A zero field takes the
// Host's default (see [DefaultLimits]); a call past a limit ends with a
// [*LimitError] result, its instance is discarded and the host keeps
// serving.
type Limits struct {
	// Memory caps the guest's linear memory plus its Extism memory blocks,
	// in bytes (rounded up to 64 KiB pages). At most 4 GiB.
	Memory int64
	// Timeout caps the wall time of one call, host functions (HTTP)
	// included.
	Timeout time.Duration
	// Output caps the bytes of a call's result (Extism output or WASI
	// stdout).
	Output int64
	// HTTPResponse caps the body of one HTTP response.
	HTTPResponse int64
	// KVValue caps one value stored in the key-value store.
	KVValue int64
}

// DefaultLimits are the limits of DESIGN.md §4.
var DefaultLimits = Limits{
	Memory:       64 << 20,
	Timeout:      10 * time.Second,
	Output:       1 << 20,
	HTTPResponse: 4 << 20,
	KVValue:      1 << 20,
}

const maxMemory = 4 << 30 // the wasm32 address space

// withDefaults fills zero fields from d.
func (l Limits) withDefaults(d Limits) Limits {
	if l.Memory == 0 {
		l.Memory = d.Memory
	}
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	if l.Output == 0 {
		l.Output = d.Output
	}
	if l.HTTPResponse == 0 {
		l.HTTPResponse = d.HTTPResponse
	}
	if l.KVValue == 0 {
		l.KVValue = d.KVValue
	}
	return l
}

// validate reports a negative or out-of-range limit.
func (l Limits) validate() error {
	switch {
	case l.Memory < 0 || l.Memory > maxMemory:
		return fmt.Errorf("host: memory limit %d out of range (0 to 4 GiB)", l.Memory)
	case l.Timeout < 0:
		return fmt.Errorf("host: negative time limit %v", l.Timeout)
	case l.Output < 0:
		return fmt.Errorf("host: negative output limit %d", l.Output)
	case l.HTTPResponse < 0:
		return fmt.Errorf("host: negative HTTP response limit %d", l.HTTPResponse)
	case l.KVValue < 0:
		return fmt.Errorf("host: negative kv value limit %d", l.KVValue)
	}
	return nil
}

// The limits a LimitError names.
const (
	LimitMemory       = "memory"
	LimitTime         = "time"
	LimitOutput       = "output"
	LimitHTTPResponse = "HTTP response"
	LimitKVValue      = "kv value"
)

// LimitError reports a call that went past one of its module's limits.
type LimitError struct {
	Limit string // one of the Limit* constants
	Value string // the limit, human readable: "10s", "64 MiB"
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("tool exceeded its %s limit of %s", e.Limit, e.Value)
}

func limitErr(limit string, n int64) *LimitError {
	return &LimitError{Limit: limit, Value: formatBytes(n)}
}

func timeLimitErr(d time.Duration) *LimitError {
	return &LimitError{Limit: LimitTime, Value: d.String()}
}

// formatBytes writes n as KiB/MiB/GiB when it divides evenly, else bytes.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
