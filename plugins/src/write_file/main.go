// Command write_file is the first-party tool module that writes text files
// (capability: fs.write:DIR for each directory it may write in). Each
// write is capped at 1 MiB, or at the WRITE_FILE_MAX_BYTES config value
// when the operator sets one.
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	pdk "github.com/autoagent-go/autoagent/pdk/go"
)

// Input is the write_file arguments.
type Input struct {
	Path       string `json:"path" jsonschema:"absolute path of the file, inside a directory granted to this tool for writing"`
	Content    string `json:"content" jsonschema:"the text to write"`
	Append     bool   `json:"append,omitempty" jsonschema:"add to the end of the file instead of replacing it"`
	CreateDirs bool   `json:"create_dirs,omitempty" jsonschema:"create missing parent directories"`
}

// Output is the structured result.
type Output struct {
	Path    string `json:"path"`
	Written int    `json:"written" jsonschema:"bytes written"`
	Size    int64  `json:"size" jsonschema:"the file's size afterwards"`
}

const defaultCap = 1 << 20

// sizeCap is the most one call may write.
func sizeCap() int {
	if v, ok := pdk.Config("WRITE_FILE_MAX_BYTES"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return defaultCap
}

func writeFile(_ context.Context, in Input) (pdk.Result, error) {
	if !filepath.IsAbs(in.Path) {
		return pdk.Result{}, fmt.Errorf("path %q is not absolute", in.Path)
	}
	if limit := sizeCap(); len(in.Content) > limit {
		return pdk.Result{}, fmt.Errorf("content is %d bytes, more than the %d bytes one write may hold; write it in parts with append", len(in.Content), limit)
	}
	if in.CreateDirs {
		if err := os.MkdirAll(filepath.Dir(in.Path), 0o755); err != nil {
			return pdk.Result{}, describeErr(filepath.Dir(in.Path), err)
		}
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if in.Append {
		flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(in.Path, flag, 0o644)
	if err != nil {
		return pdk.Result{}, describeErr(in.Path, err)
	}
	n, err := f.WriteString(in.Content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return pdk.Result{}, describeErr(in.Path, err)
	}
	out := Output{Path: in.Path, Written: n}
	if fi, err := os.Stat(in.Path); err == nil {
		out.Size = fi.Size()
	}
	r, err := pdk.JSON(out)
	if err != nil {
		return pdk.Result{}, err
	}
	r.Content = []pdk.Content{{Type: "text", Text: fmt.Sprintf("wrote %d bytes to %s (now %d bytes)", n, in.Path, out.Size)}}
	return r, nil
}

func describeErr(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.EBADF):
		// Under WASI a path outside every preopened directory has no file
		// descriptor to resolve against: EBADF.
		return fmt.Errorf("%s: the directory does not exist or is outside the directories granted to this tool (create_dirs creates missing directories)", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied: this tool may only write inside directories granted with fs.write", path)
	}
	return fmt.Errorf("%s: %v", path, err)
}

func init() {
	// The directory is the operator's choice (fs.write:DIR at approval): request the kind.
	pdk.RequestCapabilities("fs.write")
	pdk.Register(pdk.NewTool("write_file",
		"Write text to a file, replacing it or appending to it (at most 1 MiB per call). Only directories granted to this tool for writing can be written.",
		writeFile).WithAnnotations(pdk.Annotations{Title: "Write file", Destructive: true}))
}

func main() {}
