// Package enginetest gives tests the JavaScript engine modules that
// `make synth-engine` builds, building them when they are missing, so a
// bare `go test ./...` on a fresh clone runs every JavaScript test instead
// of failing or skipping it, whichever package comes first.
//
//	func TestSomething(t *testing.T) {
//		path := enginetest.Path(t, synth.EngineFile)
//		...
//	}
//
// The engines go where make puts them (.cache/synth in the checkout).
// synth.FindEngine does not search a checkout (it is not trusted to bring
// the engine), so Ensure names the checkout's engine in
// $AUTOAGENT_JS_ENGINE for the test process and the commands it starts,
// as a user does, unless the variable is already set (make sets it to the
// same file). Builds are serialised across the test
// processes of one `go test` run by a lock file, and each writes a
// temporary file renamed into place, so no test sees half an engine.
package enginetest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The engines and the build tag each needs (synth.EngineFile and
// synth.BridgeEngineFile; synth is not imported, so its own tests can use
// this package).
var tags = map[string]string{"jsengine.wasm": "", "jsengine-tools.wasm": "toolbridge"}

var (
	mu    sync.Mutex
	built = map[string]string{}
)

// Path returns the path of engine file (jsengine.wasm or
// jsengine-tools.wasm) in the checkout's .cache/synth, building it first
// when it is not there. A failed build fails the test.
func Path(t testing.TB, file string) string {
	t.Helper()
	p, err := Ensure(file)
	if err != nil {
		t.Fatalf("the JavaScript engine %s: %v", file, err)
	}
	return p
}

// Ensure is Path for a TestMain: it returns the path or why the engine
// could not be built. When $AUTOAGENT_JS_ENGINE names an engine and file
// is beside it, that file is the one returned, built or not.
func Ensure(file string) (string, error) {
	tag, ok := tags[file]
	if !ok {
		return "", fmt.Errorf("enginetest: unknown engine %q", file)
	}
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[file]; ok {
		return p, nil
	}
	// An engine the environment names is the one to test (make names the
	// checkout's; a person comparing two builds names the other).
	if env := os.Getenv(engineEnv); env != "" {
		p := filepath.Join(filepath.Dir(env), file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			built[file] = p
			return p, nil
		}
	}
	root, err := checkout()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", "synth")
	out := filepath.Join(dir, file)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lock(filepath.Join(dir, ".build.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(out); err == nil {
		return found(file, out), nil
	}
	fmt.Fprintf(os.Stderr, "enginetest: building %s (once; `make synth-engine` does the same)\n", out)
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-tags="+tag, "-o", tmp, ".")
	cmd.Dir = filepath.Join(root, "synth", "jsengine")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("go build in %s: %v\n%s", cmd.Dir, err, b)
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", err
	}
	return found(file, out), nil
}

// engineEnv is synth.EngineEnv (synth is not imported: see tags).
const engineEnv = "AUTOAGENT_JS_ENGINE"

// found records the engine at path and names the plain engine beside it
// in $AUTOAGENT_JS_ENGINE when the variable is unset.
func found(file, path string) string {
	built[file] = path
	if os.Getenv(engineEnv) == "" {
		os.Setenv(engineEnv, filepath.Join(filepath.Dir(path), "jsengine.wasm"))
	}
	return path
}

// checkout finds the repository root above the working directory: the
// directory holding synth/jsengine/go.mod.
func checkout() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "synth", "jsengine", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("enginetest: no autoagent checkout (synth/jsengine/go.mod) above the working directory")
		}
		dir = parent
	}
}
