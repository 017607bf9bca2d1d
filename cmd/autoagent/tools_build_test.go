package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestToolsBuild(t *testing.T) {
	if _, err := exec.LookPath("clang"); err != nil {
		t.Skip("clang is not installed (run `make deps`)")
	}
	out := filepath.Join(t.TempDir(), "wc.wasm")
	var stdout, stderr bytes.Buffer
	code := run([]string{"tools", "build", "../../pdk/conformance/c", "-o", out}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), out) || !strings.Contains(stdout.String(), "(C, ") {
		t.Errorf("stdout = %q, want the output path and the language", stdout.String())
	}
	if !strings.Contains(stderr.String(), "building") {
		t.Errorf("stderr = %q, want a progress line", stderr.String())
	}
	if b, err := os.ReadFile(out); err != nil || !bytes.HasPrefix(b, []byte("\x00asm")) {
		t.Errorf("%s is not a module: %v", out, err)
	}
}

func TestToolsBuildErrors(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"tools", "build"}, 2, "accepts 1 arg"},
		{[]string{"tools", "build", notes}, 2, "cannot tell the language"},
		{[]string{"tools", "build", filepath.Join(dir, "missing")}, 1, "no such file"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c.args, nil, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr.String(), c.code, c.want)
		}
	}
}
