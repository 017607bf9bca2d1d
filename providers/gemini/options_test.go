package gemini

import (
	"testing"
	"time"
)

// TestOptionDefaults: the zero Options retry twice and end a stream after
// five silent minutes, as the docs say; negative values turn both off.
func TestOptionDefaults(t *testing.T) {
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.retry.MaxAttempts != 3 || p.cfg.idleTimeout != 5*time.Minute {
		t.Errorf("zero options: %d attempts, idle timeout %v; want 3 and 5m", p.retry.MaxAttempts, p.cfg.idleTimeout)
	}
	p, err = New(Options{MaxRetries: -1, StreamIdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	if p.retry.MaxAttempts != 1 || p.cfg.idleTimeout > 0 {
		t.Errorf("negative options: %d attempts, idle timeout %v; want 1 and none", p.retry.MaxAttempts, p.cfg.idleTimeout)
	}
}
