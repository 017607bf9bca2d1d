package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/autoagent-go/autoagent/internal/safefile"
)

// FileStatus is what [Verify] found for one approved file.
type FileStatus int

const (
	// FileOK: the file's bytes match one of its approvals.
	FileOK FileStatus = iota
	// FileChanged: the file's bytes match none of its approvals, or its
	// describe sidecar differs from the one approved with them.
	FileChanged
	// FileMissing: an approval names a file that is not in the directory.
	FileMissing
	// FileUnreadable: the file exists but could not be read.
	FileUnreadable
)

func (s FileStatus) String() string {
	switch s {
	case FileOK:
		return "ok"
	case FileChanged:
		return "changed"
	case FileMissing:
		return "missing"
	case FileUnreadable:
		return "unreadable"
	}
	return fmt.Sprintf("FileStatus(%d)", int(s))
}

// FileCheck is the verdict on one file named by approvals.
type FileCheck struct {
	// File is the file name, Path the file checked.
	File, Path string
	Status     FileStatus
	// SHA256 is the file's current sum ("" when missing or unreadable).
	SHA256 string
	// Approvals are the manifest's approvals for this file, oldest first.
	// When Status is FileOK, Current is the one matching; the others are
	// approvals of earlier bytes.
	Approvals []Entry
	Current   *Entry
	// Err is the read error of an unreadable file.
	Err error
	// Detail says more about a change ("its sidecar echo.tool.json changed").
	Detail string
}

// Report is the result of [Verify].
type Report struct {
	// Files has one check per file named by an approval, by file name.
	Files []FileCheck
	// Unapproved are the .wasm files in the directory whose bytes have no
	// approval (pending modules), by file name.
	Unapproved []string
}

// OK reports whether every approved file is present with approved bytes.
func (r *Report) OK() bool {
	for _, c := range r.Files {
		if c.Status != FileOK {
			return false
		}
	}
	return true
}

// Problems returns the checks that are not FileOK.
func (r *Report) Problems() []FileCheck {
	return slices.DeleteFunc(slices.Clone(r.Files), func(c FileCheck) bool { return c.Status == FileOK })
}

// Verify checks each file the manifest names against its approvals, in dir
// (the plugins directory): a file whose bytes match none of its approvals
// has changed since it was approved; an approval naming a file that is not
// there is missing. It also lists the directory's .wasm files with no
// approval. The error is for a directory that cannot be listed.
func Verify(m *Manifest, dir string) (*Report, error) {
	rep := &Report{}
	byFile := map[string][]Entry{}
	for _, e := range m.Entries() {
		byFile[e.File] = append(byFile[e.File], e)
	}
	files := make([]string, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, f := range files {
		c := FileCheck{File: f, Path: filepath.Join(dir, f), Approvals: byFile[f]}
		data, err := safefile.Read(c.Path, maxModuleBytes)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			c.Status = FileMissing
		case err != nil:
			c.Status, c.Err = FileUnreadable, err
		default:
			c.SHA256 = Sum(data)
			c.Status = FileChanged
			for i := range c.Approvals {
				if c.Approvals[i].SHA256 == c.SHA256 {
					c.Status, c.Current = FileOK, &c.Approvals[i]
				}
			}
			if c.Current != nil {
				side := SidecarFile(f)
				want, got := c.Current.SidecarSHA256, sidecarSum(filepath.Join(dir, side))
				if got != want {
					c.Status, c.Current = FileChanged, nil
					switch {
					case want == "":
						c.Detail = "a describe sidecar " + side + " appeared after approval"
					case got == "":
						c.Detail = "its describe sidecar " + side + ", approved with it, is gone"
					default:
						c.Detail = "its describe sidecar " + side + " changed since approval"
					}
				}
			}
		}
		rep.Files = append(rep.Files, c)
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("manifest: listing %w", err)
	}
	for _, de := range ents {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".wasm") {
			continue
		}
		if _, named := byFile[de.Name()]; named {
			continue
		}
		data, err := safefile.Read(filepath.Join(dir, de.Name()), maxModuleBytes)
		if _, ok := m.Lookup(Sum(data)); err != nil || !ok {
			rep.Unapproved = append(rep.Unapproved, de.Name())
		}
	}
	return rep, nil
}

// maxModuleBytes bounds a module or sidecar file Verify reads (as the
// plugins directory's default does).
const maxModuleBytes = 256 << 20

// sidecarSum returns the [Sum] of the describe sidecar at path, or "" when
// there is none (an unreadable sidecar sums to a value no approval holds, so
// it never passes for an absent one).
func sidecarSum(path string) string {
	data, err := safefile.Read(path, maxModuleBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		return "unreadable"
	}
	return Sum(data)
}
