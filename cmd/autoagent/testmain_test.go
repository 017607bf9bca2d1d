package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// sharedCache is the cache directory (XDG_CACHE_HOME) every test of the
// package uses: compiled machine code is keyed by content, so sharing it
// is what a user's machine does, and each distinct module (the 19 MB
// JavaScript engine above all: minutes under the race detector) is then
// compiled once per test binary, not once per test.
var sharedCache string

func TestMain(m *testing.M) {
	// The go command's build cache defaults to a directory under
	// XDG_CACHE_HOME: keep the user's, or every Go tool build in a test
	// would rebuild the standard library for wasip1.
	if os.Getenv("GOCACHE") == "" {
		if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
			os.Setenv("GOCACHE", strings.TrimSpace(string(out)))
		}
	}
	dir, err := os.MkdirTemp("", "autoagent-cli-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedCache = dir
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
