package supervisor

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	const lo, hi = 100 * time.Millisecond, time.Second
	tests := []struct {
		failures int
		want     time.Duration
	}{
		{0, 0}, {1, 100 * time.Millisecond}, {2, 200 * time.Millisecond},
		{3, 400 * time.Millisecond}, {4, 800 * time.Millisecond}, {5, time.Second}, {60, time.Second},
	}
	for _, tt := range tests {
		if got := backoff(tt.failures, lo, hi); got != tt.want {
			t.Errorf("backoff(%d) = %v, want %v", tt.failures, got, tt.want)
		}
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	var tl tail
	for range tailSize / 10 {
		tl.Write([]byte("0123456789"))
	}
	tl.Write([]byte("\npanic: the end\n"))
	s := tl.String()
	if len(s) > tailSize || s[len(s)-len("panic: the end"):] != "panic: the end" {
		t.Errorf("tail = ...%q (len %d)", s[max(0, len(s)-40):], len(s))
	}
}
