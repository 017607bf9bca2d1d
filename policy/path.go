package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks bounds the symbolic links one path may go through, as the
// kernel's ELOOP does.
const maxLinks = 40

// errUnresolvable is what resolvePath's errors wrap.
var errUnresolvable = errors.New("cannot be resolved safely")

// resolvePath returns where p leads on this machine: each symbolic link
// on the way is followed, ".." after a link goes up from where the link
// led, and a component that does not exist (yet) is taken as written. A relative p is taken from the working directory. It fails
// (wrapping errUnresolvable) on a loop of links, more than maxLinks links,
// a NUL byte, or a component it may not look at.
func resolvePath(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%w: an empty path or a NUL byte", errUnresolvable)
	}
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("%w: relative, and no working directory: %v", errUnresolvable, err)
		}
		p = wd + string(filepath.Separator) + p
	}
	vol := filepath.VolumeName(p)
	cur := vol + string(filepath.Separator) // resolved so far: no link in it
	rest := p[len(vol):]
	links := 0
	for rest != "" {
		var name string
		name, rest = cutComponent(rest)
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			// Not there (yet): no link to follow. The components after it
			// are still looked at, since a ".." can climb back out.
			cur = next
			continue
		case err != nil:
			return "", fmt.Errorf("%w: %v", errUnresolvable, err)
		case fi.Mode()&fs.ModeSymlink == 0:
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%w: more than %d symbolic links (a loop?) at %s", errUnresolvable, maxLinks, next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("%w: %v", errUnresolvable, err)
		}
		if filepath.IsAbs(target) {
			v := filepath.VolumeName(target)
			cur, target = v+string(filepath.Separator), target[len(v):]
		}
		rest = target + string(filepath.Separator) + rest
	}
	return cur, nil
}

// cutComponent splits the first path component off p.
func cutComponent(p string) (name, rest string) {
	p = strings.TrimLeftFunc(p, isSeparator)
	if i := strings.IndexFunc(p, isSeparator); i >= 0 {
		return p[:i], p[i+1:]
	}
	return p, ""
}

// isSeparator: a slash, or the system's separator.
func isSeparator(r rune) bool { return r == '/' || r == filepath.Separator }

// within reports whether the resolved path p is dir or inside it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}
