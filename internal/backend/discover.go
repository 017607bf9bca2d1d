package backend

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/autoagent-go/autoagent/internal/backenddir"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// DirEnv names the environment variable that sets the backends directory
// when no directory is given explicitly.
const DirEnv = backenddir.Env

// ErrNotFound is wrapped by the error [Find] returns when no backend binary
// has the requested kind and name.
var ErrNotFound = errors.New("backend: not found")

// DefaultDir is [backenddir.Default].
func DefaultDir() string { return backenddir.Default() }

// Dir is [backenddir.Dir].
func Dir(explicit string) string { return backenddir.Dir(explicit) }

// howToName says how to name a backends directory, for errors.
func howToName() string {
	return fmt.Sprintf("name one with --backends DIR or $%s, or install backends in %s; a backends directory of the working directory is never searched unless named", DirEnv, cmp.Or(DefaultDir(), "~/.config/autoagent/backends"))
}

// Found is a backend binary found in a backends directory.
type Found struct {
	Kind Kind
	Name string
	// Path is the binary's path: the directory joined with its file name.
	Path string
}

// List returns the backend binaries in dir, sorted by kind then name.
// Files that are not named like backends, directories and files without
// an execute bit are ignored. A missing directory is an error that names it.
func List(dir string) ([]Found, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("backend: read backends directory: %w", err)
	}
	var out []Found
	for _, e := range entries {
		k, name, ok := ParseBinaryName(e.Name())
		if !ok {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if !isExecutable(p) {
			continue
		}
		out = append(out, Found{Kind: k, Name: name, Path: p})
	}
	slices.SortFunc(out, func(a, b Found) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// Find returns the path of the backend of kind k called name in dir. The
// error wraps [ErrNotFound] when there is none and says which backends of
// that kind the directory does hold.
func Find(dir string, k Kind, name string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	if dir == "" {
		return "", fmt.Errorf("%w: %s backend %q: no backends directory (%s)", ErrNotFound, k, name, howToName())
	}
	p := filepath.Join(dir, BinaryName(k, name)+exeSuffix)
	if isExecutable(p) {
		return p, nil
	}
	found, err := List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s backend %q: backends directory %s does not exist (%s)", ErrNotFound, k, name, dir, howToName())
	}
	var names []string
	for _, f := range found {
		if f.Kind == k {
			names = append(names, f.Name)
		}
	}
	have := "none"
	if len(names) > 0 {
		have = strings.Join(names, ", ")
	}
	return "", fmt.Errorf("%w: no executable %s in %s (%s backends there: %s)", ErrNotFound, BinaryName(k, name)+exeSuffix, dir, k, have)
}

// isExecutable reports whether p is a regular file (after following
// symlinks) that this process may try to execute.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0
}
