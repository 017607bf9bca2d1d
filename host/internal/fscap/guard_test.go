package fscap

import (
	"os"
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// mounted returns a writable mount of a fresh directory holding a
// protected policy.json, guarded as the host guards it.
func mounted(t *testing.T) (*rootFS, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "policy.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tool.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return &rootFS{root: root, guard: NewGuard([]string{filepath.Join(dir, "policy.json")})}, dir
}

// The file system interface refuses what WASI preview 1 cannot ask for
// today but the interface can: setting an execute bit on a file (a
// directory needs one), creating a file with one, changing a protected
// file's mode or times.
func TestGuardChmodAndCreate(t *testing.T) {
	r, dir := mounted(t)
	if e := r.Chmod("tool.sh", 0o644); e != 0 {
		t.Errorf("chmod 0644 of a file: %v", e)
	}
	if e := r.Chmod("tool.sh", 0o755); e != experimentalsys.EPERM {
		t.Errorf("chmod 0755 of a file: %v, want EPERM", e)
	}
	if e := r.Chmod("sub", 0o700); e != 0 {
		t.Errorf("chmod 0700 of a directory: %v", e)
	}
	if e := r.Chmod("policy.json", 0o600); e != experimentalsys.EPERM {
		t.Errorf("chmod of a protected file: %v, want EPERM", e)
	}
	if e := r.Utimens("policy.json", 0, 0); e != experimentalsys.EPERM {
		t.Errorf("utimens of a protected file: %v, want EPERM", e)
	}
	f, e := r.OpenFile("new.sh", experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o777)
	if e != 0 {
		t.Fatal(e)
	}
	f.Close()
	if fi, err := os.Stat(filepath.Join(dir, "new.sh")); err != nil || fi.Mode().Perm()&0o111 != 0 {
		t.Errorf("a file made with mode 0777: %v %v, want no execute bit", fi.Mode(), err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "policy.json")); fi.Mode().Perm() != 0o644 {
		t.Errorf("policy.json's mode changed: %v", fi.Mode())
	}
}

// O_TRUNC is applied after the checks, to the file they passed: a
// truncating open of a protected or executable file leaves it whole.
func TestGuardTruncatesAfterChecks(t *testing.T) {
	r, dir := mounted(t)
	for _, name := range []string{"policy.json", "tool.sh"} {
		if _, e := r.OpenFile(name, experimentalsys.O_WRONLY|experimentalsys.O_TRUNC, 0); e != experimentalsys.EACCES {
			t.Errorf("truncating open of %s: %v, want EACCES", name, e)
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s was truncated: %v", name, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "plain.txt"), []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, e := r.OpenFile("plain.txt", experimentalsys.O_WRONLY|experimentalsys.O_TRUNC, 0)
	if e != 0 {
		t.Fatal(e)
	}
	f.Close()
	if fi, _ := os.Stat(filepath.Join(dir, "plain.txt")); fi.Size() != 0 {
		t.Errorf("an ordinary file was not truncated: %d bytes", fi.Size())
	}
}
