package manifest

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Protected is a directory, or a file, no fs grant may reach: a module
// able to write there could give itself more than its grants (the plugins
// directory and the manifest's: a new module and an approval for it; the
// host's cache of compiled code: machine code the host would run; a run's
// policy: what it may call), and one able to read some of them could read
// what other modules keep (the kv stores) or what a run said (sessions,
// traces).
type Protected struct {
	// Dir is the directory: a grant whose directory holds it or lies in
	// it is refused.
	Dir string
	// File, instead of Dir, is one file: a grant of the file itself is
	// refused, and a guest whose grant holds it (a workspace holding
	// policy.json) is refused the file, reading and writing, by its
	// identity under any name (a hard link, a rename): the host does this
	// inside its file system, since refusing the whole grant would refuse
	// every workspace that holds a run's files.
	File string
	// What says what it holds and why it matters, for the error.
	What string
	// Read refuses fs.read grants too, not only fs.write and
	// fs.workspace (a File is always refused to all three).
	Read bool
}

// ProtectedError is a grant that reaches a protected directory: its
// directory holds it, or lies inside it.
type ProtectedError struct {
	Grant     Grant
	Protected Protected
}

func (e *ProtectedError) Error() string {
	if e.Protected.File != "" {
		return fmt.Sprintf("grant %s is %s, %s; grant the directory the tool works in", e.Grant, e.Protected.File, e.Protected.What)
	}
	return fmt.Sprintf("grant %s reaches %s, %s; grant a directory that neither holds it nor lies inside it",
		e.Grant, e.Protected.Dir, e.Protected.What)
}

// CheckProtected returns a *ProtectedError for the first fs grant of
// grants whose directory holds a protected directory or lies inside one,
// or is a protected file, compared where the paths lead (links resolved),
// or nil. A protected file inside a granted directory is not refused
// here: the host refuses the guest the file itself (Protected.File).
func CheckProtected(grants []Grant, protected []Protected) error {
	for _, g := range grants {
		if !g.IsFS() || g.Path == "" {
			continue
		}
		gp := resolvedGrantPath(g.Path)
		for _, p := range protected {
			if p.File != "" && resolvedGrantPath(p.File) == gp {
				return &ProtectedError{Grant: g, Protected: p}
			}
			if p.Dir == "" || g.Kind == KindFSRead && !p.Read {
				continue
			}
			pp := resolvedGrantPath(p.Dir)
			if within(pp, gp) || within(gp, pp) {
				return &ProtectedError{Grant: g, Protected: p}
			}
		}
	}
	return nil
}

// within reports whether path is dir or lies below it.
func within(path, dir string) bool {
	if !filepath.IsAbs(path) || !filepath.IsAbs(dir) {
		a, err1 := filepath.Abs(path)
		b, err2 := filepath.Abs(dir)
		if err1 != nil || err2 != nil {
			return true // cannot tell: refuse
		}
		path, dir = a, b
	}
	return path == dir || dir == string(filepath.Separator) || strings.HasPrefix(path, dir+string(filepath.Separator))
}
