package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/manifest"
)

// governedWorkspace lays out the workspace fsgovern attacks (see its
// source) and returns it with the host's protected files.
func governedWorkspace(t *testing.T) (dir string, protected []manifest.Protected) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "workspace")
	if err := os.MkdirAll(filepath.Join(dir, "cfg"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"policy.json": `{"rules":[{"tool":"*","action":"approve"}]}`, "cfg/agent.yaml": "provider: openai\n",
		"sessions.db": "SQLite format 3", "decoy.json": "decoy",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "backend"), []byte("#!/bin/sh\necho real backend\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "policy.json"), filepath.Join(dir, "alias.json")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"policy.json", "cfg/agent.yaml", "sessions.db", "sessions.db-wal"} {
		protected = append(protected, manifest.Protected{File: filepath.Join(dir, f), What: "a file that governs the run"})
	}
	return dir, protected
}

// A module granted fs.write on a workspace holding the files that govern
// a run reaches none of them, by no name (a hard link made outside the
// sandbox, a rename, a directory moved), creates none not there yet, and
// writes no executable file nor makes one, while ordinary files stay
// writable (the red team of issue 38: write_file rewrote policy.json and a
// backend's executable, which the next run executed natively).
func TestGuestCannotReachGoverningFiles(t *testing.T) {
	t.Parallel()
	dir, protected := governedWorkspace(t)
	h, _ := newTestHost(t, Options{Protected: protected})
	l := load(t, h, "fsgovern.wasm", Module{Grants: grants(t, "fs.write:"+dir)})
	res := call(t, l, "fsgovern", `{"dir":"`+dir+`"}`)
	if res.IsError {
		t.Fatalf("fsgovern: %s", res.Text())
	}
	got := map[string]string{}
	for _, s := range strings.Split(res.Text(), "; ") {
		step, outcome, _ := strings.Cut(s, ": ")
		got[step] = outcome
	}
	for _, step := range []string{
		"write policy.json", "append policy.json", "read policy.json", "stat policy.json",
		"write alias.json", "read alias.json",
		"rename decoy.json over policy.json", "rename policy.json away", "rename alias.json away",
		"remove policy.json", "link policy.json", "link decoy.json at sessions.db-wal",
		"create sessions.db-wal", "write sessions.db", "write cfg/agent.yaml", "rename cfg", "chmod policy.json",
		"write backend",
	} {
		if o, ok := got[step]; !ok || o == "done" {
			t.Errorf("%s: %q, want it refused", step, o)
		}
	}
	for _, step := range []string{"read backend", "create run.sh", "write decoy.json"} {
		if got[step] != "done" {
			t.Errorf("%s: %q, want done", step, got[step])
		}
	}
	for name, want := range map[string]string{
		"policy.json": `{"rules":[{"tool":"*","action":"approve"}]}`, "alias.json": `{"rules":[{"tool":"*","action":"approve"}]}`,
		"cfg/agent.yaml": "provider: openai\n", "sessions.db": "SQLite format 3",
		"backend": "#!/bin/sh\necho real backend\n", "decoy.json": "pwned",
	} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s now holds %q (%v), want %q", name, b, err, want)
		}
	}
	for _, gone := range []string{"sessions.db-wal", "moved.json", "another.json", "cfg2"} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists: %v", gone, err)
		}
	}
	// WASI gives a guest no chmod (Go's wasip1 Chmod does nothing), and
	// the host makes every file without an execute bit.
	if fi, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || fi.Mode().Perm()&0o111 != 0 {
		t.Errorf("run.sh, made by the guest with mode 0755 and chmod 0755: %v %v, want no execute bit", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "backend")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("backend: %v %v", fi.Mode(), err)
	}
	mustEcho(t, h)
}

// Without protected files a workspace is the guest's, but its executables
// still are not: writing one, or making one, is refused whatever the host
// protects.
func TestGuestWritesNoExecutable(t *testing.T) {
	t.Parallel()
	dir, _ := governedWorkspace(t)
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "fsgovern.wasm", Module{Grants: grants(t, "fs.write:"+dir)})
	res := call(t, l, "fsgovern", `{"dir":"`+dir+`"}`)
	if !strings.Contains(res.Text(), "write backend: Permission denied") {
		t.Errorf("write backend not refused: %s", res.Text())
	}
	if !strings.Contains(res.Text(), "write policy.json: done") {
		t.Errorf("an unprotected policy.json: %s", res.Text())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "backend")); string(b) != "#!/bin/sh\necho real backend\n" {
		t.Errorf("backend now holds %q", b)
	}
	if fi, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || fi.Mode().Perm()&0o111 != 0 {
		t.Errorf("run.sh: %v %v, want no execute bit", fi.Mode(), err)
	}
}

// A grant naming a protected file, or a directory holding a protected
// directory, is refused at load, as for the host's own directories.
func TestGrantOfAProtectedFileRefused(t *testing.T) {
	t.Parallel()
	dir, protected := governedWorkspace(t)
	backends := filepath.Join(t.TempDir(), "backends")
	if err := os.Mkdir(backends, 0o755); err != nil {
		t.Fatal(err)
	}
	protected = append(protected, manifest.Protected{Dir: backends, What: "the backends directory", Read: true})
	h, _ := newTestHost(t, Options{Protected: protected})
	for _, spec := range []string{"fs.read:" + filepath.Join(dir, "policy.json"), "fs.read:" + backends, "fs.write:" + filepath.Dir(backends)} {
		_, err := h.Load(t.Context(), Module{Name: "m", Bytes: wasmFile(t, "echo.wasm"), Grants: grants(t, spec)})
		var pe *manifest.ProtectedError
		if !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a ProtectedError", spec, err)
		}
	}
}
