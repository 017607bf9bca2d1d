package host

import (
	"os"
	"path/filepath"
)

// artifacts is the host's own disk cache beside wazero's compiled code:
// what a new process would otherwise recompute for every large module
// before it is ready: the module's bytes after the rewrite, and its
// describe document. Both depend only on the module's bytes (describe runs
// with no capabilities, a fixed clock and a seeded generator whatever the
// host's options) and the
// limits it ran under, which the keys hold. Files are written to a
// temporary name and renamed, so concurrent processes never see half of
// one; anything unreadable is recomputed. The directory is trusted as
// wazero's cache is: whoever can write it can already plant machine code.
type artifacts struct{ dir string } // "" when the cache is in memory only

// artifactMinSize is the smallest module worth caching for: below it,
// recomputing costs less than a file.
const artifactMinSize = 256 << 10

// Versions of what is cached, in the keys: a change to validation, to the
// rewrite or to how describe runs must not reuse old files (bump it with
// any such change; the module limits are in the key apart).
const (
	rewriteVersion  = "r8"
	describeVersion = "d2"
)

func (a artifacts) path(kind, key string) string { return filepath.Join(a.dir, kind, key) }

// get returns the cached artifact, or nil.
func (a artifacts) get(kind, key string) []byte {
	if a.dir == "" {
		return nil
	}
	b, err := os.ReadFile(a.path(kind, key))
	if err != nil {
		return nil
	}
	return b
}

// put stores an artifact; failing to is not an error (it is a cache).
func (a artifacts) put(kind, key string, b []byte) {
	if a.dir == "" {
		return
	}
	dir := filepath.Join(a.dir, kind)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), a.path(kind, key)) != nil {
		_ = os.Remove(f.Name())
	}
}
