package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The offline scenario runs end to end: the fence refuses the three
// paths, the host's validator rejects the proposal that drops a payment
// and keeps the one that names them all, and the rollbacks leave _out/
// empty.
func TestLogAuditOffline(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, config{logs: ".", work: t.TempDir()}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"every gateway 502 matches exactly one FAILED payment",
		"gateway 502s matched to one FAILED payment: p-502, p-507, p-511",
		"write ../demo.py: path escapes the workspace",
		"write virus.exe: extension .exe is not allowed here: allowed .md",
		"write C:/Windows/x.md: absolute paths are not allowed",
		`"a shorter report" (change 2): rejected, rolled back by change 3; validator: report.md leaves out the 502 payments p-511`,
		`"add a timeline" (change 4): kept`,
		"+- 10:05:55 p-511",
		"change 5 rolled back change [4]",
		"_out/ now holds 0 files",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
