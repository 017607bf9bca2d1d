package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Protected is a file or directory of the application that the workspace
// never reads, writes or lists, even when it lies inside it: the run's
// policy, agent file, checkpoint, trace.
type Protected struct {
	Path string // a file or a directory (relative to the working directory)
	What string // what it holds, for the refusal
}

// ProtectedError refuses a path that is, or lies in, a protected file or
// directory.
type ProtectedError struct {
	Path string
	What string
}

func (e *ProtectedError) Error() string {
	return fmt.Sprintf("%s is protected (%s): the workspace does not read or write it", e.Path, e.What)
}

// guard is a protected entry as Open found it.
type guard struct {
	rel  string      // its path relative to the root, "" when outside it
	fi   fs.FileInfo // its identity, nil when missing
	what string
}

// guards resolves the protected entries against the workspace's root.
func guards(dir string, ps []Protected) []guard {
	var out []guard
	for _, p := range ps {
		if p.Path == "" {
			continue
		}
		abs, err := filepath.Abs(p.Path)
		if err != nil {
			continue
		}
		g := guard{what: p.What}
		if r, err := filepath.Rel(dir, abs); err == nil && filepath.IsLocal(r) {
			g.rel = filepath.ToSlash(r)
		}
		if fi, err := os.Stat(abs); err == nil {
			g.fi = fi
		}
		if g.rel != "" || g.fi != nil {
			out = append(out, g)
		}
	}
	return out
}

// protectedName refuses the clean path c when it is, or lies in, a
// protected entry by name; the fence checks what it resolves to by
// identity ([Workspace.identity]).
func (w *Workspace) protectedName(c string) error {
	for _, g := range w.guards {
		if g.rel != "" && (strings.EqualFold(c, g.rel) || strings.HasPrefix(strings.ToLower(c), strings.ToLower(g.rel)+"/")) {
			return &ProtectedError{Path: c, What: g.what}
		}
	}
	return nil
}
