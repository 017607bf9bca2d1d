package main

import (
	"strings"
	"testing"
)

// TestFailureIsNotUsage: once a verb runs, its failure exits 1 whatever
// words its message holds; only what cobra itself rejects before (an
// unknown flag, a wrong number of arguments) is a usage error.
func TestFailureIsNotUsage(t *testing.T) {
	e := newCLIEnv(t)
	// The file's name holds words cobra's own usage errors use.
	r := e.mustRun(1, "trace", "summarize", "invalid argument received.jsonl")
	if !strings.Contains(r.stderr, "no such file") || strings.Contains(r.stderr, "Usage:") {
		t.Errorf("stderr %q", r.stderr)
	}
	r = e.mustRun(2, "trace", "summarize")
	if !strings.Contains(r.stderr, "Usage:") {
		t.Errorf("no argument: stderr %q", r.stderr)
	}
}
