package workspace

import (
	"errors"
	"fmt"
	"strings"
)

// Refusals of the fence. Their texts are written for the model: a tool
// passes them on as the result of a refused call.
var (
	// ErrEscape: the path leads outside the workspace (`..`, or a
	// symbolic link pointing out).
	ErrEscape = errors.New("path escapes the workspace")
	// ErrAbsolute: the path is absolute or names a volume (`/etc/x`,
	// `C:/Windows/x.md`, `\\server\share`).
	ErrAbsolute = errors.New("absolute paths are not allowed: write a path relative to the workspace")
	// ErrReserved: the path is inside the workspace's journal directory.
	ErrReserved = errors.New("the " + JournalDir + " directory holds the workspace's journal: it is not read or written through the workspace")
	// ErrNotRegular: the path names a FIFO, device, socket or other
	// special file.
	ErrNotRegular = errors.New("not a regular file: only regular files and directories are used in a workspace")
	// ErrHardLink: the file has more than one hard link, so it may be a
	// file from outside the workspace under a second name.
	ErrHardLink = errors.New("the file has other hard links (it may be a file from outside the workspace): it is not read or written")
	// ErrLink: a change was asked of a symbolic link.
	ErrLink = errors.New("a symbolic link is not changed or written through in a workspace: name the file it points to")
	// ErrIsDir: a file operation was asked of a directory.
	ErrIsDir = errors.New("is a directory: name a file")
	// ErrNotFound: no file or directory at the path.
	ErrNotFound = errors.New("no such file or directory in the workspace")
	// ErrBadPath: the path is empty, too long, holds a NUL or a backslash.
	ErrBadPath = errors.New("invalid path: write a relative path with / between its parts")
	// ErrNoChange: the change, run or file has nothing to roll back.
	ErrNoChange = errors.New("workspace: nothing to roll back")
	// ErrClosed: the workspace was closed.
	ErrClosed = errors.New("workspace: closed")

	// errNoSwap: the platform or the file system cannot exchange two
	// files in one step; the file's before-image is copied instead.
	errNoSwap = errors.New("workspace: the file system cannot exchange two files")
)

// PathError is a refusal of one path; errors.Is matches its Err.
type PathError struct {
	Op   string // read, write, append, delete, rename, list, stat
	Path string // the path as given
	Err  error
}

func (e *PathError) Error() string { return e.Op + " " + e.Path + ": " + e.Err.Error() }
func (e *PathError) Unwrap() error { return e.Err }

// ExtensionError refuses a file whose extension the workspace does not
// allow for the operation.
type ExtensionError struct {
	Ext     string   // the file's extension, lower case with its dot; "" for none
	Allowed []string // the allowed extensions
	Write   bool     // the write allowlist refused it (else the read allowlist)
}

func (e *ExtensionError) Error() string {
	ext := e.Ext
	if ext == "" {
		ext = "(none)"
	}
	return fmt.Sprintf("extension %s is not allowed here: allowed %s", ext, strings.Join(e.Allowed, ", "))
}

// SizeError refuses a write that would pass a size limit.
type SizeError struct {
	Size  int64 // the file's size, or the workspace's total, after the write
	Limit int64
	Total bool // the limit is the workspace's total (else the file's)
}

func (e *SizeError) Error() string {
	if e.Total {
		return fmt.Sprintf("the workspace would hold %d bytes, over its limit of %d: delete files or write less", e.Size, e.Limit)
	}
	return fmt.Sprintf("the file would be %d bytes, over the limit of %d per file: write less", e.Size, e.Limit)
}

// ConflictError refuses a rollback that would undo work it does not
// include: the file was changed since the change being rolled back.
type ConflictError struct {
	Change int    // the change being rolled back
	Path   string // the file
	Later  int    // the later change that touched it; 0 when it was changed outside the journal
}

func (e *ConflictError) Error() string {
	if e.Later == 0 {
		return fmt.Sprintf("change %d cannot be rolled back: %s was changed outside the workspace since", e.Change, e.Path)
	}
	return fmt.Sprintf("change %d cannot be rolled back alone: %s was changed since by change %d (roll back change %d first, or its whole run)", e.Change, e.Path, e.Later, e.Later)
}

// CorruptError reports a journal line that cannot be read (other than a
// torn last line, which is ignored).
type CorruptError struct {
	Offset int64
	Err    error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("workspace: journal corrupt at byte %d: %v (move %s/%s aside to start a new journal)", e.Offset, e.Err, JournalDir, journalFile)
}
func (e *CorruptError) Unwrap() error { return e.Err }
