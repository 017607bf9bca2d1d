package workspace

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
)

// hashOf is the hex SHA-256 of data: a before-image's name in the store.
func hashOf(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

func blobPath(h string) string { return JournalDir + "/" + blobDir + "/" + h[:2] + "/" + h }

// putBlob stores data under its hash unless it is there already, so a
// file rewritten a thousand times costs its distinct versions only. The
// blob is synced before the journal names it.
func (w *Workspace) putBlob(data []byte) (string, error) {
	h := hashOf(data)
	if _, err := w.root.Lstat(blobPath(h)); err == nil {
		return h, nil
	}
	sub := JournalDir + "/" + blobDir + "/" + h[:2]
	if err := w.root.Mkdir(sub, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("workspace: storing a before-image: %w", err)
	}
	tmp, err := w.writeTemp(data)
	if err != nil {
		return "", err
	}
	if err := w.root.Rename(tmp, blobPath(h)); err != nil {
		w.root.Remove(tmp)
		return "", fmt.Errorf("workspace: storing a before-image: %w", err)
	}
	if err := w.syncDir(sub); err != nil {
		return "", err
	}
	return h, nil
}

// getBlob returns the content stored under h, checked against it.
func (w *Workspace) getBlob(h string) ([]byte, error) {
	if len(h) != 64 {
		return nil, fmt.Errorf("workspace: bad content hash %q in the journal", h)
	}
	data, err := w.root.ReadFile(blobPath(h))
	if err != nil {
		return nil, fmt.Errorf("workspace: the before-image %s is missing: %w", h[:12], err)
	}
	if hashOf(data) != h {
		return nil, fmt.Errorf("workspace: the before-image %s is damaged", h[:12])
	}
	return data, nil
}

// writeTemp writes data to a new synced file in the journal's tmp
// directory and returns its path.
func (w *Workspace) writeTemp(data []byte) (string, error) {
	var rnd [8]byte
	rand.Read(rnd[:])
	name := JournalDir + "/" + tmpDir + "/" + hex.EncodeToString(rnd[:])
	f, err := w.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	_, err = f.Write(data)
	if err == nil && !w.noSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		w.root.Remove(name)
		return "", fmt.Errorf("workspace: %w", err)
	}
	return name, nil
}

// syncDir syncs the directory d, so a rename into it survives a power
// loss.
func (w *Workspace) syncDir(d string) error {
	if w.noSync {
		return nil
	}
	f, err := w.root.Open(d)
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("workspace: syncing %s: %w", d, err)
	}
	return nil
}

// writeFile replaces the file at the clean path c with data: a synced
// temporary file renamed into place, so a crash leaves the old file or
// the new one, and a hard link elsewhere is never written through. It
// makes the missing directories above c and returns them.
func (w *Workspace) writeFile(c string, data []byte) ([]string, error) {
	made, err := w.mkdirs(path.Dir(c))
	if err != nil {
		return made, err
	}
	tmp, err := w.writeTemp(data)
	if err != nil {
		return made, err
	}
	if err := w.root.Rename(tmp, c); err != nil {
		w.root.Remove(tmp)
		return made, w.pathErr(c, err)
	}
	return made, nil
}

// mkdirs makes d and the directories above it that are missing, and
// returns those it made, outermost first.
func (w *Workspace) mkdirs(d string) ([]string, error) {
	if d == "." {
		return nil, nil
	}
	var missing []string
	for p := d; p != "."; p = path.Dir(p) {
		fi, err := w.root.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return nil, fmt.Errorf("%s is a file, not a directory", p)
			}
			break
		}
		missing = append(missing, p)
	}
	var made []string
	for _, p := range slices.Backward(missing) {
		if err := w.root.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return made, w.pathErr(p, err)
		}
		made = append(made, p)
	}
	return made, nil
}

// removeEmpty removes the directories of dirs that are empty, innermost
// first.
func (w *Workspace) removeEmpty(dirs []string) {
	for _, d := range slices.Backward(dirs) {
		if es, err := fs.ReadDir(w.root.FS(), d); err == nil && len(es) == 0 {
			w.root.Remove(d)
		}
	}
}

// restore gives the file at c the content named by h ("" removes it),
// and returns the directories it made.
func (w *Workspace) restore(c, h string) ([]string, error) {
	if h == "" {
		if err := w.root.Remove(c); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, w.pathErr(c, err)
		}
		return nil, nil
	}
	data, err := w.getBlob(h)
	if err != nil {
		return nil, err
	}
	return w.writeFile(c, data)
}

// current reads the file at the clean path c for a change: its content
// and hash, "" when it is absent. Anything but a regular file with one
// link is refused.
func (w *Workspace) current(c string) ([]byte, string, error) {
	if fi, err := w.root.Lstat(c); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if err := w.fence(c); err != nil {
			return nil, "", err
		}
		return nil, "", ErrLink
	}
	data, err := w.readRegular(c)
	if errors.Is(err, ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	return data, hashOf(data), nil
}

// readRegular reads the regular, singly linked file at the clean path c.
// The file is opened without blocking (a FIFO would hang the read) and
// checked again once open (it may have been replaced in between).
func (w *Workspace) readRegular(c string) ([]byte, error) {
	if err := w.fence(c); err != nil {
		return nil, err
	}
	fi, err := w.root.Stat(c)
	if err != nil {
		return nil, w.pathErr(c, err)
	}
	if err := checkFile(fi); err != nil {
		return nil, err
	}
	f, err := w.root.OpenFile(c, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, w.pathErr(c, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkFile(fi); err != nil {
		return nil, err
	}
	if w.maxFile > 0 && fi.Size() > w.maxFile {
		return nil, &SizeError{Size: fi.Size(), Limit: w.maxFile}
	}
	return io.ReadAll(f)
}

// checkFile refuses anything but a regular file with one link.
func checkFile(fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return ErrIsDir
	case !fi.Mode().IsRegular():
		return ErrNotRegular
	case links(fi) > 1:
		return ErrHardLink
	}
	return nil
}

// fence refuses the clean path c when it reaches the journal directory
// through a link: a directory on the way that is the journal directory,
// or a link at its end whose target is inside it.
func (w *Workspace) fence(c string) error {
	return w.fenceDepth(c, 0)
}

func (w *Workspace) fenceDepth(c string, depth int) error {
	if depth > 16 {
		return ErrEscape
	}
	if reserved(c) {
		return ErrReserved
	}
	if err := w.protectedPath(c); err != nil {
		return err
	}
	for p := c; p != "."; p = path.Dir(p) {
		if fi, err := w.root.Stat(p); err == nil && os.SameFile(fi, w.jdir) {
			return ErrReserved
		}
	}
	fi, err := w.root.Lstat(c)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	target, err := w.root.Readlink(c)
	if err != nil {
		return nil
	}
	if strings.HasPrefix(target, "/") {
		return ErrEscape
	}
	next := path.Clean(path.Join(path.Dir(c), target))
	if next == ".." || strings.HasPrefix(next, "../") {
		return ErrEscape
	}
	return w.fenceDepth(next, depth+1)
}

// pathErr maps an os.Root error to the workspace's refusals.
func (w *Workspace) pathErr(c string, err error) error {
	var pe *fs.PathError
	// os.Root's escape error is not exported; its text is its contract.
	if errors.As(err, &pe) && pe.Err != nil && strings.Contains(pe.Err.Error(), "escapes from parent") {
		return ErrEscape
	}
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	}
	if errors.Is(err, syscall.ELOOP) {
		return ErrEscape
	}
	return err
}
