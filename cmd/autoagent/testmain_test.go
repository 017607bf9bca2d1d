package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/testcache"
)

// sharedCache is the cache directory (XDG_CACHE_HOME) every test of the
// package uses: compiled machine code is keyed by content, so sharing it
// is what a user's machine does, and each distinct module (the 19 MB
// JavaScript engine above all: 30 s and more under the race detector) is
// then compiled once, not once per test. The host's cache in it
// (autoagent/wazero) keeps its compiled code across runs, and nothing
// else (see internal/testcache).
var sharedCache string

// cliMainEnv makes the test binary the autoagent command, for tests that
// need a second process.
const cliMainEnv = "AUTOAGENT_TEST_CLI_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(cliMainEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// The go command's build cache defaults to a directory under
	// XDG_CACHE_HOME: keep the user's, or every Go tool build in a test
	// would rebuild the standard library for wasip1.
	if os.Getenv("GOCACHE") == "" {
		if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
			os.Setenv("GOCACHE", strings.TrimSpace(string(out)))
		}
	}
	code, err := runTests(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func runTests(m *testing.M) (int, error) {
	hostCache, err := testcache.Open(filepath.Join("..", "..", "go.sum"), "cli-tests")
	if err != nil {
		return 0, err
	}
	defer hostCache.Close()
	dir, err := os.MkdirTemp("", "autoagent-cli-test-cache-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	if err := os.Mkdir(filepath.Join(dir, "autoagent"), 0o700); err != nil {
		return 0, err
	}
	if err := os.Symlink(hostCache.Dir, filepath.Join(dir, "autoagent", "wazero")); err != nil {
		return 0, err
	}
	sharedCache = dir
	os.Setenv("XDG_CACHE_HOME", dir)
	// The tests' trust store: never the user's. A test that approves
	// through the CLI trusts what it wrote; one that needs another store
	// sets AUTOAGENT_TRUST itself.
	os.Setenv("AUTOAGENT_TRUST", filepath.Join(dir, "trust.json"))
	return m.Run(), nil
}
