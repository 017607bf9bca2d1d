package oci

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/sigstoretest"
)

// TestKeySignedBundle: cosign v3's `cosign sign --key` attaches a Sigstore
// bundle naming a key; it verifies with the key the signers file trusts
// for the reference, as a signature at the .sig tag does, and each way it
// can be wrong is refused with its own message, nothing written.
func TestKeySignedBundle(t *testing.T) {
	f := newKeylessFixture(t)
	ctx := context.Background()
	dir := t.TempDir()
	alice, alicePub := keyPair(t, dir, "alice")
	bob, bobPub := keyPair(t, dir, "bob")
	carol, _ := keyPair(t, t.TempDir(), "carol")
	trust := writeSigners(t, dir,
		Signer{Name: "alice", Key: alicePub, References: []string{f.host + "/tools/*"}},
		Signer{Name: "bob", Key: bobPub, References: []string{f.host + "/other/thing"}})
	repo := f.host + "/tools/echo"

	ref, d := f.push(t, "key-ok", "key-ok")
	f.attach(t, d, sigstoretest.SignWithKey(t, alice, sigstoretest.Statement(repo, d)))
	art, signer, sig, _, err := PullVerified(ctx, f.c, trust, ref, false)
	if err != nil {
		t.Fatalf("a module alice's key signed as a bundle: %v", err)
	}
	if signer.Name != "alice" || !strings.HasPrefix(signer.Identity(), "alice (key sha256:") || sig == nil || sig.Bundle == nil {
		t.Fatalf("signer %q (bundle kept: %v)", signer.Identity(), sig != nil && sig.Bundle != nil)
	}
	plugins := t.TempDir()
	if _, err := Install(plugins, "echo", art, signer, sig, false); err != nil {
		t.Fatal(err)
	}
	rec, err := ReadRecord(filepath.Join(plugins, "echo.wasm"), art.SHA256)
	if err != nil || rec == nil {
		t.Fatalf("record: %v %v", rec, err)
	}
	if err := trust.VerifyRecord(rec); err != nil {
		t.Fatalf("re-checking the recorded key-signed bundle: %v", err)
	}
	// The record of it, moved to another digest, does not verify.
	moved := *rec
	moved.Digest = "sha256:" + strings.Repeat("0", 64)
	if err := trust.VerifyRecord(&moved); err == nil {
		t.Fatal("a record of another digest verified")
	}

	_, signedDigest := f.push(t, "key-signed", "key-signed")
	cases := []struct {
		name  string
		setup func(d string) string // returns what the message must say
		want  error
	}{
		{"bundle for another digest", func(d string) string {
			f.attach(t, d, sigstoretest.SignWithKey(t, alice, sigstoretest.Statement(repo, signedDigest)))
			return "signed " + signedDigest
		}, ErrOtherDigest},
		{"signed by a key trusted elsewhere", func(d string) string {
			f.attach(t, d, sigstoretest.SignWithKey(t, bob, sigstoretest.Statement(repo, d)))
			return "trusts that key only for " + f.host + "/other/thing"
		}, ErrSignerNotForReference},
		{"signed by an unknown key", func(d string) string {
			f.attach(t, d, sigstoretest.SignWithKey(t, carol, sigstoretest.Statement(repo, d)))
			return "verifies its key-signed Sigstore bundle"
		}, ErrBadSignature},
		{"statement changed after signing", func(d string) string {
			b := sigstoretest.SignWithKey(t, alice, sigstoretest.Statement(repo, d))
			f.attach(t, d, flipPayloadByte(t, b))
			return "verifies its key-signed Sigstore bundle"
		}, ErrBadSignature},
		{"an attestation, not a signature", func(d string) string {
			st := bytes.Replace(sigstoretest.Statement(repo, d), []byte("https://sigstore.dev/cosign/sign/v1"), []byte("https://slsa.dev/provenance/v1"), 1)
			f.attach(t, d, sigstoretest.SignWithKey(t, alice, st))
			return "predicate is https://slsa.dev/provenance/v1"
		}, ErrBadSignature},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ref, d := f.push(t, "keycase"+string(rune('a'+i)), "keycase"+tc.name)
			say := tc.setup(d)
			before, _ := os.ReadDir(plugins)
			art, signer, sig, _, err := PullVerified(ctx, f.c, trust, ref, false)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), say) {
				t.Fatalf("err = %v, want %v saying %q", err, tc.want, say)
			}
			if art != nil || signer != nil || sig != nil {
				t.Fatal("a refused pull returned the artifact")
			}
			if after, _ := os.ReadDir(plugins); len(after) != len(before) {
				t.Fatal("a refused pull changed the plugins directory")
			}
		})
	}
}
