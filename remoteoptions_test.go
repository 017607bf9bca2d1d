package autoagent_test

import (
	"testing"

	memremote "github.com/autoagent-go/autoagent/memory/remote"
	provremote "github.com/autoagent-go/autoagent/providers/remote"
)

// TestRemoteOptionsAreOneType: the two backend kinds take one Options
// type, so a configuration written for one is the other's (this file does
// not compile when they drift apart).
func TestRemoteOptionsAreOneType(t *testing.T) {
	var o provremote.Options = memremote.Options{Name: "x", Args: []string{"--db", "f"}}
	if o.Name != "x" || len(o.Args) != 2 {
		t.Fatalf("options = %+v", o)
	}
}
