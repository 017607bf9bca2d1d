package host

import (
	"context"

	"github.com/autoagent-go/autoagent/host/internal/fscap"
)

// Journal records the files a guest changes under an fs.workspace grant,
// before the change takes effect. Options.Journal opens one per grant;
// package workspace's *Workspace is one.
type Journal interface {
	// Before is called before the guest's first change in this call to the
	// file at rel (slash-separated, relative to the workspace root, never
	// escaping it): a write/truncate/create, delete or rename (both the
	// source and the target). The journal stores rel's before-image
	// (absent counts) and returns; an error refuses the guest's operation
	// (the guest sees EACCES/EPERM and the host reports the refusal).
	//
	// ctx is the sandboxed call's: it carries the caller's values (the
	// run, the call) and ends with the call's deadline. Before runs on
	// the calling goroutine, while the guest waits; calls of modules
	// running at once may call it at the same time. rel is a regular
	// file, or an absent one, or a symbolic link the guest deletes; never
	// a directory (made, removed: the host does not journal directories,
	// and refuses to rename one) nor a change of times or mode only.
	Before(ctx context.Context, rel string) error
}

// JournalDir is the directory at a workspace's root where package
// workspace keeps its journal and before-images (workspace.JournalDir).
// Under an fs.workspace grant no guest path reaches a directory of that
// name, at the root or below (a nested workspace's), by any spelling: a
// module that could write there could choose what a rollback restores.
const JournalDir = ".autoagent-workspace"

// ReadChecker is implemented by a Journal that also fences what a guest
// reads under fs.workspace (a workspace's read allowlist). The host calls
// CheckRead before each open that can read a file's content (for reading,
// or reading and writing; not a directory, not a file not there yet),
// with rel as Before has it; an error refuses the open (the guest sees
// EACCES, the call goes on, and its record lists the refusal). It is
// called on the guest's goroutine, while the guest waits, possibly by
// several modules at once.
type ReadChecker interface {
	CheckRead(ctx context.Context, rel string) error
}

var (
	_ fscap.Journal     = Journal(nil)
	_ fscap.ReadChecker = ReadChecker(nil)
)
