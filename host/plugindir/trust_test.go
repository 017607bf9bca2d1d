package plugindir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/manifest"
)

// trusting is a trust store of the test's own, outside the plugins
// directory.
func trusting(t *testing.T) *manifest.TrustStore {
	t.Helper()
	return &manifest.TrustStore{Path: filepath.Join(t.TempDir(), "trust.json")}
}

// contentSum is the sha256 of the manifest file as it is now.
func (e *pdEnv) contentSum() string {
	e.t.Helper()
	b, err := os.ReadFile(e.store.Path)
	if err != nil {
		e.t.Fatal(err)
	}
	return manifest.Sum(b)
}

// With Options.Trust, a manifest's approvals count only while the store
// trusts its exact content: a checkout's manifest approving its own
// modules (env: secrets, net:) leaves them pending, quarantined with no
// grants under Quarantine, and the snapshot says why once (the red team of
// issue 38: the working directory decided what was trusted).
func TestUntrustedManifestApprovesNothing(t *testing.T) {
	ctx := context.Background()
	e := newPDEnv(t)
	e.put("alpha.wasm", waTextModule("from alpha", "a"), waSidecar(nil, "alpha_one"))
	e.approve("alpha.wasm", manifest.Limits{}, "env:GREETING")
	ts := trusting(t)

	d := e.open(Options{Trust: ts})
	s := d.Snapshot()
	if got := statuses(s); got["alpha.wasm"] != StatusPending {
		t.Fatalf("an untrusted manifest's module: %v", got)
	}
	if !errors.Is(s.Untrusted, manifest.ErrUntrusted) || s.Ignored != 1 {
		t.Fatalf("Untrusted = %v, Ignored = %d", s.Untrusted, s.Ignored)
	}
	p, _ := s.Plugin("alpha")
	if !errors.Is(p.Err, ErrNotApproved) || !errors.Is(p.Err, manifest.ErrUntrusted) || !strings.Contains(p.Err.Error(), "tools trust --manifest") {
		t.Errorf("the pending plugin's reason: %v", p.Err)
	}
	if len(d.Tools()) != 0 {
		t.Errorf("tools of an untrusted manifest are served: %v", toolNames(d.Tools()))
	}

	q := e.open(Options{Trust: ts, Quarantine: true}).Snapshot()
	if p, _ := q.Plugin("alpha"); p.Status != StatusQuarantined || p.Loaded == nil || len(p.Loaded.Grants()) != 0 {
		t.Errorf("quarantine of an untrusted manifest's module: %s %v", p.Status, p.Err)
	}

	// Trusting the exact content makes the approvals count; the watch
	// reloads when the trust store changes.
	w, _ := startWatch(t, d)
	if _, err := ts.Trust(ctx, e.store.Path, e.contentSum(), "test", manifest.TrustByReview); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the trusted module to load", func() bool { return answer(t, d, "alpha_one") == "from alpha" })
	if s := d.Snapshot(); s.Untrusted != nil {
		t.Errorf("trusted: Untrusted = %v", s.Untrusted)
	}
	// One byte of the manifest changed by someone else: untrusted again.
	b, err := os.ReadFile(e.store.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.store.Path, append(b, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the changed manifest's module to drop", func() bool { return answer(t, d, "alpha_one") == "<absent>" })
	if err := d.Snapshot().Untrusted; err == nil || !strings.Contains(err.Error(), "changed since you trusted it") {
		t.Errorf("changed: %v", err)
	}
	if errs := w.errors(); len(errs) > 0 {
		t.Errorf("watch errors: %v", errs)
	}
}

// A manifest with no approvals needs no trust, and a trust store the
// checkout could have written (beside the manifest) is an error, never a
// silent trust.
func TestTrustStoreEdgeCases(t *testing.T) {
	e := newPDEnv(t)
	e.put("alpha.wasm", waTextModule("from alpha", "a"), waSidecar(nil, "alpha_one"))
	if s := e.open(Options{Trust: trusting(t)}).Snapshot(); s.Untrusted != nil {
		t.Errorf("no manifest: Untrusted = %v", s.Untrusted)
	}
	e.approve("alpha.wasm", manifest.Limits{})
	planted := &manifest.TrustStore{Path: filepath.Join(e.dir, "trust.json")}
	if _, err := Open(context.Background(), e.h, Options{Dir: e.dir, Trust: planted}); err == nil || !strings.Contains(err.Error(), "refusing the trust store") {
		t.Errorf("a trust store in the plugins directory: %v", err)
	}
	// Nil Trust: the program named its manifest.
	if got := toolNames(e.open(Options{}).Tools()); !slices.Equal(got, []string{"alpha_one"}) {
		t.Errorf("without Trust: %v", got)
	}
}
