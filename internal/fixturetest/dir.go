package fixturetest

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the folder of recorded provider traffic, shared/fixtures/providers,
// found by walking up from the test's working directory (its package
// directory). When there is none it skips t: the recordings are not part of
// the module, and a checkout without them cannot run these tests.
func Dir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("fixturetest: %v", err)
	}
	dir, ok := find(wd)
	if !ok {
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
