// Package safefile reads files an operator (or anyone with write access to
// a directory) put in place, such as plugin modules, sidecars and the
// manifest, without trusting what kind of file they are:
//
//	b, err := safefile.Read("plugins/fetch.wasm", 256<<20)
//	if errors.Is(err, safefile.ErrNotRegular) {
//		// a FIFO, device or socket named *.wasm: skipped, with this reason
//	}
//
// os.ReadFile blocks forever on a FIFO nobody writes to (and reads a
// device such as /dev/zero without end); Read opens without blocking,
// checks that the file is a regular file before reading a byte, and caps
// how much it reads. Files of the kernel's pseudo file systems (/proc,
// /sys, ...) count as not regular: they claim to be regular files, but
// /proc/kmsg blocks a read until the kernel logs something.
package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped by Read's error for a path that is not a
// regular file (a directory, a FIFO, a device, a socket).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by Read's error for a file larger than its cap.
var ErrTooLarge = errors.New("file too large")

// Read returns the contents of the regular file at path, at most max
// bytes (max <= 0: no cap). It never blocks on a FIFO and never reads from
// a device.
func Read(path string, max int64) ([]byte, error) { return ReadPrefixed(path, max, nil) }

// ErrPrefix is wrapped by ReadPrefixed's error for a file that does not
// start with the prefix asked for.
var ErrPrefix = errors.New("unexpected start of file")

// ReadPrefixed is Read for a file that must start with prefix (a format's
// magic number): one that does not is refused after len(prefix) bytes,
// without reading the rest.
func ReadPrefixed(path string, max int64, prefix []byte) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(f, path, max, prefix)
}

// ReadIn is Read of name inside root: a name that leaves root, by ".."
// or by a symbolic link pointing outside it, is refused (os.Root's
// error), as is a file that is not regular.
func ReadIn(root *os.Root, name string, max int64) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	if err := checkOpen(f, name); err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(f, name, max, nil)
}

// readOpen reads the regular file f, opened from path, as ReadPrefixed.
func readOpen(f *os.File, path string, max int64, prefix []byte) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if max > 0 && size > max {
		return nil, fmt.Errorf("%s: %w: %d bytes, more than the %d allowed", path, ErrTooLarge, size, max)
	}
	if len(prefix) > 0 {
		head := make([]byte, len(prefix))
		if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, prefix) {
			return nil, fmt.Errorf("%s: %w: it does not start with %q", path, ErrPrefix, prefix)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
	}
	// One byte more than the size, so a file that grew shows it, and no
	// buffer growth copies what was read (a buffer of exactly the size
	// grows once more before it sees the end).
	buf := make([]byte, size+1)
	n, err := io.ReadFull(f, buf)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return buf[:n], nil
	case err != nil:
		return nil, err
	}
	// It grew while being read: read on, within the cap.
	rest := bytes.NewBuffer(buf)
	r := io.Reader(f)
	if max > 0 {
		r = io.LimitReader(f, max+1-int64(n))
	}
	if _, err := rest.ReadFrom(r); err != nil {
		return nil, err
	}
	if max > 0 && int64(rest.Len()) > max {
		return nil, fmt.Errorf("%s: %w: it grew past the %d bytes allowed while being read", path, ErrTooLarge, max)
	}
	return rest.Bytes(), nil
}

// Open opens the regular file at path for reading without blocking on a
// FIFO, and fails with ErrNotRegular for anything but a regular file.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	if err := checkOpen(f, path); err != nil {
		return nil, err
	}
	return f, nil
}

// checkOpen closes f and fails unless it is a regular file of no pseudo
// file system; it makes f's reads blocking again.
func checkOpen(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(fi.Mode()))}
	}
	if name := pseudoFS(f); name != "" {
		f.Close()
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (a file of %s)", ErrNotRegular, name)}
	}
	if err := clearNonblock(f); err != nil {
		f.Close()
		return err
	}
	return nil
}

// Kind names a file mode's type for messages: "a FIFO", "a directory".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "an irregular file"
}
