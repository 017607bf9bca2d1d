package backend

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// DirEnv names the environment variable that sets the backends directory
// when no directory is given explicitly.
const DirEnv = "AUTOAGENT_BACKENDS"

// ErrNotFound is wrapped by the error [Find] returns when no backend binary
// has the requested kind and name.
var ErrNotFound = errors.New("backend: not found")

// DefaultDir returns the backends directory used when neither an explicit
// directory nor $AUTOAGENT_BACKENDS names one: autoagent/backends in the
// user's configuration directory ($XDG_CONFIG_HOME when absolute, else
// ~/.config; the user configuration directory on Windows), never a
// directory of the working directory, where a checkout could ship
// binaries that would run natively. "" when there is no home directory.
func DefaultDir() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "autoagent", "backends")
	}
	if runtime.GOOS == "windows" {
		if d, err := os.UserConfigDir(); err == nil {
			return filepath.Join(d, "autoagent", "backends")
		}
		return ""
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".config", "autoagent", "backends")
	}
	return ""
}

// Dir returns the backends directory to search: explicit when it is not
// empty, else $AUTOAGENT_BACKENDS, else [DefaultDir]. No binary runs from
// a directory the user did not name or own.
func Dir(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if d := os.Getenv(DirEnv); d != "" {
		return d
	}
	return DefaultDir()
}

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
