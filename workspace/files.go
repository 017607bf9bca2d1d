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
// image is complete under its name (a temporary file renamed there)
// before the journal names it, and synced when the workspace syncs. The
// store only grows, so an image seen once is not looked up again.
func (w *Workspace) putBlob(data []byte) (string, error) {
	h := hashOf(data)
	if _, ok := w.known[h]; ok {
		return h, nil
	}
	present, err := w.blobPresent(h)
	if err != nil {
		return "", err
	}
	if !present {
		tmp, err := w.createTemp(data)
		if err != nil {
			return "", err
		}
		if err := w.placeBlob(tmp, h); err != nil {
			w.removeTemp(tmp)
			return "", err
		}
	}
	w.remember(h)
	return h, nil
}

// remember notes that the image h is stored.
func (w *Workspace) remember(h string) {
	if len(w.known) >= maxKnown {
		clear(w.known)
	}
	w.known[h] = struct{}{}
}

// maxKnown bounds the images a workspace remembers as stored; past it,
// it forgets them and looks them up again.
const maxKnown = 1 << 16

// getBlob returns the content stored under h, checked against it.
func (w *Workspace) getBlob(h string) ([]byte, error) {
	if len(h) != 64 {
		return nil, fmt.Errorf("workspace: bad content hash %q in the journal", h)
	}
	data, err := w.root.ReadFile(blobPath(h))
	if err != nil {
		return nil, fmt.Errorf("workspace: the image %s is missing: %w", h[:12], err)
	}
	if hashOf(data) != h {
		return nil, fmt.Errorf("workspace: the image %s is damaged", h[:12])
	}
	return data, nil
}

// tempName is a new random name for a file of the journal's tmp
// directory.
func tempName() string {
	var rnd [8]byte
	rand.Read(rnd[:])
	return hex.EncodeToString(rnd[:])
}

// writeFile replaces the file at c with data: a temporary file (synced
// when the workspace syncs) renamed into place, so a crash leaves the old
// file or the new one, and a hard link elsewhere is never written
// through. It makes the missing directories above c and returns them.
func (w *Workspace) writeFile(c string, data []byte) ([]string, error) {
	made, err := w.mkdirs(path.Dir(c))
	if err != nil {
		return made, err
	}
	tmp, err := w.createTemp(data)
	if err != nil {
		return made, err
	}
	if err := w.placeTemp(tmp, c); err != nil {
		w.removeTemp(tmp)
		return made, err
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
	if errors.Is(err, fs.ErrNotExist) {
		var ok bool
		if data, ok = w.swapped(c, h); ok && data == nil {
			return nil, nil
		}
		if ok {
			err = nil
		}
	}
	if err != nil {
		return nil, err
	}
	return w.writeFile(c, data)
}

// swapped finds the image h that is not in the store because a crash
// stopped commitSwap: in tmp under its hash (moved into the store on the
// way), or still at c, which then needs nothing (nil, true).
func (w *Workspace) swapped(c, h string) ([]byte, bool) {
	if data, err := w.root.ReadFile(JournalDir + "/" + tmpDir + "/" + h); err == nil && hashOf(data) == h {
		if w.placeBlob(h, h) == nil {
			w.remember(h)
		}
		return data, true
	}
	if _, ch, err := w.current(c); err == nil && ch == h {
		return nil, true
	}
	return nil, false
}

// current reads the file at the clean path c for a change: its content
// and hash, "" when it is absent. Anything but a regular file with one
// link is refused, a symbolic link included.
func (w *Workspace) current(c string) ([]byte, string, error) {
	data, err := w.readFile(c, false)
	if errors.Is(err, ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	return data, hashOf(data), nil
}

// readRegular reads the regular, singly linked file at the clean path c,
// through a link at c that the fence lets by.
func (w *Workspace) readRegular(c string) ([]byte, error) { return w.readFile(c, true) }

// readFile reads the regular, singly linked file at the clean path c; a
// link at c is followed when follow is set, refused ([ErrLink])
// otherwise. The file is opened without blocking (a FIFO would hang the
// read) and checked again once open (it may have been replaced in
// between).
func (w *Workspace) readFile(c string, follow bool) ([]byte, error) {
	l, err := w.fenceInfo(c, 0)
	if err != nil {
		return nil, err
	}
	if l.err != nil {
		return nil, w.pathErr(c, l.err)
	}
	fi := l.fi
	if fi.Mode()&fs.ModeSymlink != 0 {
		if !follow {
			return nil, ErrLink
		}
		if fi, err = w.root.Stat(c); err != nil {
			return nil, w.pathErr(c, err)
		}
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
	return readAll(f, fi.Size())
}

// readAll reads f to its end into a buffer sized for size bytes, so the
// usual file takes one read and one more to see the end.
func readAll(f *os.File, size int64) ([]byte, error) {
	buf := make([]byte, 0, size+1)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
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
// or a protected entry: by name, through a directory on the way that is
// one of them by identity, or through a link at its end whose target is
// refused.
func (w *Workspace) fence(c string) error {
	_, err := w.fenceInfo(c, 0)
	return err
}

// lstat is what looking at a path found: its information, or the error
// of looking (a missing file, a link on the way leading out), which is
// the caller's to report.
type lstat struct {
	fi  fs.FileInfo
	err error
}

// fenceInfo is fence, returning c's Lstat as well.
func (w *Workspace) fenceInfo(c string, depth int) (lstat, error) {
	if depth > 16 {
		return lstat{}, ErrEscape
	}
	if reserved(c) {
		return lstat{}, ErrReserved
	}
	if err := w.protectedName(c); err != nil {
		return lstat{}, err
	}
	for p := dirOf(c); p != "."; p = dirOf(p) {
		if fi, err := w.root.Stat(p); err == nil {
			if err := w.identity(c, fi); err != nil {
				return lstat{}, err
			}
		}
	}
	fi, err := w.root.Lstat(c)
	if err != nil {
		return lstat{err: err}, nil
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return lstat{fi: fi}, w.identity(c, fi)
	}
	if st, err := w.root.Stat(c); err == nil {
		if err := w.identity(c, st); err != nil {
			return lstat{}, err
		}
	}
	target, err := w.root.Readlink(c)
	if err != nil {
		return lstat{fi: fi}, nil
	}
	if strings.HasPrefix(target, "/") {
		return lstat{}, ErrEscape
	}
	next := path.Clean(path.Join(path.Dir(c), target))
	if next == ".." || strings.HasPrefix(next, "../") {
		return lstat{}, ErrEscape
	}
	if _, err := w.fenceInfo(next, depth+1); err != nil {
		return lstat{}, err
	}
	return lstat{fi: fi}, nil
}

// identity refuses fi, what the clean path c or a directory above it
// resolves to, when it is one of the journal's directories or a
// protected entry.
func (w *Workspace) identity(c string, fi fs.FileInfo) error {
	for _, j := range w.jdirs {
		if os.SameFile(fi, j) {
			return ErrReserved
		}
	}
	for _, g := range w.guards {
		if g.fi != nil && os.SameFile(fi, g.fi) {
			return &ProtectedError{Path: c, What: g.what}
		}
	}
	return nil
}

// checkDirIdentity refuses the directory a file is about to be placed
// in when it is the journal's or a protected one: it was reached by its
// path after the fence looked at it, and may have been swapped since.
func (w *Workspace) checkDirIdentity(d string, fi fs.FileInfo) error {
	if !fi.IsDir() {
		return fmt.Errorf("%s is a file, not a directory", d)
	}
	return w.identity(d, fi)
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
