package plugindir

import (
	"testing"

	"github.com/autoagent-go/autoagent/manifest"
)

func mustGrantsH(t testing.TB, ss ...string) []manifest.Grant {
	t.Helper()
	gs, err := manifest.ParseGrants(ss)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}
