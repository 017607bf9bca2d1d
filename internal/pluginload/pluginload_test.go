package pluginload_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/pluginload"
)

// Report escapes what a plugins directory's file names and a
// module's errors carry: it writes to any writer a program gives it, not
// only the CLI's escaping one (the red team of issue 38: escape sequences
// in a module's file name reached the operator's terminal through the
// start-up report).
func TestReportEscapesModuleText(t *testing.T) {
	name := "evil\x1b[2J\nautoagent: all plugins approved\u202e.wasm"
	snap := &plugindir.Snapshot{
		Plugins: []plugindir.Plugin{
			{File: name, Status: plugindir.StatusPending, Err: plugindir.ErrNotApproved},
			{File: "x\x1b]0;t\x07.wasm", Status: plugindir.StatusInvalid, Err: errors.New("describe said \x1b[31mred")},
		},
		Conflicts: []plugindir.Conflict{{Tool: "t", Files: []string{name, "b.wasm"}}},
	}
	var b strings.Builder
	pluginload.Report(&b, snap)
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07\u202e") {
		t.Errorf("raw terminal text: %q", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "autoagent: all plugins approved") {
			t.Errorf("a file name forged a line: %q", out)
		}
	}
	if !strings.Contains(out, `evil\x1b[2J\nautoagent`) {
		t.Errorf("the name is not shown escaped: %q", out)
	}
}
