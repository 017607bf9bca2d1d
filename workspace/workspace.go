package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/autoagent-go/autoagent/trace"
)

// JournalDir is the directory, at the workspace's root, that holds its
// journal, before-images and lock. No path given to a workspace reaches
// it, by its name or through a link; a host mounting the workspace into a
// sandbox hides it the same way.
const JournalDir = ".autoagent-workspace"

const (
	journalFile = "journal.jsonl"
	lockFile    = "lock"
	blobDir     = "blobs"
	tmpDir      = "tmp"
)

// Defaults of [Options].
const (
	DefaultMaxFileBytes  = 16 << 20
	DefaultMaxTotalBytes = 1 << 30
)

// Options configure a workspace. The zero value allows every extension,
// files of up to 16 MiB and 1 GiB in all.
type Options struct {
	// ReadExt, when not nil, lists the extensions ("md" or ".md", any
	// case) of the files that may be read; WriteExt those that may be
	// written, appended to, renamed or deleted. Nil allows every one; an
	// empty, non-nil list allows none.
	ReadExt, WriteExt []string
	// MaxFileBytes bounds a file's size after a write; 0 is
	// DefaultMaxFileBytes, negative is no limit.
	MaxFileBytes int64
	// MaxTotalBytes bounds the size of all the workspace's files (the
	// journal aside) after a write; 0 is DefaultMaxTotalBytes, negative
	// is no limit. Files changed outside the workspace count from the
	// next Open.
	MaxTotalBytes int64
	// Sync makes every change durable before it returns, against a power
	// loss or a crash of the system: the images, the journal line that
	// begins the change and the new file are fsynced, in that order.
	// Without it a change is written in the same order but not synced,
	// which is enough when the process dies (a kill -9, a panic): the
	// kernel keeps what was written, so every file is before or after its
	// change and the journal agrees. A power loss may lose the last
	// seconds' changes and leave the journal behind the files. Sync adds
	// up to five fsyncs to a change, each about 1 ms on this project's
	// virtual disk (RATIONALE.md has the figures).
	Sync bool
	// Protected are files and directories never read, written or listed
	// through the workspace, whatever the allowlists say.
	Protected []Protected
	// Tracer, when set, receives an event per Evolve attempt.
	Tracer *trace.Tracer
	// Now is the clock of the journal's times; nil is time.Now.
	Now func() time.Time
}

// Workspace is a directory whose files are read and written through a
// fence and a journal. It is safe for concurrent use, and for use by
// several processes at once (the journal is locked around each change).
type Workspace struct {
	dir      string
	root     *os.Root
	readExt  []string
	writeExt []string
	maxFile  int64
	maxTotal int64
	sync     bool
	guards   []guard
	tracer   *trace.Tracer
	now      func() time.Time
	jdirs    []fs.FileInfo // the identities of the journal's directory, blobs and tmp

	mu      sync.Mutex // in-process; the file lock is across processes
	h       handles    // kept open from Open to Close
	journal *os.File
	known   map[string]struct{} // images known to be stored
	noSwap  bool                // the file system cannot exchange two files
	closed  bool
	state   journalState
	total   int64 // bytes of the workspace's files, as last counted
}

// Open opens the workspace rooted at dir, creating its journal directory
// when missing. A change that a crash (a kill -9, a power loss) left half
// done is undone: each of its files gets its before-image back.
func Open(dir string, opts Options) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w (create the directory first)", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace: %s is not a directory", abs)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	w := &Workspace{
		dir: abs, root: root,
		readExt: normExts(opts.ReadExt), writeExt: normExts(opts.WriteExt),
		maxFile: limit(opts.MaxFileBytes, DefaultMaxFileBytes), maxTotal: limit(opts.MaxTotalBytes, DefaultMaxTotalBytes),
		sync: opts.Sync, tracer: opts.Tracer, now: opts.Now, known: map[string]struct{}{},
	}
	if w.now == nil {
		w.now = time.Now
	}
	w.guards = guards(abs, opts.Protected)
	if err := w.openJournal(); err != nil {
		w.closeFiles()
		return nil, err
	}
	unlock, err := w.acquire()
	if err != nil {
		w.Close()
		return nil, err
	}
	unlock()
	return w, nil
}

func limit(v, def int64) int64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return -1
	}
	return v
}

// openJournal makes the journal directory (a real directory, never a
// link) and opens the journal, the lock and the kept handles in it.
func (w *Workspace) openJournal() error {
	if err := w.root.Mkdir(JournalDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("workspace: making %s: %w", JournalDir, err)
	}
	fi, err := w.root.Lstat(JournalDir)
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("workspace: %s is not a directory (a link or file stands in its place): remove it", filepath.Join(w.dir, JournalDir))
	}
	w.jdirs = []fs.FileInfo{fi}
	for _, d := range []string{blobDir, tmpDir} {
		if err := w.root.Mkdir(JournalDir+"/"+d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("workspace: %w", err)
		}
		fi, err := w.root.Lstat(JournalDir + "/" + d)
		if err != nil {
			return fmt.Errorf("workspace: %w", err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("workspace: %s is not a directory: remove it", filepath.Join(w.dir, JournalDir, d))
		}
		w.jdirs = append(w.jdirs, fi)
	}
	j, err := w.root.OpenFile(JournalDir+"/"+journalFile, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("workspace: opening the journal: %w", err)
	}
	w.journal = j
	return w.openHandles()
}

// Dir returns the workspace's absolute root directory.
func (w *Workspace) Dir() string { return w.dir }

// Close releases the workspace's files. The workspace is not usable
// afterwards.
func (w *Workspace) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return w.closeFiles()
}

func (w *Workspace) closeFiles() error {
	var errs []error
	if w.journal != nil {
		errs = append(errs, w.journal.Close())
	}
	errs = append(errs, w.closeHandles(), w.root.Close())
	return errors.Join(errs...)
}

// acquire takes the in-process mutex and the file lock, reads what other
// processes appended to the journal and undoes changes a crash left half
// done. The returned func releases both.
func (w *Workspace) acquire() (func(), error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil, ErrClosed
	}
	if err := w.lockJournal(); err != nil {
		w.mu.Unlock()
		return nil, fmt.Errorf("workspace: locking the journal: %w", err)
	}
	unlock := func() {
		w.unlockJournal()
		w.mu.Unlock()
	}
	first := w.state.off == 0
	foreign, err := w.catchUp()
	if err == nil && len(w.state.pending) > 0 {
		err = w.recover()
	}
	if err == nil && (first || foreign) {
		w.total, err = w.count()
	}
	if err == nil && first {
		w.cleanTmp()
	}
	if err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// cleanTmp removes the temporary files a crash left: every one is made
// and renamed under the lock, so none is in use while it is held.
func (w *Workspace) cleanTmp() {
	des, err := fs.ReadDir(w.root.FS(), JournalDir+"/"+tmpDir)
	if err != nil {
		return
	}
	for _, d := range des {
		w.root.Remove(JournalDir + "/" + tmpDir + "/" + d.Name())
	}
}

// count adds up the sizes of the workspace's regular files.
func (w *Workspace) count() (int64, error) {
	var n int64
	err := fs.WalkDir(w.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p == JournalDir {
			return fs.SkipDir
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n, err
}

// reasonKey carries a change's reason in a context.
type reasonKey struct{}

// WithReason returns ctx carrying the reason the workspace records with
// the changes made under it.
func WithReason(ctx context.Context, reason string) context.Context {
	return context.WithValue(ctx, reasonKey{}, reason)
}

func reasonFrom(ctx context.Context) string {
	r, _ := ctx.Value(reasonKey{}).(string)
	return r
}
