// Package pyenginetest gives tests code mode's Python engine
// (.cache/python/pyengine.wasm, which `make python-engine` builds and
// `make test` builds first). Unlike the JavaScript engine (internal/
// enginetest), it is not built from a test: the build compiles CPython
// (about 10 minutes on 2 cores the first time), so a missing or stale
// engine fails the test with the command that builds it. Nothing skips: a
// test that needs the engine and has none fails.
//
//	func TestSomething(t *testing.T) {
//		path := pyenginetest.Path(t)
//		...
//	}
package pyenginetest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Env names an engine to use instead of the checkout's (pyprogram.EngineEnv;
// pyprogram is not imported, so its tests can use this package).
const Env = "AUTOAGENT_PY_ENGINE"

var (
	once sync.Once
	path string
	err  error
)

// Path returns the path of the Python engine: $AUTOAGENT_PY_ENGINE when
// set, else the checkout's .cache/python/pyengine.wasm once build.sh
// --check says it is up to date with its sources. Otherwise it fails t,
// saying to run `make python-engine`.
func Path(t testing.TB) string {
	t.Helper()
	p, err := Ensure()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Ensure is Path for a TestMain: the path, or why there is none.
func Ensure() (string, error) {
	once.Do(func() { path, err = find() })
	return path, err
}

func find() (string, error) {
	if env := os.Getenv(Env); env != "" {
		if _, err := os.Stat(env); err != nil {
			return "", fmt.Errorf("pyenginetest: $%s: %v", Env, err)
		}
		return env, nil
	}
	root, err := checkout()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, ".cache", "python", "pyengine.wasm")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("pyenginetest: the Python engine %s is not built: run `make python-engine` in %s "+
			"(it builds CPython for wasm32-wasi: about 10 minutes on 2 cores, once; `make test` does it first)", p, root)
	}
	cmd := exec.Command("bash", filepath.Join(root, "codemode", "pyprogram", "build", "build.sh"), "--check")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("pyenginetest: the Python engine %s is older than its sources (codemode/pyprogram/build): run `make python-engine` in %s (%v %s)",
			p, root, err, strings.TrimSpace(string(out)))
	}
	return p, nil
}

// checkout finds the repository root above the working directory: the
// directory holding codemode/pyprogram/build/build.sh.
func checkout() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "codemode", "pyprogram", "build", "build.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("pyenginetest: no autoagent checkout (codemode/pyprogram/build/build.sh) above the working directory")
		}
		dir = parent
	}
}
