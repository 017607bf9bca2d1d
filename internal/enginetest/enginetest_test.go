package enginetest

import (
	"strings"
	"testing"
)

// An engine the package does not know is an error naming it, not a build
// of something else.
func TestUnknownEngine(t *testing.T) {
	if _, err := Ensure("jsengine-old.wasm"); err == nil || !strings.Contains(err.Error(), `"jsengine-old.wasm"`) {
		t.Fatalf("Ensure of an unknown engine: %v", err)
	}
}
