package fscap

import (
	"context"
	"io/fs"
	"os"
	"strings"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// Journal records the files a guest changes under an fs.workspace grant,
// before each change: host.Journal, which the host passes through.
type Journal interface {
	Before(ctx context.Context, rel string) error
}

// ReadChecker is a Journal that also fences reads: host.ReadChecker.
type ReadChecker interface {
	CheckRead(ctx context.Context, rel string) error
}

// KindWorkspace is the grant kind a journal's refusals are reported
// under.
const KindWorkspace = "fs.workspace"

// journalKey is one file of one mount, journaled in the running call.
type journalKey struct {
	r   *rootFS
	rel string
}

// usage is the instance's count, or the mount's own in tests that mount
// a root alone.
func (r *rootFS) usage() *Usage {
	if r.c != nil {
		return r.c.FS()
	}
	return &r.own
}

// ctx is the running call's context, whose values say who calls.
func (r *rootFS) ctx() context.Context {
	if r.c != nil {
		return r.c.Context()
	}
	return context.Background()
}

// refuse reports a refused change of the workspace; the guest sees an
// errno and goes on.
func (r *rootFS) refuse(action, reason string) {
	if r.c != nil {
		r.c.Refused(KindWorkspace, action, reason)
	}
}

// workspaceName returns the guest path p (relative to the mount) as the
// journal names it: slash-separated, `.` and `..` resolved, "." for the
// mount's root. Under a journal no path goes through a symbolic link, so
// that a file has one name, the one journaled: a link on the way is
// refused (EPERM), and one at the end too when the operation would
// follow it; so is a `..` above the root, and a path into the journal's
// own directory, or a nested workspace's, at any depth (hidden, EACCES). A missing or non-directory component
// fails as the operation would. With no link on the way, `..` resolved
// by name is where the system goes.
func (r *rootFS) workspaceName(p string, follow bool) (string, experimentalsys.Errno) {
	comps := strings.Split(p, "/")
	last := -1
	for i, c := range comps {
		if c != "" && c != "." {
			last = i
		}
	}
	var parts []string
	for i, c := range comps {
		switch c {
		case "", ".":
			continue
		case "..":
			if len(parts) == 0 {
				r.refuse("access to "+p, "the path leaves the workspace")
				return "", experimentalsys.EPERM
			}
			parts = parts[:len(parts)-1]
			continue
		}
		parts = append(parts, c)
		if r.hidden != "" && isHidden(c, r.hidden) {
			r.refuse("access to "+p, r.hidden+" holds the workspace's journal, which no module reaches")
			return "", experimentalsys.EACCES
		}
		at := strings.Join(parts, "/")
		if i == last && !follow {
			break
		}
		fi, err := r.root.Lstat(at)
		switch {
		case i == last && err != nil:
			// A name to be made, or missing: the operation says which.
		case err != nil:
			return "", errno(err)
		case fi.Mode()&fs.ModeSymlink != 0:
			r.refuse("access to "+p, "the path goes through the symbolic link "+at+"; name the file where it is")
			return "", experimentalsys.EPERM
		case i != last && !fi.IsDir():
			return "", experimentalsys.ENOTDIR
		}
	}
	if len(parts) == 0 {
		return ".", 0
	}
	return strings.Join(parts, "/"), 0
}

// isHidden reports whether the path element c names the directory
// hidden: compared case-folded (one name on a file system that folds
// case), and without the trailing dots and spaces Windows drops.
func isHidden(c, hidden string) bool {
	return strings.EqualFold(strings.TrimRight(c, ". "), hidden)
}

// journalFile has the journal record the file at rel before the call's
// first change of it, once per file per call; a journal's error refuses
// the change (EACCES).
func (r *rootFS) journalFile(rel string) experimentalsys.Errno {
	if rel == "." {
		return experimentalsys.EISDIR
	}
	u := r.usage()
	k := journalKey{r, rel}
	if u.journaled[k] {
		return 0
	}
	if err := r.journal.Before(r.ctx(), rel); err != nil {
		r.refuse("change of "+rel, err.Error())
		return experimentalsys.EACCES
	}
	if u.journaled == nil {
		u.journaled = map[journalKey]bool{}
	}
	u.journaled[k] = true
	// The journal may have taken long: stop here if the call's time is up.
	r.checkStop()
	return 0
}

// hardLinked is why a file with other names is not changed.
const hardLinked = "the file has other names (hard links), whose changes the journal would not record; copy it to a file of its own"

// linked reports whether fi is a file with more than one name: a write to
// it changes every name, and the journal records one.
func linked(fi fs.FileInfo) bool {
	return !fi.IsDir() && sys.NewStat_t(fi).Nlink > 1
}

// journal journals an open file before its first change in a call after
// the one that opened it: an instance kept across calls keeps its files
// open, and each call's changes are that call's. The file must still be
// at the name it was journaled under; moved or replaced, it is refused
// (EACCES): its changes would go to a name no journal entry records.
func (f *rootFile) journal() experimentalsys.Errno {
	if f.rel == "" {
		return 0
	}
	u := f.fs.usage()
	if f.call == u.call {
		return 0
	}
	at, err := f.fs.root.Lstat(f.rel)
	fi, err2 := f.f.Stat()
	if err != nil || err2 != nil || !os.SameFile(at, fi) {
		f.fs.refuse("change of "+f.rel, "the file open since an earlier call is no longer at "+f.rel+"; open it again")
		return experimentalsys.EACCES
	}
	if e := f.fs.journalFile(f.rel); e != 0 {
		return e
	}
	f.call = u.call
	return 0
}

// journalOpen journals the file an open with flag names, an open that
// may change it (for writing, truncating, creating); name is the
// journal's. An open bound to fail (a file to make that exists, one to
// open that does not), a protected file, an executable one, or one with
// other names, is refused before the journal records a change that will
// not happen; the open file is checked again.
func (r *rootFS) journalOpen(name string, flag experimentalsys.Oflag) experimentalsys.Errno {
	fi, err := r.root.Lstat(name)
	switch {
	case r.protectedPath(name):
		return experimentalsys.EACCES
	case err != nil && flag&experimentalsys.O_CREAT == 0:
		return errno(err)
	case err != nil:
	case flag&experimentalsys.O_CREAT != 0 && flag&experimentalsys.O_EXCL != 0:
		return experimentalsys.EEXIST
	case fi.IsDir():
		return experimentalsys.EISDIR
	case executable(fi):
		return experimentalsys.EACCES
	case linked(fi):
		r.refuse("change of "+name, hardLinked)
		return experimentalsys.EACCES
	}
	return r.journalFile(name)
}

// checkRead asks a journal that fences reads whether the file at name
// (the journal's name) may be read, before an open that can read it; a
// directory (listed, not read) and a file not there yet pass. Its error
// refuses the open (EACCES).
func (r *rootFS) checkRead(name string) experimentalsys.Errno {
	rc, ok := r.journal.(ReadChecker)
	if !ok {
		return 0
	}
	if fi, err := r.root.Lstat(name); err != nil || fi.IsDir() {
		return 0
	}
	if err := rc.CheckRead(r.ctx(), name); err != nil {
		r.refuse("read of "+name, err.Error())
		return experimentalsys.EACCES
	}
	return 0
}
