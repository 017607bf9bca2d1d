package synth

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Promote moves the staged tool stem (its module, describe sidecar, source
// and record) from the staging directory into the plugins directory, where
// it is pending until approved with `autoagent tools approve
// PLUGINS/STEM.wasm`. It refuses to overwrite anything in the plugins
// directory and returns the paths written, the module first.
//
// Promote does not approve: trust is given by a person through the
// manifest, which pins the module's and the sidecar's sha256.
func Promote(stagingDir, stem, pluginsDir string) ([]string, error) {
	if stem == "" || strings.ContainsAny(stem, `/\`) || stem == "." || stem == ".." {
		return nil, fmt.Errorf("synth: promote: %q is not a staged tool name", stem)
	}
	module := filepath.Join(stagingDir, stem+".wasm")
	if _, err := os.Stat(module); err != nil {
		return nil, fmt.Errorf("synth: promote: no staged tool %s in %s: %w", stem, stagingDir, err)
	}
	var files []string
	for _, ext := range []string{".wasm", ".tool.json", ".js", ".go", ".synth.json"} {
		src := filepath.Join(stagingDir, stem+ext)
		if _, err := os.Stat(src); err == nil {
			files = append(files, stem+ext)
		}
		if _, err := os.Stat(filepath.Join(pluginsDir, stem+ext)); err == nil {
			return nil, fmt.Errorf("synth: promote: %s already exists; remove it or rename the staged tool first", filepath.Join(pluginsDir, stem+ext))
		}
	}
	if err := os.MkdirAll(pluginsDir, 0o755); err != nil {
		return nil, fmt.Errorf("synth: promote: %w", err)
	}
	// Move the module last, so the plugins directory never holds a module
	// without its sidecar.
	files = append(files[1:], files[0])
	var out []string
	for _, f := range files {
		dst := filepath.Join(pluginsDir, f)
		if err := move(filepath.Join(stagingDir, f), dst); err != nil {
			return out, fmt.Errorf("synth: promote: %w", err)
		}
		out = append(out, dst)
	}
	return append(out[len(out)-1:], out[:len(out)-1]...), nil
}

// move renames src to dst, copying across file systems.
func move(src, dst string) error {
	err := os.Rename(src, dst)
	var le *os.LinkError
	if err == nil || !errors.As(err, &le) || errors.Is(err, fs.ErrNotExist) {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	b, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	if err := writeAtomic(dst, b); err != nil {
		return err
	}
	return os.Remove(src)
}
