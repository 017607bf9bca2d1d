//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// handles are the directories and the lock file a workspace keeps open
// from Open to Close, so a change costs no path walk in the journal's
// directory. Only the root and the journal's own directories are kept:
// a directory of the workspace is opened through the os.Root for each
// change, as a kept one could be moved out from under it.
type handles struct {
	rootDir *os.File // the workspace's root, opened through the os.Root
	tmp     *os.File // JournalDir/tmp
	blobs   *os.File // JournalDir/blobs
	lock    *os.File // JournalDir/lock, flocked around each change
	rootFD  int
	tmpFD   int
	blobsFD int
	lockFD  int
}

// openHandles opens the kept handles. The journal directory's identity
// was checked by the caller; tmp and blobs must be directories in it.
func (w *Workspace) openHandles() error {
	var err error
	open := func(name string, flag int) (*os.File, int) {
		if err != nil {
			return nil, -1
		}
		var f *os.File
		f, err = w.root.OpenFile(name, flag, 0o600)
		if err != nil {
			err = fmt.Errorf("workspace: %w", err)
			return nil, -1
		}
		return f, int(f.Fd())
	}
	h := &w.h
	h.rootDir, h.rootFD = open(".", os.O_RDONLY)
	h.tmp, h.tmpFD = open(JournalDir+"/"+tmpDir, os.O_RDONLY)
	h.blobs, h.blobsFD = open(JournalDir+"/"+blobDir, os.O_RDONLY)
	h.lock, h.lockFD = open(JournalDir+"/"+lockFile, os.O_RDONLY|os.O_CREATE)
	if err != nil {
		return err
	}
	// They must be the directories the caller looked at, not links put
	// in their place since.
	for f, want := range map[*os.File]fs.FileInfo{h.blobs: w.jdirs[1], h.tmp: w.jdirs[2]} {
		fi, err := f.Stat()
		if err != nil {
			return fmt.Errorf("workspace: %w", err)
		}
		if !os.SameFile(fi, want) {
			return fmt.Errorf("workspace: %s changed while the workspace was opened: open it again", f.Name())
		}
	}
	return nil
}

func (w *Workspace) closeHandles() error {
	var errs []error
	for _, f := range []*os.File{w.h.rootDir, w.h.tmp, w.h.blobs, w.h.lock} {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	return errors.Join(errs...)
}

// lockJournal takes the lock that orders the processes sharing the
// workspace; unlockJournal releases it.
func (w *Workspace) lockJournal() error {
	for {
		err := unix.Flock(w.h.lockFD, unix.LOCK_EX)
		if err != unix.EINTR {
			return err
		}
	}
}

func (w *Workspace) unlockJournal() { unix.Flock(w.h.lockFD, unix.LOCK_UN) }

// createTemp writes data to a new file in the journal's tmp directory,
// synced when the workspace syncs, and returns its name there.
func (w *Workspace) createTemp(data []byte) (string, error) {
	name := tempName()
	return name, w.createTempAs(name, data)
}

// createTempAs is createTemp under the given name. A file left there by
// a crash is replaced: every temporary file is made and moved under the
// lock.
func (w *Workspace) createTempAs(name string, data []byte) error {
	const flag = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(w.h.tmpFD, name, flag, 0o644)
	if errors.Is(err, unix.EEXIST) {
		w.removeTemp(name)
		fd, err = unix.Openat(w.h.tmpFD, name, flag, 0o644)
	}
	if err != nil {
		return fmt.Errorf("workspace: making a temporary file: %w", err)
	}
	for b := data; len(b) > 0; {
		var n int
		if n, err = unix.Write(fd, b); err == unix.EINTR {
			continue
		} else if err != nil {
			break
		}
		b = b[n:]
	}
	if err == nil && w.sync {
		syncs.Add(1)
		err = unix.Fsync(fd)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		w.removeTemp(name)
		return fmt.Errorf("workspace: writing a temporary file: %w", err)
	}
	return nil
}

func (w *Workspace) removeTemp(name string) { unix.Unlinkat(w.h.tmpFD, name, 0) }

// placeTemp renames the temporary file tmp over the workspace's file at
// the clean path c, whose directory exists.
func (w *Workspace) placeTemp(tmp, c string) error {
	return w.inParent(c, func(dirFD int, base string) error {
		return unix.Renameat(w.h.tmpFD, tmp, dirFD, base)
	})
}

// swapTemp exchanges the temporary file tmp and the workspace's file at
// the clean path c in one step: c holds what tmp held, and tmp what c
// held. It returns errNoSwap where that cannot be done.
func (w *Workspace) swapTemp(tmp, c string) error {
	if swapHook != nil && swapHook() {
		return errNoSwap
	}
	return w.inParent(c, func(dirFD int, base string) error {
		return exchangeAt(w.h.tmpFD, tmp, dirFD, base)
	})
}

// inParent calls f with the directory of the clean path c and c's last
// element. The directory is reached through the os.Root (no link leads
// out of it), then checked again by identity: it must not be the
// journal's.
func (w *Workspace) inParent(c string, f func(dirFD int, base string) error) error {
	d, base := dirOf(c), c
	dirFD := w.h.rootFD
	if d != "." {
		base = c[len(d)+1:]
		dir, err := w.root.Open(d)
		if err != nil {
			return w.pathErr(d, err)
		}
		defer dir.Close()
		fi, err := dir.Stat()
		if err != nil {
			return err
		}
		if err := w.checkDirIdentity(d, fi); err != nil {
			return err
		}
		dirFD = int(dir.Fd())
	}
	if err := f(dirFD, base); err != nil {
		return w.pathErr(c, &fs.PathError{Op: "rename", Path: c, Err: err})
	}
	return nil
}

// tempIsFile reports whether the temporary file name is a regular file
// of the given size with one link.
func (w *Workspace) tempIsFile(name string, size int64) bool {
	var st unix.Stat_t
	err := unix.Fstatat(w.h.tmpFD, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size == size && st.Nlink == 1
}

// blobPresent reports whether the image h is in the store.
func (w *Workspace) blobPresent(h string) (bool, error) {
	var st unix.Stat_t
	err := unix.Fstatat(w.h.blobsFD, h[:2]+"/"+h, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.ENOENT):
		return false, nil
	}
	return false, fmt.Errorf("workspace: looking up an image: %w", err)
}

// placeBlob renames the temporary file tmp into the store as image h,
// making its directory, and syncs what it changed when the workspace
// syncs.
func (w *Workspace) placeBlob(tmp, h string) error {
	sub := h[:2]
	made := false
	err := unix.Renameat(w.h.tmpFD, tmp, w.h.blobsFD, sub+"/"+h)
	if errors.Is(err, unix.ENOENT) {
		if err = unix.Mkdirat(w.h.blobsFD, sub, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
			made = err == nil
			err = unix.Renameat(w.h.tmpFD, tmp, w.h.blobsFD, sub+"/"+h)
		}
	}
	if err != nil {
		return fmt.Errorf("workspace: storing an image: %w", err)
	}
	if !w.sync {
		return nil
	}
	if made {
		if err := fsyncDir(w.h.blobs); err != nil {
			return err
		}
	}
	fd, err := unix.Openat(w.h.blobsFD, sub, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("workspace: syncing an image's directory: %w", err)
	}
	defer unix.Close(fd)
	syncs.Add(1)
	if err := unix.Fsync(fd); err != nil && err != unix.EINVAL {
		return fmt.Errorf("workspace: syncing an image's directory: %w", err)
	}
	return nil
}

func fsyncDir(f *os.File) error {
	syncs.Add(1)
	if err := f.Sync(); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("workspace: syncing %s: %w", f.Name(), err)
	}
	return nil
}
