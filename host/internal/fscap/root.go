package fscap

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
)

// Call is what the file system needs of the instance that mounts it:
// the call in progress, to end it, and the instance's count of what it
// uses.
type Call interface {
	hostcall.Call
	// FS returns the instance's use of its mounts.
	FS() *Usage
	// Refused records a refusal the guest is told of by an errno, after
	// which the call goes on (a journal refusing a change): the call's
	// record lists it with the refusals that end a call.
	Refused(kind, action, reason string)
}

// Usage is what an instance uses of its mounts: the files it holds open
// (across calls, for a reused instance) and the bytes the running call
// wrote.
type Usage struct {
	// Open counts the instance's open files; the host reads it to bound
	// what idle instances hold.
	Open atomic.Int64
	// Written counts the bytes the call wrote; Begin clears it.
	Written int64
	// Lookups counts the paths the guest looked up under its mounts, and
	// the directories it listed: the host's snapshot of a module's
	// initialised state is refused when they read the file system (the
	// snapshot would keep what they read then).
	Lookups atomic.Int64
	// guarded is what the mounts' guard protects, read at the call's
	// first check; Begin forgets it.
	guarded *guarded
	// call counts the calls begun, and journaled holds the files the
	// running call's journals recorded (fs.workspace): each file once per
	// call. Begin forgets them.
	call      uint64
	journaled map[journalKey]bool
}

// Begin starts a call's count: nothing written yet, the guard's files
// read again at the first check, no file journaled yet.
func (u *Usage) Begin() {
	u.Written = 0
	u.guarded = nil
	u.call++
	clear(u.journaled)
}

// rootFS is a preopened directory backed by os.Root, so `..` and symlinks
// cannot leave it: the kernel resolves every path component under the
// root (openat without following links out). wazero's own DirFS joins
// paths and follows symlinks wherever they point, which would let a
// symlink inside a granted directory reach the whole disk.
//
// Each instance mounts its own rootFS values, which count what it uses
// against its limits: the files it holds open (Limits.OpenFiles) and the
// bytes a call writes (Limits.FSWrite: data written plus createCost for
// each file, directory or link made). Past either the call ends with the
// limit's error.
type rootFS struct {
	experimentalsys.UnimplementedFS
	root     *os.Root
	readOnly bool
	guard    *Guard
	// journal, for an fs.workspace grant, records each file before the
	// call's first change of it (see journal.go).
	journal Journal
	// hidden, under a journal, is the journal's directory name, which
	// the guest reaches at no depth by any spelling.
	hidden string
	c      Call  // nil in tests that mount a root alone
	own    Usage // the count when c is nil
}

// Mount is one fs grant's directory.
type Mount struct {
	Root     *os.Root
	Path     string // the host path, where the guest sees it too
	ReadOnly bool   // an fs.read grant
	// Guard, when set, refuses the host's own files inside the mount.
	Guard *Guard
	// Journal, when set (an fs.workspace grant), records each file the
	// guest changes before the call's first change of it.
	Journal Journal
	// Hidden, with a Journal, names the directory where a workspace's
	// journal keeps its own files: no path reaches one, at the root or
	// below (a nested workspace's).
	Hidden string
}

// Config mounts the grants' directories for one instance, which c is.
func Config(mounts []Mount, c Call) wazero.FSConfig {
	cfg := wazero.NewFSConfig()
	for _, m := range mounts {
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(&rootFS{root: m.Root, readOnly: m.ReadOnly, guard: m.Guard, journal: m.Journal, hidden: m.Hidden, c: c}, m.Path)
	}
	return cfg
}

// createCost is what making a file, directory or link counts against
// the write limit: about a block and an inode, so a call that makes
// empty files without end stops too.
const createCost = 4 << 10

// charge counts n bytes about to be written against the call's write
// limit and ends the call past it.
func (r *rootFS) charge(n int64) {
	if r.c == nil || n <= 0 {
		return
	}
	u := r.c.FS()
	u.Written += n
	if u.Written > r.c.Limits().FSWrite {
		r.c.Exceed(hostcall.LimitFSWrite)
	}
}

// checkStop ends the call here once its time is up or the host is
// closing.
func (r *rootFS) checkStop() {
	if r.c != nil {
		r.c.CheckStop()
	}
}

// opened counts a file the guest is opening and ends the call past the
// open file limit. (WASI has EMFILE but wazero's errors do not, and a
// guest told EACCES would look for the wrong cause.)
func (r *rootFS) opened() {
	if r.c == nil {
		return
	}
	u := r.c.FS()
	if u.Open.Add(1) > int64(r.c.Limits().OpenFiles) {
		u.Open.Add(-1)
		r.c.Exceed(hostcall.LimitOpenFiles)
	}
}

// lookedUp counts a path looked up or a directory listed (Usage.Lookups).
func (r *rootFS) lookedUp() {
	if r.c != nil {
		r.c.FS().Lookups.Add(1)
	}
}

func (r *rootFS) closed() {
	if r.c != nil {
		r.c.FS().Open.Add(-1)
	}
}

// path turns a guest path relative to the mount into a name for os.Root:
// rel's, or under a journal workspaceName's (follow: the operation
// follows a symbolic link at the end).
func (r *rootFS) path(p string, follow bool) (string, experimentalsys.Errno) {
	r.lookedUp()
	if r.journal == nil {
		return rel(p), 0
	}
	return r.workspaceName(p, follow)
}

// rel turns a guest path relative to the mount into a name for os.Root.
func rel(p string) string {
	p = strings.TrimLeft(p, "/")
	if p == "" {
		return "."
	}
	return p
}

// MaxPath bounds a path the guest passes, as PATH_MAX does the system's.
// os.Root resolves a path one component at a time, in Go, outside every
// deadline, so one path_open of a path of 60 MiB would take seconds; the
// system refuses such paths anyway.
const MaxPath = 4096

// tooLong reports whether any of the guest's paths passes MaxPath.
func tooLong(paths ...string) bool {
	for _, p := range paths {
		if len(p) > MaxPath {
			return true
		}
	}
	return false
}

// errno maps an os error to WASI's, treating a path that escapes the root
// (os.Root's non-errno error) as a permission error.
func errno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	var se syscall.Errno
	switch {
	case errors.As(err, &se),
		errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrExist),
		errors.Is(err, fs.ErrPermission), errors.Is(err, fs.ErrClosed), errors.Is(err, fs.ErrInvalid):
		return experimentalsys.UnwrapOSError(err)
	}
	return experimentalsys.EPERM
}

const writeFlags = experimentalsys.O_RDWR | experimentalsys.O_WRONLY | experimentalsys.O_CREAT |
	experimentalsys.O_TRUNC | experimentalsys.O_APPEND | experimentalsys.O_EXCL

func (r *rootFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if tooLong(p) {
		return nil, experimentalsys.ENAMETOOLONG
	}
	if r.readOnly && flag&writeFlags != 0 {
		return nil, experimentalsys.EROFS
	}
	name, e := r.path(p, true)
	if e != 0 {
		return nil, e
	}
	r.opened()
	rf, e := r.openFile(name, flag, perm)
	if e != 0 {
		r.closed()
		return nil, e
	}
	return rf, 0
}

func (r *rootFS) openFile(name string, flag experimentalsys.Oflag, perm fs.FileMode) (*rootFile, experimentalsys.Errno) {
	if flag&experimentalsys.O_NOFOLLOW != 0 {
		if fi, err := r.root.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, experimentalsys.ELOOP
		}
	}
	var of int
	switch flag & (experimentalsys.O_RDWR | experimentalsys.O_WRONLY) {
	case experimentalsys.O_RDWR:
		of = os.O_RDWR
	case experimentalsys.O_WRONLY:
		of = os.O_WRONLY
	default:
		of = os.O_RDONLY
	}
	for _, m := range []struct {
		w experimentalsys.Oflag
		o int
	}{{experimentalsys.O_APPEND, os.O_APPEND}, {experimentalsys.O_CREAT, os.O_CREATE},
		{experimentalsys.O_EXCL, os.O_EXCL}} {
		// O_SYNC is not passed on: a synchronous write per iovec would let
		// one call take minutes while writing little. O_TRUNC is applied
		// after the checks below, to the file they passed.
		if flag&m.w != 0 {
			of |= m.o
		}
	}
	write := of&(os.O_WRONLY|os.O_RDWR) != 0
	guarded := r.guarded()
	created := false
	if of&os.O_CREATE != 0 {
		if _, err := r.root.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			created = true
			r.charge(createCost)
		}
		if r.protectedName(guarded, name) {
			return nil, experimentalsys.EACCES
		}
		// No guest makes a file the host, or anyone, could execute.
		perm &^= 0o111
	}
	if of&os.O_WRONLY == 0 {
		if e := r.checkRead(name); e != 0 {
			return nil, e
		}
	}
	jrel := ""
	if r.journal != nil && flag&writeFlags != 0 {
		if e := r.journalOpen(name, flag); e != 0 {
			return nil, e
		}
		jrel = name
	}
	// Never block in open: a FIFO nobody writes to would hold the call
	// (and an OS thread) past every deadline. Only regular files and
	// directories are opened at all.
	f, err := r.root.OpenFile(name, of|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, errno(err)
	}
	fi, e := onlyRegularOrDir(f)
	if e == 0 {
		e = r.checkOpened(guarded, name, f, fi, write, created)
	}
	if e == 0 && jrel != "" && linked(fi) {
		r.refuse("change of "+jrel, hardLinked)
		e = experimentalsys.EACCES
	}
	if e == 0 && write && flag&experimentalsys.O_TRUNC != 0 {
		e = errno(f.Truncate(0))
	}
	if e != 0 {
		_ = f.Close()
		return nil, e
	}
	rf, e := newRootFile(r, name, f, of)
	if e != 0 {
		return nil, e
	}
	if write && jrel != "" {
		rf.rel, rf.call = jrel, r.usage().call
	}
	if flag&experimentalsys.O_DIRECTORY != 0 {
		if dir, e := rf.IsDir(); e != 0 || !dir {
			_ = rf.File.Close() // OpenFile gives its place back
			if e == 0 {
				e = experimentalsys.ENOTDIR
			}
			return nil, e
		}
	}
	return rf, 0
}

// checkOpened refuses a file just opened that is a protected file (by
// identity, whatever name reached it, or made where one is), and a write
// to a file with an execute bit: no guest changes what the host, or
// anyone, may run. The checks read the open file, so no rename between
// them and the open changes what they saw.
func (r *rootFS) checkOpened(guarded *guarded, name string, f *os.File, fi fs.FileInfo, write, created bool) experimentalsys.Errno {
	if guarded.isProtected(fi) || created && r.landedOnProtected(name, f) {
		if created {
			_ = r.root.Remove(name)
		}
		return experimentalsys.EACCES
	}
	if write && executable(fi) {
		return experimentalsys.EACCES
	}
	return 0
}

func (r *rootFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if tooLong(p) {
		return sys.Stat_t{}, experimentalsys.ENAMETOOLONG
	}
	name, e := r.path(p, false)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	fi, err := r.root.Lstat(name)
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	if r.guarded().isProtected(fi) {
		return sys.Stat_t{}, experimentalsys.EACCES
	}
	return sys.NewStat_t(fi), 0
}

func (r *rootFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if tooLong(p) {
		return sys.Stat_t{}, experimentalsys.ENAMETOOLONG
	}
	name, e := r.path(p, true)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	fi, err := r.root.Stat(name)
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	if r.guarded().isProtected(fi) {
		return sys.Stat_t{}, experimentalsys.EACCES
	}
	return sys.NewStat_t(fi), 0
}

func (r *rootFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	if tooLong(p) {
		return experimentalsys.ENAMETOOLONG
	}
	if r.readOnly {
		return experimentalsys.EROFS
	}
	name, e := r.path(p, false)
	if e != 0 {
		return e
	}
	if r.protectedName(r.guarded(), name) {
		return experimentalsys.EACCES
	}
	r.charge(createCost)
	return errno(r.root.Mkdir(name, perm))
}

// Chmod never sets an execute bit on anything but a directory (which
// needs one to be entered), and never changes a protected file. It acts
// on the file it opened and checked, so a name swapped under it changes
// nothing.
func (r *rootFS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	if tooLong(p) {
		return experimentalsys.ENAMETOOLONG
	}
	if r.readOnly {
		return experimentalsys.EROFS
	}
	name, e := r.path(p, true)
	if e != 0 {
		return e
	}
	if r.protectedPath(name) {
		return experimentalsys.EPERM
	}
	f, err := r.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if perm&0o111 != 0 {
			return experimentalsys.EPERM // cannot tell it is a directory
		}
		return errno(r.root.Chmod(name, perm))
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return errno(err)
	case r.guarded().isProtected(fi):
		return experimentalsys.EPERM
	case perm&0o111 != 0 && !fi.IsDir():
		return experimentalsys.EPERM
	}
	return errno(f.Chmod(perm))
}

// Rename refuses to move a symbolic link, or a directory holding one: a
// relative link's target depends on where the link is, so moving it could
// leave a link inside the directory that resolves outside it.
func (r *rootFS) Rename(fromPath, toPath string) experimentalsys.Errno {
	if tooLong(fromPath, toPath) {
		return experimentalsys.ENAMETOOLONG
	}
	if r.readOnly {
		return experimentalsys.EROFS
	}
	from, e := r.path(fromPath, false)
	if e != 0 {
		return e
	}
	to, e := r.path(toPath, false)
	if e != 0 {
		return e
	}
	fi, err := r.root.Lstat(from)
	if err != nil {
		return errno(err)
	}
	// A protected file is neither moved nor replaced, and neither is a
	// directory holding one: the file's name would move, and a file made
	// at the old name would take its place.
	if r.protectedPath(from) || r.protectedPath(to) {
		return experimentalsys.EPERM
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return experimentalsys.EPERM
	case fi.IsDir():
		if !r.noLinksBelow(from) || r.holdsProtected(fi) {
			return experimentalsys.EPERM
		}
	}
	ti, err := r.root.Lstat(to)
	if err == nil && ti.IsDir() && r.holdsProtected(ti) {
		return experimentalsys.EPERM
	}
	if r.journal != nil {
		switch {
		case fi.IsDir():
			r.refuse("rename of the directory "+from, "it would move every file in it, which the journal records one by one; move its files")
			return experimentalsys.EPERM
		case err == nil && ti.IsDir():
			return experimentalsys.EISDIR
		}
		if e := r.journalFile(from); e != 0 {
			return e
		}
		if e := r.journalFile(to); e != 0 {
			return e
		}
	}
	return errno(r.root.Rename(from, to))
}

// maxRenameScan bounds the entries noLinksBelow looks at.
const maxRenameScan = 10000

// noLinksBelow reports whether the directory holds no symbolic link at any
// depth (and at most maxRenameScan entries, beyond which it says no).
func (r *rootFS) noLinksBelow(dir string) bool {
	seen := 0
	var walk func(string) bool
	walk = func(d string) bool {
		f, err := r.root.OpenFile(d, os.O_RDONLY|openDirFlags, 0)
		if err != nil {
			return false
		}
		ents, err := f.ReadDir(maxRenameScan - seen + 1)
		_ = f.Close()
		if err != nil && len(ents) == 0 && !errors.Is(err, io.EOF) {
			return false
		}
		for _, e := range ents {
			if seen++; seen > maxRenameScan {
				return false
			}
			switch t := e.Type(); {
			case t&fs.ModeSymlink != 0:
				return false
			case t.IsDir():
				if !walk(path.Join(d, e.Name())) {
					return false
				}
			}
		}
		return true
	}
	return walk(dir)
}

func (r *rootFS) Rmdir(p string) experimentalsys.Errno {
	if tooLong(p) {
		return experimentalsys.ENAMETOOLONG
	}
	if r.readOnly {
		return experimentalsys.EROFS
	}
	name, e := r.path(p, false)
	if e != 0 {
		return e
	}
	fi, err := r.root.Lstat(name)
	if err != nil {
		return errno(err)
	}
	if !fi.IsDir() {
		return experimentalsys.ENOTDIR
	}
	return errno(r.root.Remove(name))
}

func (r *rootFS) Unlink(p string) experimentalsys.Errno {
	if tooLong(p) {
		return experimentalsys.ENAMETOOLONG
	}
	if r.readOnly {
		return experimentalsys.EROFS
	}
	name, e := r.path(p, false)
	if e != 0 {
		return e
	}
	fi, err := r.root.Lstat(name)
	if err != nil {
		return errno(err)
	}
	if fi.IsDir() {
		return experimentalsys.EISDIR
	}
	if r.protectedPath(name) {
		return experimentalsys.EPERM
	}
	if r.journal != nil {
		if e := r.journalFile(name); e != 0 {
			return e
		}
	}
	return errno(r.root.Remove(name))
}

// Link makes hard links to regular files only: a hard link to a symbolic
// link is a copy of the link elsewhere, where its target may resolve
// outside the directory.
func (r *rootFS) Link(oldPath, newPath string) experimentalsys.Errno {
	if tooLong(oldPath, newPath) {
		return experimentalsys.ENAMETOOLONG
	}
	if r.readOnly {
		return experimentalsys.EROFS
	}
	if r.journal != nil {
		r.refuse("hard link "+rel(newPath), "a file with two names changes under both, and the journal records one; copy the file")
		return experimentalsys.EPERM
	}
	fi, err := r.root.Lstat(rel(oldPath))
	if err != nil {
		return errno(err)
	}
	if !fi.Mode().IsRegular() || r.protectedPath(rel(oldPath)) || r.protectedName(r.guarded(), rel(newPath)) {
		return experimentalsys.EPERM
	}
	r.charge(createCost)
	return errno(r.root.Link(rel(oldPath), rel(newPath)))
}

// Symlink refuses every symbolic link. os.Root would refuse to follow one
// that leaves the directory, but another program reading the directory
// later would not, and whether a relative link stays inside depends on
// where it ends up (renames through a `d -> .` link, a link's parent
// moved): no lexical check of the target can hold. A guest needs no
// links to read and write files.
func (r *rootFS) Symlink(target, link string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return experimentalsys.EPERM
}

func (r *rootFS) Readlink(p string) (string, experimentalsys.Errno) {
	if tooLong(p) {
		return "", experimentalsys.ENAMETOOLONG
	}
	name, e := r.path(p, false)
	if e != 0 {
		return "", e
	}
	s, err := r.root.Readlink(name)
	if err != nil {
		return "", errno(err)
	}
	return s, 0
}

func (r *rootFS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	if tooLong(p) {
		return experimentalsys.ENAMETOOLONG
	}
	if r.readOnly {
		return experimentalsys.EROFS
	}
	name, e := r.path(p, true)
	if e != 0 {
		return e
	}
	if r.protectedPath(name) {
		return experimentalsys.EPERM
	}
	return errno(r.root.Chtimes(name, utime(atim), utime(mtim)))
}

// utime converts a WASI timestamp; UTIME_OMIT becomes the zero time, which
// Chtimes leaves unchanged.
func utime(ns int64) time.Time {
	if ns == experimentalsys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// rootFile is a file opened under a rootFS. Reading, seeking and listing
// come from wazero's adapter over the *os.File (so directory rewinds reopen
// through the root too); rootFile adds what the adapter lacks for a
// writable file.
type rootFile struct {
	experimentalsys.File
	fs     *rootFS
	name   string
	f      *os.File
	flag   int
	closed bool
	// rel is the file's name in its workspace when it was opened for
	// writing under a journal, call the call that journaled it last.
	rel  string
	call uint64
}

// Close closes the file once, giving its place back to the open file
// limit.
func (f *rootFile) Close() experimentalsys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	f.fs.closed()
	return f.File.Close()
}

// newRootFile wraps f, already opened under the root with the guest's
// flags.
func newRootFile(r *rootFS, name string, f *os.File, flag int) (*rootFile, experimentalsys.Errno) {
	adapted, e := (&sysfs.AdaptFS{FS: &openedFS{r: r, first: f}}).OpenFile(name, experimentalsys.O_RDONLY, 0)
	if e != 0 {
		_ = f.Close()
		return nil, e
	}
	return &rootFile{File: adapted, fs: r, name: name, f: f, flag: flag}, 0
}

// openedFS hands wazero's adapter the file the root already opened, and
// reopens through the root afterwards (a directory rewind).
type openedFS struct {
	r     *rootFS
	first *os.File
}

func (o *openedFS) Open(name string) (fs.File, error) {
	if f := o.first; f != nil {
		o.first = nil
		return f, nil
	}
	// A reopen, by name: what is there now may have been swapped for a
	// FIFO since the first open.
	f, err := o.r.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, e := onlyRegularOrDir(f); e != 0 || o.r.guarded().isProtected(fi) {
		_ = f.Close()
		return nil, fs.ErrPermission
	}
	return f, nil
}

// onlyRegularOrDir refuses an open file that is neither a regular file
// nor a directory (a FIFO, a device, a socket), and returns what it is.
func onlyRegularOrDir(f *os.File) (fs.FileInfo, experimentalsys.Errno) {
	fi, err := f.Stat()
	if err != nil {
		return nil, errno(err)
	}
	if m := fi.Mode(); !m.IsRegular() && !m.IsDir() {
		return nil, experimentalsys.EACCES
	}
	return fi, 0
}

// MaxReaddir bounds the entries one Readdir reads. wazero asks for as many
// as the guest's buffer could hold (a buffer of 48 MiB: two million) and
// keeps them per open directory, outside the memory limit: one fd_readdir
// of a directory of 200 000 files took 0.9 s and kept 15 MB, and 250 open
// directories 769 MB (found by attacking our own sandbox). Toolchains read
// directories a few hundred entries at a time (a 4-8 KiB buffer), so they
// never meet the bound; a guest asking for more in one call is given 1 024
// and sees the listing end there.
const MaxReaddir = 1024

// Readdir reads at most MaxReaddir entries, after checking the deadline.
func (f *rootFile) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	f.fs.checkStop()
	f.fs.lookedUp()
	return f.File.Readdir(min(n, MaxReaddir))
}

func (f *rootFile) IsAppend() bool { return f.flag&os.O_APPEND != 0 }

func (f *rootFile) SetAppend(enable bool) experimentalsys.Errno {
	if enable == f.IsAppend() {
		return 0
	}
	return experimentalsys.ENOSYS
}

// Read and Pread check the call's deadline before every read, as Write
// and Pwrite do before every write: one fd_read or fd_pread is a list of
// up to maxWASIList iovecs, each as long as the guest's memory (and all
// of them the same memory), read one system call each in wazero's Go
// code, where no fuel check runs. 1 024 reads of 60 MiB are seconds; the
// check at the WASI call's start alone let the call run that long past
// its limit.
func (f *rootFile) Read(buf []byte) (int, experimentalsys.Errno) {
	f.fs.checkStop()
	return f.File.Read(buf)
}

func (f *rootFile) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	f.fs.checkStop()
	return f.File.Pread(buf, off)
}

func (f *rootFile) Write(buf []byte) (int, experimentalsys.Errno) {
	f.fs.checkStop()
	if f.fs.readOnly {
		return 0, experimentalsys.EBADF
	}
	if e := f.journal(); e != 0 {
		return 0, e
	}
	off := int64(-1) // at the end, appending
	if !f.IsAppend() {
		off, _ = f.f.Seek(0, io.SeekCurrent)
	}
	f.chargeWrite(off, len(buf))
	n, err := f.f.Write(buf)
	return n, errno(err)
}

func (f *rootFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	f.fs.checkStop()
	if f.fs.readOnly {
		return 0, experimentalsys.EBADF
	}
	if e := f.journal(); e != 0 {
		return 0, e
	}
	f.chargeWrite(off, len(buf))
	n, err := f.f.WriteAt(buf, off)
	return n, errno(err)
}

// chargeWrite counts a write of n bytes at off (-1: at the end) against
// the call's write limit, with the hole it leaves past the file's end: a
// one-byte write at 2^40 makes a file of a terabyte, which whoever copies
// it later stores in full.
func (f *rootFile) chargeWrite(off int64, n int) {
	hole := int64(0)
	if off > 0 {
		if fi, err := f.f.Stat(); err == nil && off > fi.Size() {
			hole = off - fi.Size()
		}
	}
	f.fs.charge(int64(n) + hole)
}

func (f *rootFile) Truncate(size int64) experimentalsys.Errno {
	if f.fs.readOnly {
		return experimentalsys.EBADF
	}
	if e := f.journal(); e != 0 {
		return e
	}
	// Growing a file counts what it grows by: most file systems store the
	// hole sparsely, but whoever copies the file later does not.
	if fi, err := f.f.Stat(); err == nil && size > fi.Size() {
		f.fs.charge(size - fi.Size())
	}
	return errno(f.f.Truncate(size))
}

func (f *rootFile) Sync() experimentalsys.Errno     { return errno(f.f.Sync()) }
func (f *rootFile) Datasync() experimentalsys.Errno { return errno(f.f.Sync()) }

func (f *rootFile) Utimens(atim, mtim int64) experimentalsys.Errno {
	if f.fs.readOnly {
		return experimentalsys.EROFS
	}
	if f.fs.protectedPath(f.name) {
		return experimentalsys.EPERM
	}
	return errno(f.fs.root.Chtimes(f.name, utime(atim), utime(mtim)))
}
