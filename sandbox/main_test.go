package sandbox_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/autoagent-go/autoagent/internal/enginetest"
	"github.com/autoagent-go/autoagent/synth"
)

// TestMain builds the code-mode JavaScript engine when it is missing (make
// test builds it first; a bare `go test` builds it once, see
// internal/enginetest), and names it in $AUTOAGENT_JS_ENGINE, as a user
// does (the sandbox does not take a checkout's).
func TestMain(m *testing.M) {
	if _, err := enginetest.Ensure(synth.BridgeEngineFile); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox tests: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
