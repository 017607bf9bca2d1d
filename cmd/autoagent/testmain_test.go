package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/host"
)

// sharedCache is the cache directory (XDG_CACHE_HOME) every test of the
// package uses: compiled machine code is keyed by content, so sharing it
// is what a user's machine does, and each distinct module (the 19 MB
// JavaScript engine above all: 30 s and more under the race detector) is
// then compiled once, not once per test.
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
	linkCompiledCode(dir)
	sharedCache = dir
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// linkCompiledCode makes the host's compilation cache under dir
// (autoagent/wazero) a link to one kept in the user's cache across test
// runs, named after the wazero version the module requires: wazero's own
// version check sees "dev" in a test binary, so it cannot tell two
// versions' code apart. Everything else under dir starts empty in each
// run. Without a user cache the tests compile into dir itself.
func linkCompiledCode(dir string) {
	sum, err := os.ReadFile(filepath.Join("..", "..", "go.sum"))
	if err != nil {
		return
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return
	}
	for line := range strings.Lines(string(sum)) {
		if strings.HasPrefix(line, "github.com/tetratelabs/wazero ") && !strings.Contains(line, "/go.mod ") {
			kept := filepath.Join(base, "autoagent", "cli-tests-"+host.Hash([]byte(line + runtime.GOARCH))[:16])
			if os.MkdirAll(kept, 0o700) != nil || os.MkdirAll(filepath.Join(dir, "autoagent"), 0o700) != nil {
				return
			}
			_ = os.Symlink(kept, filepath.Join(dir, "autoagent", "wazero"))
			return
		}
	}
}
