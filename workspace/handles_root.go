//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
)

// handles, on a platform without the *at system calls, is the journal's
// lock; the journal's directories are reached through the os.Root.
type handles struct {
	lock *flock.Flock
}

func (w *Workspace) openHandles() error {
	w.h.lock = flock.New(filepath.Join(w.dir, JournalDir, lockFile))
	return nil
}

func (w *Workspace) closeHandles() error {
	if w.h.lock == nil {
		return nil
	}
	return w.h.lock.Close()
}

func (w *Workspace) lockJournal() error { return w.h.lock.Lock() }

func (w *Workspace) unlockJournal() { w.h.lock.Unlock() }

const tmpPath = JournalDir + "/" + tmpDir + "/"

// canSwap: two names are not exchanged at once here.
const canSwap = false

func (w *Workspace) swapTemp(string, string) error { return errNoSwap }

func (w *Workspace) tempIsFile(string, int64) bool { return false }

func (w *Workspace) createTemp(data []byte) (string, error) {
	name := tempName()
	return name, w.createTempAs(name, data)
}

func (w *Workspace) createTempAs(name string, data []byte) error {
	w.root.Remove(tmpPath + name)
	f, err := w.root.OpenFile(tmpPath+name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("workspace: making a temporary file: %w", err)
	}
	_, err = f.Write(data)
	if err == nil && w.sync {
		syncs.Add(1)
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		w.removeTemp(name)
		return fmt.Errorf("workspace: writing a temporary file: %w", err)
	}
	return nil
}

func (w *Workspace) removeTemp(name string) { w.root.Remove(tmpPath + name) }

func (w *Workspace) placeTemp(tmp, c string) error {
	if d := dirOf(c); d != "." {
		fi, err := w.root.Stat(d)
		if err != nil {
			return w.pathErr(d, err)
		}
		if err := w.checkDirIdentity(d, fi); err != nil {
			return err
		}
	}
	if err := w.root.Rename(tmpPath+tmp, c); err != nil {
		return w.pathErr(c, err)
	}
	return nil
}

func (w *Workspace) blobPresent(h string) (bool, error) {
	_, err := w.root.Lstat(blobPath(h))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("workspace: looking up an image: %w", err)
}

func (w *Workspace) placeBlob(tmp, h string) error {
	sub := JournalDir + "/" + blobDir + "/" + h[:2]
	if err := w.root.Mkdir(sub, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("workspace: storing an image: %w", err)
	}
	if err := w.root.Rename(tmpPath+tmp, blobPath(h)); err != nil {
		return fmt.Errorf("workspace: storing an image: %w", err)
	}
	if !w.sync {
		return nil
	}
	f, err := w.root.Open(sub)
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	defer f.Close()
	// Windows refuses to sync a directory; NTFS journals the rename.
	syncs.Add(1)
	f.Sync()
	return nil
}
