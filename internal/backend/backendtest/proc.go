package backendtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// statFields returns the fields of a /proc/.../stat file after the command
// name (which may hold spaces): the state first, then the parent pid.
func statFields(b []byte) []string {
	return strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
}

// AssertReaped fails when pid is still a child of this process, running
// or a zombie. It checks once: whoever stopped the backend has already
// reaped it by the time it returned.
func AssertReaped(t testing.TB, pid int) {
	t.Helper()
	if pid == 0 {
		t.Fatal("no pid to check")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatalf("read /proc: %v", err)
	}
	f := statFields(b)
	if f[1] == strconv.Itoa(os.Getpid()) {
		t.Fatalf("backend pid %d is still our child, in state %s (Z: a zombie)", pid, f[0])
	}
}

// WaitStopped waits until every thread of pid is stopped: kill(SIGSTOP)
// returns before the group stop completes, and a thread still running
// could answer a request meanwhile.
func WaitStopped(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(markerWait)
	for time.Now().Before(deadline) {
		stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		stopped := len(stats) > 0
		for _, f := range stats {
			b, err := os.ReadFile(f)
			if st := statFields(b); err != nil || len(st) == 0 || (st[0] != "T" && st[0] != "t") {
				stopped = false
				break
			}
		}
		if stopped {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("process %d did not stop", pid)
}
