package fixturetest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// missing says once per test binary, even without -v, that the
// recordings were not found and where they were looked for.
var missing sync.Once

// Dir returns the folder of recorded provider traffic, shared/fixtures/providers,
// found by walking up from the test's working directory (its package
// directory). When there is none it skips t: the recordings are not part of
// the module, and a checkout without them cannot run these tests. The
// first skip of a test binary also prints the path it looked for on
// stderr, since go test shows skips only with -v.
func Dir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("fixturetest: %v", err)
	}
	dir, ok := find(wd)
	if !ok {
		missing.Do(func() {
			fmt.Fprintf(os.Stderr, "fixturetest: no shared/fixtures/providers in %s or above it: the tests replaying recorded provider traffic skip\n", wd)
		})
		t.Skipf("recorded provider traffic not found: no shared/fixtures/providers above %s", wd)
	}
	return dir
}

// find looks for shared/fixtures/providers in from and each of its parents.
func find(from string) (string, bool) {
	for dir := from; ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "shared", "fixtures", "providers")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p, true
		}
		if filepath.Dir(dir) == dir {
			return "", false
		}
	}
}

// ReadFile returns the recording at rel (a slash-separated path below
// [Dir]), failing t when it cannot be read.
func ReadFile(t testing.TB, rel string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(Dir(t), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("fixturetest: %v", err)
	}
	return string(raw)
}
