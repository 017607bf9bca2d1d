// Package workspace is a directory whose files a model, a Go tool or a
// sandboxed module reads and writes through a fence and a journal, so
// every change can be listed, diffed and rolled back.
//
//	w, err := workspace.Open("_out", workspace.Options{WriteExt: []string{".md"}})
//	c, err := w.Write(ctx, "report.md", []byte("# Report\n"))
//	_, err = w.Write(ctx, "../demo.py", nil)    // path escapes the workspace
//	_, err = w.Write(ctx, "virus.exe", nil)     // extension .exe is not allowed here: allowed .md
//	_, err = w.Rollback(ctx, c.ID)
//
// # The fence
//
// Paths are relative and slash-separated. An absolute or volume path
// (`/etc/x`, `C:/Windows/x.md`, `\\server\x`), one that climbs out with
// `..`, or one that names the journal directory is refused before the
// file system is asked. Files are reached through an [os.Root], so no
// symbolic link leads outside; a link into the journal directory is
// refused by the directory's identity; a link is read through but never
// written through. Only regular files with one hard link are read or
// written: a FIFO, a device or a socket, or a second name of a file from
// elsewhere, is refused. Read and write extension allowlists
// ([Options.ReadExt], [Options.WriteExt]) and size limits per file and in
// total apply to every entry point: the methods, the tools, [Evolve] and
// [Workspace.Before]. Refusals are errors whose text a model reads
// ([ErrEscape], [ErrAbsolute], [*ExtensionError], ...).
//
// # The journal
//
// The journal lives in the workspace, in [JournalDir]: a JSON-lines file
// and a store of file images named by their SHA-256, so a file rewritten
// a thousand times costs its distinct versions only. A change is written
// to the journal (its before-images stored) before it takes effect, and a
// file is replaced by a temporary file renamed over it, or on Linux
// exchanged with it, the old file becoming its before-image: a crash of
// the process at any point (a kill -9) leaves each file before or after
// its change, and [Open] puts back the before-images of a change that has
// no "done" line. That needs the order of the writes, not fsync; set
// [Options.Sync] to be safe against a power loss too, at about ten times
// the cost of a write. A torn last line is ignored. The journal is locked
// around each change (flock on Unix, LockFileEx on Windows), so several
// processes may share a workspace and lose no entry. On Windows the hard
// link count is not read, so the hard-link refusal is Unix only.
//
// Each change records who made it (run, call and tool, from
// [loop.CallInfoFrom]), when, and why ([WithReason]). [Workspace.Changes]
// lists them, [Workspace.Diff] shows one as a unified diff, and
// [Workspace.Rollback], [Workspace.RollbackRun] and
// [Workspace.RollbackLast] undo them. A rollback refuses to lose work: when
// a file was changed since, by a later change or by hand, it says which
// and what to roll back first. A rollback is a change itself; rolling it
// back redoes what it undid.
//
// # Tools and modules
//
// [Tools] gives a model read_file, write_file, list_dir, list_changes and
// rollback; [ProposeChange] gives it propose_change, which applies a set
// of files through [Evolve] and keeps it only when the host's validator
// passes. A sandboxed module granted fs.workspace:PATH writes through the
// same journal: the host calls [Workspace.Before] before the module's
// first change of a file in a call.
//
// Directories are not journaled: a rollback removes the directories a
// change made when they are left empty, and makes those a file it puts
// back needs.
package workspace
