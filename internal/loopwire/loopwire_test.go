package loopwire

import (
	"context"
	"strings"
	"testing"
)

// Without package loop linked in (this test binary does not import it),
// a call says which import is missing instead of a nil dereference.
func TestUninstalledNamesTheImport(t *testing.T) {
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "autoagent/loop") {
			t.Fatalf("panic %q, want one naming the loop's import", msg)
		}
	}()
	NestedPaused(context.Background())
	t.Fatal("no panic")
}

type fakeLoop struct{ Loop }

// One loop serves the wire: a second Install is a bug, and says so.
func TestInstallTwicePanics(t *testing.T) {
	defer func() { installed = nil }()
	Install(fakeLoop{})
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(msg, "twice") {
			t.Fatalf("panic %q, want one saying installed twice", msg)
		}
	}()
	Install(fakeLoop{})
	t.Fatal("no panic")
}
