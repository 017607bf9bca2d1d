package testcache

import (
	"os"
	"path/filepath"
	"testing"
)

// A second run sees the machine code the first compiled, in the top
// directory and in a deadline mode's subdirectory, and none of the other
// artifacts it left.
func TestKeepsOnlyCompiledCode(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	sum := filepath.Join(t.TempDir(), "go.sum")
	if err := os.WriteFile(sum, []byte("github.com/tetratelabs/wazero v1.12.0 h1:x=\ngithub.com/tetratelabs/wazero v1.12.0/go.mod h1:y=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	first, err := Open(sum, "t")
	if err != nil {
		t.Fatal(err)
	}
	write := func(rel string) {
		t.Helper()
		p := filepath.Join(first.Dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rel), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("wazero-dev-amd64-linux/code")
	write("no-checks/wazero-dev-amd64-linux/code")
	write("prepared/module")
	write("describe/module")
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(first.Dir); !os.IsNotExist(err) {
		t.Errorf("the first run's directory is still there: %v", err)
	}

	second, err := Open(sum, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	for _, rel := range []string{"wazero-dev-amd64-linux/code", "no-checks/wazero-dev-amd64-linux/code"} {
		if b, err := os.ReadFile(filepath.Join(second.Dir, rel)); err != nil || string(b) != rel {
			t.Errorf("%s: %q, %v: the compiled code was not kept", rel, b, err)
		}
	}
	for _, rel := range []string{"prepared/module", "describe/module"} {
		if _, err := os.Stat(filepath.Join(second.Dir, rel)); !os.IsNotExist(err) {
			t.Errorf("%s reached the second run (%v)", rel, err)
		}
	}
	// Code the second run compiles into a kept directory is kept too.
	if err := os.WriteFile(filepath.Join(second.Dir, "wazero-dev-amd64-linux", "more"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(second.kept, "wazero-dev-amd64-linux", "more")); err != nil {
		t.Errorf("the link does not lead to the kept directory: %v", err)
	}
}

// Without a go.sum naming wazero nothing is kept, and the directory is
// still usable and removed at the end.
func TestWithoutGoSum(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	c, err := Open(filepath.Join(t.TempDir(), "absent"), "t")
	if err != nil {
		t.Fatal(err)
	}
	if c.kept != "" {
		t.Errorf("kept %q without a wazero version", c.kept)
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("not removed: %v", err)
	}
}
