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

// TestToolsBuildGoWithoutModule builds the Go tutorial's main.go copied
// alone into a directory outside any module.
func TestToolsBuildGoWithoutModule(t *testing.T) {
	t.Setenv("AUTOAGENT_PDK", "")
	src, err := os.ReadFile("../../pdk/conformance/go/main.go")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	main := filepath.Join(dir, "main.go")
	if err := os.WriteFile(main, src, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "wc.wasm")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"tools", "build", main, "-o", out}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), out) || !strings.Contains(stdout.String(), "(Go, ") {
		t.Errorf("stdout = %q, want the output path and the language", stdout.String())
	}
	if !strings.Contains(stderr.String(), "no go.mod") {
		t.Errorf("stderr = %q, want it to say how a source without go.mod is built", stderr.String())
	}
	if b, err := os.ReadFile(out); err != nil || !bytes.HasPrefix(b, []byte("\x00asm")) {
		t.Errorf("%s is not a module: %v", out, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the source directory holds %d entries after the build, want only main.go", len(entries))
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
