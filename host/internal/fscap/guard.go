package fscap

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Guard keeps a guest away from host files inside its mounts whatever its
// grants: the files that govern a run (policy, agent file, checkpoint,
// sessions, trace) and the executable the host runs. A grant of a
// workspace that holds policy.json let the first-party write_file rewrite
// it (the red team of issue 38); comparing grant paths cannot refuse one
// file of a granted directory, nor a hard link to it, so the guard
// compares identities (device and inode): a protected file is refused by
// whatever name it is reached, before a rename and after one. A name not
// created yet (a database's -wal file) is refused by the directory it
// would be made in and its name.
//
// What the guard protects is read once per call, at its first check
// (Usage.Begin forgets it): a file replaced by rename between calls is
// protected under its new identity.
type Guard struct {
	paths []string
}

// NewGuard returns a guard of the files at paths (a relative path is
// taken from the working directory; links are followed when a check reads
// them), nil for none.
func NewGuard(paths []string) *Guard {
	var ps []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		ps = append(ps, filepath.Clean(p))
	}
	if len(ps) == 0 {
		return nil
	}
	return &Guard{paths: ps}
}

// protectedName is a protected file's name: its directory's identity and
// its base name.
type protectedName struct {
	dir  fs.FileInfo
	base string
	full string
}

// guarded is what a guard protects at one moment.
type guarded struct {
	files []fs.FileInfo
	names []protectedName
}

// read takes the identities of the guard's files and of their
// directories now.
func (g *Guard) read() *guarded {
	s := &guarded{}
	for _, p := range g.paths {
		if fi, err := os.Stat(p); err == nil {
			s.files = append(s.files, fi)
		}
		if di, err := os.Stat(filepath.Dir(p)); err == nil {
			s.names = append(s.names, protectedName{dir: di, base: filepath.Base(p), full: p})
		}
	}
	return s
}

// guarded returns what the mount's guard protects for the running call,
// nil without a guard.
func (r *rootFS) guarded() *guarded {
	if r.guard == nil {
		return nil
	}
	if r.c == nil {
		return r.guard.read()
	}
	u := r.c.FS()
	if u.guarded == nil {
		u.guarded = r.guard.read()
	}
	return u.guarded
}

// isProtected reports whether fi is a protected file.
func (s *guarded) isProtected(fi fs.FileInfo) bool {
	if s == nil || fi == nil {
		return false
	}
	for _, p := range s.files {
		if os.SameFile(p, fi) {
			return true
		}
	}
	return false
}

// protectedName reports whether name (relative to the root) is where a
// protected file is or would be: its directory is a protected file's
// directory, by identity, and its base name that file's.
func (r *rootFS) protectedName(s *guarded, name string) bool {
	if s == nil {
		return false
	}
	base := path.Base(name)
	var dir fs.FileInfo
	for _, n := range s.names {
		if n.base != base {
			continue
		}
		if dir == nil {
			di, err := r.root.Stat(path.Dir(name))
			if err != nil {
				return false
			}
			dir = di
		}
		if os.SameFile(dir, n.dir) {
			return true
		}
	}
	return false
}

// protectedPath reports whether name is a protected file, by its name or
// by the identity of what it names (the entry itself, or what a link
// there leads to).
func (r *rootFS) protectedPath(name string) bool {
	s := r.guarded()
	if s == nil {
		return false
	}
	if r.protectedName(s, name) {
		return true
	}
	if fi, err := r.root.Lstat(name); err == nil && s.isProtected(fi) {
		return true
	}
	fi, err := r.root.Stat(name)
	return err == nil && s.isProtected(fi)
}

// landedOnProtected reports whether the file f just made at name is, by
// now, at a protected file's place: the directories it was made in were
// renamed under the check (another instance of the module racing this
// one).
func (r *rootFS) landedOnProtected(name string, f *os.File) bool {
	s := r.guarded()
	if s == nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return true
	}
	base := path.Base(name)
	for _, n := range s.names {
		if n.base != base {
			continue
		}
		if pi, err := os.Stat(n.full); err == nil && os.SameFile(pi, fi) {
			return true
		}
	}
	return false
}

// holdsProtected reports whether the directory fi is a protected file's
// directory or one above it: moving it would move the file's name, and
// a file made later at the old name would take its place.
func (r *rootFS) holdsProtected(fi fs.FileInfo) bool {
	if r.guard == nil {
		return false
	}
	for _, p := range r.guard.paths {
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			if di, err := os.Stat(d); err == nil && os.SameFile(di, fi) {
				return true
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return false
}

// executable reports whether fi is a regular file with an execute bit.
func executable(fi fs.FileInfo) bool {
	return fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
