package backend

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseBinaryName(t *testing.T) {
	tests := []struct {
		file string
		kind Kind
		name string
		ok   bool
	}{
		{"autoagent-provider-http", KindProvider, "http", true},
		{"autoagent-memory-sqlite", KindMemory, "sqlite", true},
		{"autoagent-memory-my_store.v2", KindMemory, "my_store.v2", true},
		{"autoagent-provider-", "", "", false},
		{"autoagent-provider-Bad", "", "", false},
		{"autoagent-tool-x", "", "", false},
		{"autoagent", "", "", false},
		{"provider-http", "", "", false},
	}
	for _, tt := range tests {
		k, n, ok := ParseBinaryName(tt.file)
		if k != tt.kind || n != tt.name || ok != tt.ok {
			t.Errorf("ParseBinaryName(%q) = %q, %q, %v; want %q, %q, %v", tt.file, k, n, ok, tt.kind, tt.name, tt.ok)
		}
		if tt.ok && BinaryName(k, n) != tt.file {
			t.Errorf("BinaryName(%q, %q) = %q", k, n, BinaryName(k, n))
		}
	}
}

func writeFile(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
}

func TestListAndFind(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "autoagent-provider-http"), 0o755)
	writeFile(t, filepath.Join(dir, "autoagent-memory-sqlite"), 0o755)
	writeFile(t, filepath.Join(dir, "autoagent-provider-noexec"), 0o644)
	writeFile(t, filepath.Join(dir, "README"), 0o755)
	if err := os.Mkdir(filepath.Join(dir, "autoagent-provider-adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "autoagent-provider-http"), filepath.Join(dir, "autoagent-provider-openai")); err != nil {
		t.Fatal(err)
	}
	got, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Found{
		{KindMemory, "sqlite", filepath.Join(dir, "autoagent-memory-sqlite")},
		{KindProvider, "http", filepath.Join(dir, "autoagent-provider-http")},
		{KindProvider, "openai", filepath.Join(dir, "autoagent-provider-openai")},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("List (-want +got):\n%s", d)
	}
	if p, err := Find(dir, KindProvider, "openai"); err != nil || p != want[2].Path {
		t.Errorf("Find openai = %q, %v", p, err)
	}
	_, err = Find(dir, KindProvider, "noexec")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "http, openai") {
		t.Errorf("Find noexec: %v; want ErrNotFound listing the providers there", err)
	}
	_, err = Find(filepath.Join(dir, "absent"), KindMemory, "x")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Find in a missing dir: %v", err)
	}
	if _, err := Find(dir, KindProvider, "../etc"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Find with a path in the name: %v, want an invalid-name error", err)
	}
}

func TestDirPrecedence(t *testing.T) {
	t.Setenv(DirEnv, "")
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	if got := Dir(""); got != "/cfg/autoagent/backends" {
		t.Errorf("Dir() = %q, want the user's configuration directory", got)
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got := Dir(""); got != "/home/u/.config/autoagent/backends" {
		t.Errorf("Dir() = %q, want ~/.config/autoagent/backends", got)
	}
	t.Setenv(DirEnv, "/opt/backends")
	if got := Dir(""); got != "/opt/backends" {
		t.Errorf("Dir() with $%s = %q", DirEnv, got)
	}
	if got := Dir("./mine"); got != "./mine" {
		t.Errorf("explicit Dir = %q", got)
	}
}

func TestResolve(t *testing.T) {
	p, n, err := Resolve(KindProvider, "", "", "/x/autoagent-provider-http")
	if err != nil || p != "/x/autoagent-provider-http" || n != "http" {
		t.Errorf("Resolve(path) = %q, %q, %v", p, n, err)
	}
	if _, n, _ := Resolve(KindMemory, "", "", "/x/mybin"); n != "mybin" {
		t.Errorf("name of an unconventional binary = %q", n)
	}
	if _, _, err := Resolve(KindMemory, "", "", ""); err == nil {
		t.Error("Resolve with neither name nor path succeeded")
	}
}

// A backends directory in the working directory is never searched unless
// named: a checkout shipping ./backends/autoagent-provider-NAME had it run
// natively by `--provider backend:NAME` and by `backends list` (the red
// team of issue 38). The error says how to name a directory.
func TestWorkingDirectoryBackendsNotSearched(t *testing.T) {
	checkout := t.TempDir()
	if err := os.Mkdir(filepath.Join(checkout, "backends"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkout, "backends", "autoagent-provider-evil"), []byte("#!/bin/sh\ntouch pwned\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(checkout)
	t.Setenv(DirEnv, "")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(t.TempDir(), "config"))
	_, _, err := Resolve(KindProvider, "evil", "", "")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "--backends DIR") || !strings.Contains(err.Error(), "never searched unless named") {
		t.Fatalf("Resolve from a checkout holding ./backends: %v", err)
	}
	// Named, it is the user's choice.
	if p, _, err := Resolve(KindProvider, "evil", "backends", ""); err != nil || p != filepath.Join("backends", "autoagent-provider-evil") {
		t.Errorf("a named directory: %q %v", p, err)
	}
}
