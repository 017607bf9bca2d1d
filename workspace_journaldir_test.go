package autoagent_test

import (
	"testing"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/workspace"
)

// The host keeps a module's fs.workspace grant out of the directory the
// workspace keeps its journal in: the two names are one.
func TestHostHidesTheWorkspaceJournal(t *testing.T) {
	if host.JournalDir != workspace.JournalDir {
		t.Fatalf("host.JournalDir %q, workspace.JournalDir %q: a module could reach the journal", host.JournalDir, workspace.JournalDir)
	}
}
