package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTableIsCurrent: every mutation's text occurs exactly once in its
// file, and its test pattern names at least one test of its package, so
// code that moves or changes under a mutation fails `go test` at once
// instead of leaving the table testing nothing until someone runs it.
func TestTableIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	names := map[string]bool{}
	for _, m := range mutations {
		if names[m.name] {
			t.Errorf("two mutations are named %q", m.name)
		}
		names[m.name] = true
		b, err := os.ReadFile(filepath.Join(root, m.file))
		if err != nil {
			t.Errorf("%s: %v", m.name, err)
			continue
		}
		if n := bytes.Count(b, []byte(m.old)); n != 1 {
			t.Errorf("%s: %s holds the mutated text %d times, want once: update the mutation", m.name, m.file, n)
		}
		if !testsMatch(t, filepath.Join(root, m.pkg), m.run) {
			t.Errorf("%s: no test of %s matches %q", m.name, m.pkg, m.run)
		}
	}
}

var testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w+)\(`)

// testsMatch reports whether a test or fuzz function of the package in dir has a
// name run's top-level pattern matches (a pattern's part after / names
// subtests, which only running can list).
func testsMatch(t *testing.T, dir, run string) bool {
	t.Helper()
	top := strings.Split(run, "/")[0]
	re, err := regexp.Compile(top)
	if err != nil {
		t.Errorf("pattern %q: %v", run, err)
		return false
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range testFunc.FindAllSubmatch(b, -1) {
			if re.Match(m[1]) {
				return true
			}
		}
	}
	return false
}
