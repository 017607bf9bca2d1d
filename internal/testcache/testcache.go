// Package testcache gives a test binary a host cache directory
// (host.Options.CacheDir) in which the machine code wazero compiles is
// kept across test runs, and nothing else is.
//
//	c, err := testcache.Open("../go.sum", "host-tests")
//	if err != nil { ... }
//	defer c.Close()
//	h, err := host.New(ctx, host.Options{CacheDir: c.Dir})
//
// Compiled code is keyed by the bytes it was compiled from, so a run may
// reuse what another compiled. What else the host caches (prepared modules,
// describe documents) is keyed by versions a code change may forget to
// bump, so it starts empty in every run: a test must never pass on what an
// older or mutated build of the code left behind (it happened: the
// mutation pass left a module prepared without its limit check, and the
// next run of the real code loaded it).
package testcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Cache is one run's cache directory.
type Cache struct {
	// Dir is the directory to give the host: new and empty but for links
	// to the kept compiled code.
	Dir  string
	kept string
}

// Open creates the run's directory. The kept code is in the user's cache
// under autoagent/NAME-KEY, KEY naming the wazero version goSum requires
// (wazero's own version check sees "dev" in a test binary, so it cannot
// tell two versions' code apart). Without a user cache or a go.sum
// naming wazero, nothing is kept: the directory is only temporary.
func Open(goSum, name string) (*Cache, error) {
	dir, err := os.MkdirTemp("", "autoagent-"+name+"-")
	if err != nil {
		return nil, err
	}
	c := &Cache{Dir: dir}
	sum, err := os.ReadFile(goSum)
	if err != nil {
		return c, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return c, nil
	}
	for line := range strings.Lines(string(sum)) {
		if strings.HasPrefix(line, "github.com/tetratelabs/wazero ") && !strings.Contains(line, "/go.mod ") {
			h := sha256.Sum256([]byte(line + runtime.GOARCH))
			c.kept = filepath.Join(base, "autoagent", name+"-"+hex.EncodeToString(h[:8]))
			break
		}
	}
	if c.kept == "" || os.MkdirAll(c.kept, 0o700) != nil {
		c.kept = ""
		return c, nil
	}
	for _, rel := range compiled(c.kept) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o700); err != nil {
			return c, nil
		}
		_ = os.Symlink(filepath.Join(c.kept, rel), filepath.Join(dir, rel))
	}
	return c, nil
}

// Close keeps the code compiled for the first time in this run (moving
// it to the kept directory, unless another run kept some meanwhile) and
// removes the run's directory.
func (c *Cache) Close() error {
	if c.kept != "" {
		for _, rel := range compiled(c.Dir) {
			from, to := filepath.Join(c.Dir, rel), filepath.Join(c.kept, rel)
			if fi, err := os.Lstat(from); err != nil || !fi.IsDir() {
				continue // a link to the kept code already
			}
			if _, err := os.Lstat(to); err == nil {
				continue
			}
			if os.MkdirAll(filepath.Dir(to), 0o700) == nil {
				_ = os.Rename(from, to) // across file systems it stays a run's
			}
		}
	}
	if err := os.RemoveAll(c.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// compiled lists wazero's compiled-code directories under dir, relative
// to it: wazero-* at its top and one level down (the host's deadline
// modes have subdirectories of their own).
func compiled(dir string) []string {
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "wazero-") {
			out = append(out, e.Name())
			continue
		}
		if !e.IsDir() {
			continue
		}
		sub, _ := os.ReadDir(filepath.Join(dir, e.Name()))
		for _, s := range sub {
			if strings.HasPrefix(s.Name(), "wazero-") {
				out = append(out, filepath.Join(e.Name(), s.Name()))
			}
		}
	}
	return out
}
