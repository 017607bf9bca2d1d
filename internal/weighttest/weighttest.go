// Package weighttest weighs a program for its test: how many packages it
// links, how large it builds, and that it links none of what it must not.
//
//	weighttest.Check(t, weighttest.Limits{Packages: 200, Bytes: 15_000_000, Forbidden: []string{"net/http"}})
package weighttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Limits are what the program in the test's directory may weigh.
type Limits struct {
	Packages  int      // go list -deps, the program included
	Bytes     int64    // the built binary
	Forbidden []string // packages or module paths, each with what is under it
}

// Check weighs the program in the current directory against l, builds it
// once (the go command caches the build) and logs what it weighs.
func Check(t testing.TB, l Limits) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) > l.Packages {
		t.Errorf("the program links %d packages, above %d: see what the root imports (go list -deps)", len(pkgs), l.Packages)
	}
	for _, p := range pkgs {
		for _, f := range l.Forbidden {
			if p == f || strings.HasPrefix(p, f+"/") {
				t.Errorf("the program links %s: it comes in through an interface, from the package that owns it", p)
			}
		}
	}
	bin := filepath.Join(t.TempDir(), "program")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > l.Bytes {
		t.Errorf("the program is %d bytes (%.1f MiB), above %d: see what the root imports (go list -deps)", fi.Size(), float64(fi.Size())/(1<<20), l.Bytes)
	}
	t.Logf("the program: %d packages, %.1f MiB", len(pkgs), float64(fi.Size())/(1<<20))
}
