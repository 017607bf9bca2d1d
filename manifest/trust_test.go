package manifest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newTrust(t *testing.T) *TrustStore {
	t.Helper()
	return &TrustStore{Path: filepath.Join(t.TempDir(), "config", "autoagent", "trust.json")}
}

// writeManifest writes a manifest file by hand, as a checkout brings one.
func writeManifest(t *testing.T, path, sum, file string, grants ...string) string {
	t.Helper()
	m := &Manifest{}
	gs := mustGrants(t, grants...)
	if err := m.Put(Entry{SHA256: sum, File: file, Name: NameFromFile(file), Grants: gs, ApprovedBy: "mallory", ApprovedAt: fixedNow}); err != nil {
		t.Fatal(err)
	}
	data, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return Sum(data)
}

// A manifest counts only with the exact content trusted at its path; any
// other content, or the same content at another path, is untrusted and
// says why.
func TestTrustStoreCheck(t *testing.T) {
	ctx := context.Background()
	ts := newTrust(t)
	path := filepath.Join(t.TempDir(), "plugins", "manifest.json")
	sum := writeManifest(t, path, strings.Repeat("a", 64), "x.wasm", "env:HOME")

	err := ts.Check(path, sum)
	var ue *UntrustedError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUntrusted) || ue.Trusted != nil {
		t.Fatalf("a manifest never trusted: %v", err)
	}
	if !strings.Contains(err.Error(), "autoagent tools trust --manifest "+path) {
		t.Errorf("the error does not say what to run: %v", err)
	}
	if _, err := ts.Trust(ctx, path, sum, "alice", TrustByReview); err != nil {
		t.Fatal(err)
	}
	if err := ts.Check(path, sum); err != nil {
		t.Fatalf("trusted content: %v", err)
	}
	if fi, err := os.Stat(ts.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the store's mode: %v %v", fi.Mode(), err)
	}
	// Another spelling of the same path is the same manifest.
	rel, err := filepath.Rel(mustGetwd(t), path)
	if err == nil {
		if err := ts.Check(rel, sum); err != nil {
			t.Errorf("relative spelling %s: %v", rel, err)
		}
	}
	// Other content at the path: changed since trusted.
	other := writeManifest(t, path, strings.Repeat("b", 64), "x.wasm", "env:HOME")
	err = ts.Check(path, other)
	if !errors.As(err, &ue) || ue.Trusted == nil || ue.Trusted.SHA256 != sum || !strings.Contains(err.Error(), "changed since you trusted it") {
		t.Fatalf("changed content: %v", err)
	}
	// The same content at another path: another manifest.
	elsewhere := filepath.Join(t.TempDir(), "manifest.json")
	if err := ts.Check(elsewhere, sum); !errors.Is(err, ErrUntrusted) {
		t.Errorf("trusted content at another path: %v", err)
	}
	// Untrust removes it; a second untrust says there is nothing.
	if _, err := ts.Untrust(ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := ts.Check(path, sum); !errors.Is(err, ErrUntrusted) {
		t.Errorf("after untrust: %v", err)
	}
	if _, err := ts.Untrust(ctx, path); !errors.Is(err, ErrNotTrusted) {
		t.Errorf("second untrust: %v", err)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// A link planted at a manifest's place, pointing to a manifest this user
// trusted elsewhere, is another manifest: the trust is for the place, not
// for wherever a link leads (found by attacking our own fix). Links among
// the directories above it are resolved: the same file by another route.
func TestTrustKeyLinks(t *testing.T) {
	ctx := context.Background()
	ts := newTrust(t)
	trusted := filepath.Join(t.TempDir(), "project", "plugins", "manifest.json")
	sum := writeManifest(t, trusted, strings.Repeat("a", 64), "w.wasm", "fs.write:/tmp")
	if _, err := ts.Trust(ctx, trusted, sum, "alice", TrustByReview); err != nil {
		t.Fatal(err)
	}
	checkout := filepath.Join(t.TempDir(), "checkout", "plugins")
	if err := os.MkdirAll(checkout, 0o755); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(checkout, "manifest.json")
	if err := os.Symlink(trusted, planted); err != nil {
		t.Fatal(err)
	}
	if err := ts.Check(planted, sum); !errors.Is(err, ErrUntrusted) {
		t.Errorf("a link planted at the manifest's place counts as trusted: %v", err)
	}
	viaDir := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(filepath.Dir(trusted), viaDir); err != nil {
		t.Fatal(err)
	}
	if err := ts.Check(filepath.Join(viaDir, "manifest.json"), sum); err != nil {
		t.Errorf("the trusted file through a linked directory: %v", err)
	}
}

// A trust store a checkout could have written is refused: inside the
// manifest's directory always, inside Outside (the working directory) when
// asked, and a store others may write (found by attacking our own fix:
// XDG_CONFIG_HOME pointing into the checkout).
func TestTrustStorePlace(t *testing.T) {
	ctx := context.Background()
	checkout := t.TempDir()
	path := filepath.Join(checkout, "plugins", "manifest.json")
	sum := writeManifest(t, path, strings.Repeat("a", 64), "x.wasm", "env:HOME")

	inPlugins := &TrustStore{Path: filepath.Join(checkout, "plugins", "trust.json")}
	if _, err := inPlugins.Trust(ctx, path, sum, "alice", TrustByReview); err == nil || !strings.Contains(err.Error(), "refusing the trust store") {
		t.Errorf("a store beside the manifest: %v", err)
	}
	inCheckout := &TrustStore{Path: filepath.Join(checkout, ".config", "autoagent", "trust.json"), Outside: []string{checkout}}
	if err := inCheckout.Check(path, sum); err == nil || errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "refusing the trust store") {
		t.Errorf("a store inside the working directory: %v", err)
	}

	ts := newTrust(t)
	if _, err := ts.Trust(ctx, path, sum, "alice", TrustByReview); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ts.Path, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := ts.Check(path, sum); err == nil || !strings.Contains(err.Error(), "group or others may write it") {
		t.Errorf("a store others may write: %v", err)
	}
	if err := os.Chmod(ts.Path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ts.Path, []byte("{\"version\":1,\"manifests\":[{\"manifest\":\"x\""), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ts.Check(path, sum); err == nil || errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("a corrupt store: %v", err)
	}
}

func TestDefaultTrustPath(t *testing.T) {
	t.Setenv(TrustEnv, "")
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	if p, err := DefaultTrustPath(); err != nil || p != "/cfg/autoagent/trust.json" {
		t.Errorf("XDG_CONFIG_HOME: %q %v", p, err)
	}
	t.Setenv("XDG_CONFIG_HOME", "relative/cfg")
	t.Setenv("HOME", "/home/u")
	if p, err := DefaultTrustPath(); err != nil || p != "/home/u/.config/autoagent/trust.json" {
		t.Errorf("a relative XDG_CONFIG_HOME is ignored: %q %v", p, err)
	}
	t.Setenv(TrustEnv, "trust.json")
	if _, err := DefaultTrustPath(); err == nil {
		t.Error("a relative AUTOAGENT_TRUST is accepted")
	}
	t.Setenv(TrustEnv, "/etc/../srv/trust.json")
	if p, err := DefaultTrustPath(); err != nil || p != "/srv/trust.json" {
		t.Errorf("AUTOAGENT_TRUST: %q %v", p, err)
	}
}

// A Store with Trust carries this user's trust across their own changes
// of a trusted (or empty) manifest, and never trusts what others wrote into
// an untrusted one: approving one tool into a checkout's manifest leaves
// the checkout's own approvals untrusted (found by attacking our own fix).
func TestStoreCarriesTrust(t *testing.T) {
	ctx := context.Background()
	ts := newTrust(t)
	s := newStore(t)
	s.Trust = ts
	check := func(want bool) {
		t.Helper()
		m := load(t, s)
		err := ts.Check(s.Path, m.ContentSHA256())
		if (err == nil) != want {
			t.Fatalf("trusted = %v, want %v", err == nil, want)
		}
	}
	approve(t, s, strings.Repeat("a", 64), "a.wasm", "env:HOME")
	check(true) // a new manifest: this user wrote all of it
	approve(t, s, strings.Repeat("b", 64), "b.wasm")
	check(true)
	if _, err := s.Revoke(ctx, Revocation{Target: "a", By: "alice"}); err != nil {
		t.Fatal(err)
	}
	check(true)

	// Someone else edits it: untrusted, and this user's next approval
	// does not make it trusted.
	writeManifest(t, s.Path, strings.Repeat("c", 64), "c.wasm", "env:AWS_SECRET_ACCESS_KEY", "net:*")
	check(false)
	approve(t, s, strings.Repeat("d", 64), "d.wasm")
	check(false)
	if rec, ok, err := ts.Record(s.Path); err != nil || !ok || rec.How != TrustByRevoke {
		t.Errorf("the record: %+v %v %v", rec, ok, err)
	}
}
