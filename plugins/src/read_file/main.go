// Command read_file is the first-party tool module that reads files and
// lists directories (capability: fs.read:DIR for each directory it may
// see). Files are read with the os package inside the directories the
// host preopens; nothing else of the file system exists for it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"

	pdk "github.com/autoagent-go/autoagent/pdk/go"
)

// ReadInput is the read_file arguments.
type ReadInput struct {
	Path     string `json:"path" jsonschema:"absolute path of the file, inside a directory granted to this tool"`
	Offset   int64  `json:"offset,omitempty" jsonschema:"byte offset to start reading at (default 0)"`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"read at most this many bytes (default 65536, at most 1048576)"`
}

// ReadOutput is the structured result of read_file.
type ReadOutput struct {
	Path      string `json:"path"`
	Size      int64  `json:"size" jsonschema:"the file's size in bytes"`
	Offset    int64  `json:"offset"`
	Content   string `json:"content" jsonschema:"the text read"`
	Truncated bool   `json:"truncated" jsonschema:"the file goes on after what was read"`
}

const (
	defaultMax = 64 << 10
	hardMax    = 1 << 20
)

// describeErr turns a file-system error into a sentence a model can act on.
func describeErr(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.EBADF):
		// Under WASI a path outside every preopened directory has no file
		// descriptor to resolve against: EBADF.
		return fmt.Errorf("%s does not exist, or is outside the directories granted to this tool", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied (is it inside a directory granted to this tool?)", path)
	}
	return fmt.Errorf("%s: %v", path, err)
}

func readFile(_ context.Context, in ReadInput) (pdk.Result, error) {
	if !filepath.IsAbs(in.Path) {
		return pdk.Result{}, fmt.Errorf("path %q is not absolute", in.Path)
	}
	f, err := os.Open(in.Path)
	if err != nil {
		return pdk.Result{}, describeErr(in.Path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return pdk.Result{}, describeErr(in.Path, err)
	}
	if fi.IsDir() {
		return pdk.Result{}, fmt.Errorf("%s is a directory: use list_dir", in.Path)
	}
	limit := in.MaxBytes
	if limit <= 0 {
		limit = defaultMax
	}
	limit = min(limit, hardMax)
	if in.Offset < 0 || in.Offset > fi.Size() {
		return pdk.Result{}, fmt.Errorf("offset %d is outside the file (%d bytes)", in.Offset, fi.Size())
	}
	buf := make([]byte, limit+1)
	n, err := f.ReadAt(buf, in.Offset)
	if err != nil && err != io.EOF {
		return pdk.Result{}, describeErr(in.Path, err)
	}
	out := ReadOutput{Path: in.Path, Size: fi.Size(), Offset: in.Offset}
	data := buf[:n]
	if n > limit {
		data, out.Truncated = data[:limit], true
		for cut := 0; cut < utf8.UTFMax-1 && !utf8.Valid(data); cut++ {
			data = data[:len(data)-1]
		}
	}
	if !utf8.Valid(data) {
		return pdk.Result{}, fmt.Errorf("%s is a binary file (%d bytes), not text", in.Path, fi.Size())
	}
	out.Content = string(data)
	r, err := pdk.JSON(out)
	if err != nil {
		return pdk.Result{}, err
	}
	text := out.Content
	if out.Truncated {
		text += fmt.Sprintf("\n[... %d of %d bytes shown; read on with offset %d]", len(data), fi.Size(), in.Offset+int64(len(data)))
	}
	r.Content = []pdk.Content{{Type: "text", Text: text}}
	return r, nil
}

// ListInput is the list_dir arguments.
type ListInput struct {
	Path      string `json:"path" jsonschema:"absolute path of the directory, inside a directory granted to this tool"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"also list the contents of subdirectories"`
}

// Entry is one directory entry.
type Entry struct {
	Path string `json:"path" jsonschema:"path relative to the listed directory"`
	Type string `json:"type" enum:"file,dir,symlink,other"`
	Size int64  `json:"size" jsonschema:"size in bytes (files only)"`
}

// ListOutput is the structured result of list_dir.
type ListOutput struct {
	Entries   []Entry `json:"entries"`
	Truncated bool    `json:"truncated" jsonschema:"more entries exist than were listed"`
}

const maxEntries = 1000

func entryType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}

func listDir(_ context.Context, in ListInput) (pdk.Result, error) {
	if !filepath.IsAbs(in.Path) {
		return pdk.Result{}, fmt.Errorf("path %q is not absolute", in.Path)
	}
	fi, err := os.Stat(in.Path)
	if err != nil {
		return pdk.Result{}, describeErr(in.Path, err)
	}
	if !fi.IsDir() {
		return pdk.Result{}, fmt.Errorf("%s is a file: use read_file", in.Path)
	}
	var out ListOutput
	err = filepath.WalkDir(in.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return describeErr(p, err)
		}
		if p == in.Path {
			return nil
		}
		if len(out.Entries) == maxEntries {
			out.Truncated = true
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(in.Path, p)
		e := Entry{Path: rel, Type: entryType(d.Type())}
		if e.Type == "file" {
			if info, err := d.Info(); err == nil {
				e.Size = info.Size()
			}
		}
		out.Entries = append(out.Entries, e)
		if d.IsDir() && !in.Recursive {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return pdk.Result{}, err
	}
	sort.Slice(out.Entries, func(i, j int) bool { return out.Entries[i].Path < out.Entries[j].Path })
	if out.Entries == nil {
		out.Entries = []Entry{}
	}
	r, err := pdk.JSON(out)
	if err != nil {
		return pdk.Result{}, err
	}
	var text strings.Builder
	fmt.Fprintf(&text, "%s: %d entries\n", in.Path, len(out.Entries))
	for _, e := range out.Entries {
		switch e.Type {
		case "file":
			fmt.Fprintf(&text, "%s (%d bytes)\n", e.Path, e.Size)
		case "dir":
			fmt.Fprintf(&text, "%s/\n", e.Path)
		default:
			fmt.Fprintf(&text, "%s (%s)\n", e.Path, e.Type)
		}
	}
	if out.Truncated {
		fmt.Fprintf(&text, "[listing stopped after %d entries]\n", maxEntries)
	}
	r.Content = []pdk.Content{{Type: "text", Text: text.String()}}
	return r, nil
}

func init() {
	// The directory is the operator's choice (fs.read:DIR at approval): request the kind.
	pdk.RequestCapabilities("fs.read")
	pdk.Register(
		pdk.NewTool("read_file",
			"Read a text file and return its content (up to max_bytes from offset). Only files inside the directories granted to this tool can be read.",
			readFile).WithAnnotations(pdk.Annotations{Title: "Read file", ReadOnly: true}),
		pdk.NewTool("list_dir",
			"List the files and subdirectories of a directory, with sizes; recursive lists the whole tree (at most 1000 entries). Only directories granted to this tool can be listed.",
			listDir).WithAnnotations(pdk.Annotations{Title: "List directory", ReadOnly: true}),
	)
}

func main() {}
