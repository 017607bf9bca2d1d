package autoagent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/autoagent-go/autoagent/internal/enginetest"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/synth"
)

// TestMain builds the code-mode JavaScript engine when it is missing (make
// test builds it first; a bare `go test` builds it once, see
// internal/enginetest), and names it in $AUTOAGENT_JS_ENGINE, as a user
// does (the runtime does not take a checkout's), so Example_codeMode runs.
// The trust store, and the response cache's key beside it, are the
// tests' own ($AUTOAGENT_TRUST), never the user's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "autoagent-root-test")
	if err != nil {
		fmt.Fprintf(os.Stderr, "autoagent tests: %v\n", err)
		os.Exit(1)
	}
	os.Setenv(manifest.TrustEnv, filepath.Join(dir, "trust", "trust.json"))
	code := run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(m *testing.M) int {
	if _, err := enginetest.Ensure(synth.BridgeEngineFile); err != nil {
		fmt.Fprintf(os.Stderr, "autoagent tests: %v\n", err)
		return 1
	}
	return m.Run()
}
