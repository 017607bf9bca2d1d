package autoagent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/autoagent-go/autoagent/internal/enginetest"
	"github.com/autoagent-go/autoagent/synth"
)

// TestMain builds the code-mode JavaScript engine when it is missing (make
// test builds it first; a bare `go test` builds it once, see
// internal/enginetest), and names it in $AUTOAGENT_JS_ENGINE, as a user
// does (the runtime does not take a checkout's), so Example_codeMode runs.
func TestMain(m *testing.M) {
	path, err := synth.FindEngine(synth.BridgeEngineFile)
	if err != nil {
		if path, err = enginetest.Ensure(synth.BridgeEngineFile); err != nil {
			fmt.Fprintf(os.Stderr, "autoagent tests: %v\n", err)
			os.Exit(1)
		}
	}
	if os.Getenv(synth.EngineEnv) == "" {
		os.Setenv(synth.EngineEnv, filepath.Join(filepath.Dir(path), synth.EngineFile))
	}
	os.Exit(m.Run())
}
