package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/host/internal/fscap"
	"github.com/autoagent-go/autoagent/manifest"
)

// fsDirs makes a granted directory holding a file, a sub-directory, and
// symlinks that point inside and outside it, plus a secret outside it.
func fsDirs(t *testing.T) (granted, secret string) {
	t.Helper()
	base := t.TempDir()
	granted = filepath.Join(base, "granted")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{granted, filepath.Join(granted, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret = filepath.Join(outside, "secret.txt")
	for p, s := range map[string]string{
		filepath.Join(granted, "hello.txt"):       "hello inside",
		filepath.Join(granted, "sub", "deep.txt"): "deep inside",
		secret: "TOP SECRET",
	} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(granted, "escape-abs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside/secret.txt", filepath.Join(granted, "escape-rel")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(granted, "escape-dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/deep.txt", filepath.Join(granted, "inside-link")); err != nil {
		t.Fatal(err)
	}
	return granted, secret
}

func TestFSRead(t *testing.T) {
	t.Parallel()
	granted, secret := fsDirs(t)
	h, rec := newTestHost(t, Options{})
	l := load(t, h, "wasicmd.wasm", Module{Grants: grants(t, "fs.read:"+granted)})

	ok := map[string]string{
		filepath.Join(granted, "hello.txt"):       "hello inside",
		filepath.Join(granted, "sub", "deep.txt"): "deep inside",
		filepath.Join(granted, "inside-link"):     "deep inside",
		granted + "/sub/../hello.txt":             "hello inside",
	}
	for p, want := range ok {
		if res := call(t, l, "readfile", `{"path":"`+p+`"}`); res.IsError || res.Text() != want {
			t.Errorf("readfile %s = %+v, want %q", p, res, want)
		}
	}
	refused := map[string]string{
		"outside the preopen":   secret,
		"etc":                   "/etc/passwd",
		"dot-dot escape":        granted + "/../outside/secret.txt",
		"dot-dot from a subdir": granted + "/sub/../../outside/secret.txt",
		"absolute symlink":      filepath.Join(granted, "escape-abs"),
		"relative symlink":      filepath.Join(granted, "escape-rel"),
		"symlinked directory":   filepath.Join(granted, "escape-dir", "secret.txt"),
	}
	for name, p := range refused {
		res := call(t, l, "readfile", `{"path":"`+p+`"}`)
		if !res.IsError || !strings.HasPrefix(res.Text(), "open "+p+": ") || strings.Contains(res.Text(), "TOP SECRET") {
			t.Errorf("%s: readfile %s = %+v, want an open error", name, p, res)
		}
		// The guest saw a failing open and reported it: the tool ran.
		if r := rec.last(t); r.Outcome != OutcomeToolError {
			t.Errorf("%s: outcome %s", name, r.Outcome)
		}
	}
	// The refusals leave the module and the host serving.
	if res := call(t, l, "readfile", `{"path":"`+filepath.Join(granted, "hello.txt")+`"}`); res.IsError || res.Text() != "hello inside" {
		t.Errorf("readfile after the refusals = %+v", res)
	}
	mustEcho(t, h)
	if res := call(t, l, "listdir", `{"path":"`+granted+`"}`); res.IsError || !strings.Contains(res.Text(), "hello.txt") {
		t.Errorf("listdir = %+v", res)
	}
	// Read-only: writing is refused, the file is untouched.
	p := filepath.Join(granted, "hello.txt")
	if res := call(t, l, "writefile", `{"path":"`+p+`","text":"overwritten"}`); !res.IsError {
		t.Errorf("writefile on a read-only grant = %+v", res)
	}
	if b, _ := os.ReadFile(p); string(b) != "hello inside" {
		t.Errorf("the read-only file now holds %q", b)
	}
	if res := call(t, l, "writefile", `{"path":"`+granted+`/new.txt","text":"x"}`); !res.IsError {
		t.Errorf("creating a file on a read-only grant = %+v", res)
	}
}

func TestFSWrite(t *testing.T) {
	t.Parallel()
	granted, secret := fsDirs(t)
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "wasicmd.wasm", Module{Grants: grants(t, "fs.write:"+granted)})
	p := filepath.Join(granted, "out.txt")
	if res := call(t, l, "writefile", `{"path":"`+p+`","text":"written by the guest"}`); res.IsError {
		t.Fatalf("writefile = %+v", res)
	}
	if b, _ := os.ReadFile(p); string(b) != "written by the guest" {
		t.Fatalf("file holds %q", b)
	}
	// Writing through an escaping symlink or .. must not touch the secret.
	for _, p := range []string{filepath.Join(granted, "escape-abs"), filepath.Join(granted, "escape-rel"), granted + "/../outside/secret.txt"} {
		if res := call(t, l, "writefile", `{"path":"`+p+`","text":"pwned"}`); !res.IsError {
			t.Errorf("writefile %s = %+v, want an error", p, res)
		}
	}
	// A guest cannot plant a symlink at all: one pointing inside could be
	// moved to resolve outside (see fscap's rootFS.Symlink).
	for _, target := range []string{secret, "../outside/secret.txt", "sub/../../outside", "sub/deep.txt", "."} {
		res := call(t, l, "symlink", `{"target":"`+target+`","path":"`+granted+`/planted"}`)
		if !res.IsError || !strings.Contains(res.Text(), "Operation not permitted") {
			t.Errorf("symlink to %s = %+v, want EPERM", target, res)
		}
	}
	if _, err := os.Lstat(filepath.Join(granted, "planted")); !os.IsNotExist(err) {
		t.Errorf("a link was planted: %v", err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "TOP SECRET" {
		t.Fatalf("the secret was changed to %q", b)
	}
	mustEcho(t, h)
}

func TestFSNoGrant(t *testing.T) {
	t.Parallel()
	granted, _ := fsDirs(t)
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "wasicmd.wasm", Module{})
	res := call(t, l, "readfile", `{"path":"`+filepath.Join(granted, "hello.txt")+`"}`)
	if !res.IsError || strings.Contains(res.Text(), "hello inside") {
		t.Fatalf("readfile without a grant = %+v", res)
	}
}

func TestFSGrantMissingDirectory(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	_, err := h.Load(t.Context(), Module{Name: "wasicmd", Bytes: wasmFile(t, "wasicmd.wasm"),
		Grants: grants(t, "fs.read:/does/not/exist")})
	if err == nil || !strings.Contains(err.Error(), "grant fs.read:/does/not/exist") {
		t.Fatalf("error = %v", err)
	}
}

// TestFSPathTooLong: a path past fscap.MaxPath is refused with ENAMETOOLONG
// before os.Root resolves it (one component at a time, outside every
// deadline); one within it resolves as usual.
func TestFSPathTooLong(t *testing.T) {
	t.Parallel()
	granted, _ := fsDirs(t)
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "wasicmd.wasm", Module{Grants: grants(t, "fs.write:"+granted)})
	long := granted + "/" + strings.Repeat("sub/", fscap.MaxPath/4) + "deep.txt"
	for _, tool := range []string{"readfile", "listdir"} {
		res := call(t, l, tool, `{"path":"`+long+`"}`)
		if !res.IsError || !strings.Contains(strings.ToLower(res.Text()), "too long") {
			t.Errorf("%s of a %d-byte path = %.200s, want a name too long", tool, len(long), tail(res.Text(), 120))
		}
	}
	if res := call(t, l, "writefile", `{"path":"`+long+`","text":"x"}`); !res.IsError || !strings.Contains(strings.ToLower(res.Text()), "too long") {
		t.Errorf("writefile of a %d-byte path = %.200s, want a name too long", len(long), tail(res.Text(), 120))
	}
	ok := granted + "/" + strings.Repeat("sub/../", 100) + "sub/deep.txt"
	if res := call(t, l, "readfile", `{"path":"`+ok+`"}`); res.IsError || res.Text() != "deep inside" {
		t.Errorf("readfile of a %d-byte path = %+v", len(ok), res)
	}
}

// TestGrantsMayNotReachTheHostsDirectories: a module whose fs grant
// reaches the host's cache of compiled code (to write) or the kv stores
// (at all) does not load, whatever its approval says: it could put
// machine code in the host, or read and change every module's data (found
// by attacking our own sandbox, with the plugins directory: see
// plugindir's TestGrantsMayNotReachThePluginsDirectory).
func TestGrantsMayNotReachTheHostsDirectories(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	kv, cache := filepath.Join(root, "data", "kv"), filepath.Join(root, "cache")
	h, _ := newTestHost(t, Options{KVDir: kv, CacheDir: cache})
	b := wasmFile(t, "echo.wasm")
	for spec, refused := range map[string]string{
		"fs.write:" + root:                        "reaches " + cache,
		"fs.write:" + filepath.Join(root, "data"): "reaches " + kv + ", the kv stores",
		"fs.read:" + filepath.Join(root, "data"):  "the kv stores",
		"fs.write:" + cache:                       "the host's cache of compiled modules",
		"fs.read:" + cache:                        "",
	} {
		if err := os.MkdirAll(strings.TrimPrefix(strings.TrimPrefix(spec, "fs.write:"), "fs.read:"), 0o700); err != nil {
			t.Fatal(err)
		}
		_, err := h.Load(t.Context(), Module{Name: "m", Bytes: b, Grants: grants(t, spec)})
		var pe *manifest.ProtectedError
		switch {
		case refused == "" && err != nil:
			t.Errorf("%s: %v", spec, err)
		case refused != "" && (!errors.As(err, &pe) || !strings.Contains(err.Error(), refused)):
			t.Errorf("%s: %v, want it refused: %q", spec, err, refused)
		}
	}
}
