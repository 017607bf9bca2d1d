package backend

import (
	"errors"
	"path/filepath"
	"strings"
)

// Resolve decides which binary serves a backend of kind k. With path set,
// it is that binary and name (default: derived from the file name) only
// labels it; otherwise name is looked up in the backends directory
// Dir(dir). It returns the binary's path and the backend's name.
func Resolve(k Kind, name, dir, path string) (string, string, error) {
	if path != "" {
		if name == "" {
			base := filepath.Base(path)
			if kk, n, ok := ParseBinaryName(base); ok && kk == k {
				name = n
			} else {
				name = strings.TrimSuffix(base, exeSuffix)
			}
		}
		return path, name, nil
	}
	if name == "" {
		return "", "", errors.New("backend: set Name (looked up as " + BinaryName(k, "NAME") + " in the backends directory) or Path")
	}
	p, err := Find(Dir(dir), k, name)
	if err != nil {
		return "", "", err
	}
	return p, name, nil
}
