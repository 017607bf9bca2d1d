package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/autoagent-go/autoagent/internal/sigstoretest"
)

const (
	ciIssuer  = "https://token.actions.example.com"
	ciSubject = "https://git.example.com/org/echo/.github/workflows/release.yml@refs/tags/v1"
)

// keylessFixture is a registry, a virtual Sigstore whose trusted root is
// in dir, and a signers file trusting one CI identity for tools/*.
type keylessFixture struct {
	c     *Client
	host  string
	ss    *sigstoretest.Sigstore
	dir   string
	trust *Signers
}

func newKeylessFixture(t *testing.T) *keylessFixture {
	t.Helper()
	reg := startRegistry(t)
	f := &keylessFixture{c: testClient(), host: reg.Host, ss: sigstoretest.New(t), dir: t.TempDir()}
	f.ss.WriteRoot(filepath.Join(f.dir, TrustedRootFile), false)
	f.trust = writeSigners(t, f.dir,
		Signer{Name: "ci", Keyless: &Keyless{Issuer: ciIssuer, SubjectRegexp: `https://git\.example\.com/org/echo/\.github/workflows/release\.yml@refs/tags/v.*`}, References: []string{reg.Host + "/tools/*"}},
		Signer{Name: "other-ci", Keyless: &Keyless{Issuer: ciIssuer, Subject: "https://git.example.com/org/other"}, References: []string{reg.Host + "/other/thing"}})
	return f
}

// push pushes a module at repo:tag and returns the reference and digest.
func (f *keylessFixture) push(t *testing.T, tag, seed string) (string, string) {
	t.Helper()
	ref := f.host + "/tools/echo:" + tag
	d, err := f.c.Push(context.Background(), ref, Module{File: "echo.wasm", Bytes: module(seed, 500)})
	if err != nil {
		t.Fatal(err)
	}
	return ref, d
}

// attach signs digest d as subject and attaches the bundle to the
// artifact of digest to (d itself unless copying).
func (f *keylessFixture) attach(t *testing.T, to string, bundle []byte) {
	t.Helper()
	sigstoretest.Attach(t, f.host, "tools/echo", to, bundle)
}

func TestKeylessVerifies(t *testing.T) {
	f := newKeylessFixture(t)
	ctx := context.Background()
	ref, d := f.push(t, "1.0", "a")
	f.attach(t, d, f.ss.Sign(ciSubject, ciIssuer, sigstoretest.Statement(f.host+"/tools/echo", d)))

	art, signer, sig, _, err := PullVerified(ctx, f.c, f.trust, ref, false)
	if err != nil {
		t.Fatalf("a module the trusted CI identity signed: %v", err)
	}
	want := "ci (keyless: subject " + ciSubject + ", issuer " + ciIssuer + ")"
	if signer.Name != "ci" || signer.Identity() != want || sig == nil || sig.Bundle == nil {
		t.Fatalf("signer %q, want %q (bundle kept: %v)", signer.Identity(), want, sig != nil && sig.Bundle != nil)
	}

	// Installed, the record re-verifies offline, long after the
	// certificate's ten minutes: the log's time is what counts.
	plugins := t.TempDir()
	if _, err := Install(plugins, "echo", art, signer, sig, false); err != nil {
		t.Fatal(err)
	}
	rec, err := ReadRecord(filepath.Join(plugins, "echo.wasm"), art.SHA256)
	if err != nil || rec == nil {
		t.Fatalf("record: %v %v", rec, err)
	}
	if rec.Signer != want || rec.Source().Signer != want {
		t.Fatalf("recorded signer %q, want %q", rec.Signer, want)
	}
	if err := f.trust.VerifyRecord(rec); err != nil {
		t.Fatalf("re-checking the recorded bundle: %v", err)
	}
	// A record claiming another identity for the same bundle.
	forged := *rec
	forged.Signer = "ci (keyless: subject someone-else, issuer " + ciIssuer + ")"
	if err := f.trust.VerifyRecord(&forged); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("a record naming another identity: err = %v, want ErrBadSignature", err)
	}
	// The recorded bundle's digest moved to another artifact's record.
	other := *rec
	other.Digest = "sha256:" + strings.Repeat("0", 64)
	if err := f.trust.VerifyRecord(&other); err == nil {
		t.Fatal("a record of another digest verified")
	}
}

func TestKeylessRefusals(t *testing.T) {
	f := newKeylessFixture(t)
	ctx := context.Background()
	repo := f.host + "/tools/echo"
	_, signedDigest := f.push(t, "signed", "a")
	f.attach(t, signedDigest, f.ss.Sign(ciSubject, ciIssuer, sigstoretest.Statement(repo, signedDigest)))

	cases := []struct {
		name  string
		setup func(ref, d string) string // returns what the message must say
		want  error
	}{
		{"bundle for another digest", func(ref, d string) string {
			// The signed artifact's bundle, attached to this one.
			f.attach(t, d, f.ss.Sign(ciSubject, ciIssuer, sigstoretest.Statement(repo, signedDigest)))
			return "signed " + signedDigest
		}, ErrOtherDigest},
		{"one byte of the signed statement changed", func(ref, d string) string {
			b := f.ss.Sign(ciSubject, ciIssuer, sigstoretest.Statement(repo, d))
			f.attach(t, d, flipPayloadByte(t, b))
			return "does not verify"
		}, ErrBadSignature},
		{"wrong subject", func(ref, d string) string {
			f.attach(t, d, f.ss.Sign("https://git.example.com/org/echo/.github/workflows/other.yml@refs/heads/main", ciIssuer, sigstoretest.Statement(repo, d)))
			return "was signed by subject https://git.example.com/org/echo/.github/workflows/other.yml@refs/heads/main"
		}, ErrIdentity},
		{"wrong issuer", func(ref, d string) string {
			f.attach(t, d, f.ss.Sign(ciSubject, "https://accounts.example.org", sigstoretest.Statement(repo, d)))
			return "issuer https://accounts.example.org"
		}, ErrIdentity},
		{"subject regexp matches only a part", func(ref, d string) string {
			// Unanchored, the signers' pattern would match inside this.
			evil := "https://evil.example/" + ciSubject
			f.attach(t, d, f.ss.Sign(evil, ciIssuer, sigstoretest.Statement(repo, d)))
			return "was signed by subject " + evil
		}, ErrIdentity},
		{"identity trusted elsewhere", func(ref, d string) string {
			f.attach(t, d, f.ss.Sign("https://git.example.com/org/other", ciIssuer, sigstoretest.Statement(repo, d)))
			return "trusts that identity only for " + f.host + "/other/thing"
		}, ErrSignerNotForReference},
		{"expired certificate", func(ref, d string) string {
			// Logged 30 minutes on: the certificate's ten minutes are
			// over.
			f.attach(t, d, f.ss.SignAt(ciSubject, ciIssuer, sigstoretest.Statement(repo, d), time.Now().Add(30*time.Minute)))
			return "had expired"
		}, ErrCertificate},
		{"certificate of another authority", func(ref, d string) string {
			rogue := sigstoretest.New(t)
			f.attach(t, d, rogue.Sign(ciSubject, ciIssuer, sigstoretest.Statement(repo, d)))
			return "was not issued by a certificate authority of the trusted root"
		}, ErrCertificate},
		{"mismatched certificate", func(ref, d string) string {
			// Same authority, same identity, but not the key that signed.
			b := f.ss.Sign(ciSubject, ciIssuer, sigstoretest.Statement(repo, d))
			f.attach(t, d, f.ss.SwapCertificate(b, ciSubject, ciIssuer))
			return "does not verify"
		}, ErrBadSignature},
		{"a key-signed bundle", func(ref, d string) string {
			// cosign v3 sign --key: a bundle naming a key, not a certificate.
			var b map[string]any
			if err := json.Unmarshal(f.ss.Sign(ciSubject, ciIssuer, sigstoretest.Statement(repo, d)), &b); err != nil {
				t.Fatal(err)
			}
			vm := b["verificationMaterial"].(map[string]any)
			delete(vm, "certificate")
			vm["publicKey"] = map[string]any{"hint": "a2V5"}
			raw, _ := json.Marshal(b)
			f.attach(t, d, raw)
			return "has a key-signed Sigstore bundle, and " + f.trust.Path + " trusts no key for it"
		}, ErrNoSigner},
		{"an attestation, not a signature", func(ref, d string) string {
			st := bytes.Replace(sigstoretest.Statement(repo, d), []byte("https://sigstore.dev/cosign/sign/v1"), []byte("https://slsa.dev/provenance/v1"), 1)
			f.attach(t, d, f.ss.Sign(ciSubject, ciIssuer, st))
			return "is an attestation"
		}, ErrBadSignature},
	}
	msgs := map[string]string{}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ref, d := f.push(t, "case"+string(rune('a'+i)), "case"+tc.name)
			say := tc.setup(ref, d)
			plugins := t.TempDir()
			art, signer, sig, _, err := PullVerified(ctx, f.c, f.trust, ref, false)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), say) {
				t.Fatalf("err = %v, want %v saying %q", err, tc.want, say)
			}
			if art != nil || signer != nil || sig != nil {
				t.Fatal("a refused pull returned the artifact")
			}
			if prev, dup := msgs[err.Error()]; dup {
				t.Fatalf("the same message as %q: %v", prev, err)
			}
			msgs[err.Error()] = tc.name
			t.Logf("refused: %v", err)
			ents, _ := os.ReadDir(plugins)
			if len(ents) != 0 {
				t.Fatalf("the plugins directory holds %d files after a refusal", len(ents))
			}
			// --allow-unsigned takes it, saying why it was not verified.
			a, s, _, unverified, err := PullVerified(ctx, f.c, f.trust, ref, true)
			if err != nil || a == nil || s != nil || !errors.Is(unverified, tc.want) {
				t.Fatalf("allowing unsigned: art %v signer %v unverified %v err %v", a != nil, s, unverified, err)
			}
		})
	}
}

// flipPayloadByte changes one byte of the signed statement in a bundle.
func flipPayloadByte(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b map[string]any
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	env := b["dsseEnvelope"].(map[string]any)
	p := env["payload"].(string) // base64 of the statement
	// A change inside the base64 text, away from the padding.
	i := len(p) / 2
	c := byte('A')
	if p[i] == 'A' {
		c = 'B'
	}
	env["payload"] = p[:i] + string(c) + p[i+1:]
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKeylessNeedsItsRoot: a keyless signer without a trusted root, a
// root that wants certificate transparency, and a signers file with
// no keyless signer each refuse with a message saying what to do.
func TestKeylessNeedsItsRoot(t *testing.T) {
	f := newKeylessFixture(t)
	ctx := context.Background()
	ref, d := f.push(t, "1.0", "a")
	f.attach(t, d, f.ss.Sign(ciSubject, ciIssuer, sigstoretest.Statement(f.host+"/tools/echo", d)))

	// The signers file without the root beside it.
	noRoot := t.TempDir()
	data, err := os.ReadFile(f.trust.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(noRoot, SignersFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSigners(filepath.Join(noRoot, SignersFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := PullVerified(ctx, f.c, s, ref, false); !errors.Is(err, ErrNoTrustedRoot) || !strings.Contains(err.Error(), "--trusted-root") {
		t.Fatalf("no trusted root: err = %v, want ErrNoTrustedRoot naming --trusted-root", err)
	}
	// Given explicitly, it verifies.
	if err := s.UseTrustedRoot(filepath.Join(f.dir, TrustedRootFile)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := PullVerified(ctx, f.c, s, ref, false); err != nil {
		t.Fatalf("with --trusted-root: %v", err)
	}
	// A root naming a CT log wants the certificate's timestamp from it.
	ct := filepath.Join(t.TempDir(), "ct.json")
	f.ss.WriteRoot(ct, true)
	if err := s.UseTrustedRoot(ct); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := PullVerified(ctx, f.c, s, ref, false); !errors.Is(err, ErrCertificate) || !strings.Contains(err.Error(), "certificate timestamp") {
		t.Fatalf("a certificate without SCT, a root with a CT log: err = %v, want ErrCertificate", err)
	}
	// Only key signers: the bundle is refused with what to add.
	keys := t.TempDir()
	_, pub := keyPair(t, keys, "alice")
	keyOnly := writeSigners(t, keys, Signer{Name: "alice", Key: pub, References: []string{f.host + "/tools/*"}})
	if _, _, _, _, err := PullVerified(ctx, f.c, keyOnly, ref, false); !errors.Is(err, ErrIdentity) || !strings.Contains(err.Error(), `"keyless"`) {
		t.Fatalf("key signers only: err = %v, want ErrIdentity saying to add a keyless signer", err)
	}
}

func TestSignersFileKeyless(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ body, say string }{
		{`{"version": 1, "signers": [{"name": "ci", "keyless": {"issuer": "i"}, "references": ["r.example/a"]}]}`, `"subject"`},
		{`{"version": 1, "signers": [{"name": "ci", "keyless": {"subject": "s"}, "references": ["r.example/a"]}]}`, `"issuer"`},
		{`{"version": 1, "signers": [{"name": "ci", "keyless": {"issuer": "i", "subject": "s", "subject_regexp": "s"}, "references": ["r.example/a"]}]}`, `exactly one of "subject"`},
		{`{"version": 1, "signers": [{"name": "ci", "keyless": {"issuer": "i", "subject_regexp": "("}, "references": ["r.example/a"]}]}`, "not a regular expression"},
		{`{"version": 1, "signers": [{"name": "ci", "key": "k.pub", "keyless": {"issuer": "i", "subject": "s"}, "references": ["r.example/a"]}]}`, "one of them"},
	} {
		p := filepath.Join(dir, SignersFile)
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadSigners(p); err == nil || !strings.Contains(err.Error(), tc.say) {
			t.Errorf("%s: err = %v, want it to say %s", tc.body, err, tc.say)
		}
	}
	// A trusted root that is not one.
	p := filepath.Join(dir, TrustedRootFile)
	if err := os.WriteFile(p, []byte(`{"mediaType": "nope"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTrustedRoot(p); err == nil || !strings.Contains(err.Error(), "is not a Sigstore trusted root") {
		t.Errorf("a bad trusted root: err = %v", err)
	}
}

// TestTooManyBundles: past maxSignatures bundles attached to one digest,
// the listing is refused before any is fetched.
func TestTooManyBundles(t *testing.T) {
	f := newKeylessFixture(t)
	ctx := context.Background()
	ref, d := f.push(t, "1.0", "a")
	b := f.ss.Sign(ciSubject, ciIssuer, sigstoretest.Statement(f.host+"/tools/echo", d))
	for i := range maxSignatures {
		// Each a referrer of its own: the same bundle, other bytes.
		f.attach(t, d, append(append([]byte{}, b...), bytes.Repeat([]byte(" "), i)...))
	}
	if sigs, err := f.c.Signatures(ctx, ref, d); err != nil || len(sigs) != maxSignatures {
		t.Fatalf("%d signatures: %v", len(sigs), err)
	}
	f.attach(t, d, append(append([]byte{}, b...), bytes.Repeat([]byte(" "), maxSignatures)...))
	if _, err := f.c.Signatures(ctx, ref, d); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

// TestBundleBound: a bundle padded past maxBundle (it still parses and
// verifies) is refused before it is read, so a provenance record that
// keeps it stays readable.
func TestBundleBound(t *testing.T) {
	f := newKeylessFixture(t)
	ctx := context.Background()
	ref, d := f.push(t, "1.0", "a")
	b := f.ss.Sign(ciSubject, ciIssuer, sigstoretest.Statement(f.host+"/tools/echo", d))
	f.attach(t, d, append(append([]byte{}, b...), bytes.Repeat([]byte(" "), maxBundle)...))
	if _, _, _, _, err := PullVerified(ctx, f.c, f.trust, ref, false); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

// TestLegacyKeylessSignatureSaysWhatToDo: a keyless signature in
// cosign's older format (a certificate annotation at the .sig tag) is
// not verified, and the refusal says how to get one that is.
func TestLegacyKeylessSignatureSaysWhatToDo(t *testing.T) {
	f := newKeylessFixture(t)
	ctx := context.Background()
	ref, d := f.push(t, "1.0", "a")
	r, _ := ParseReference(ref)
	repo, err := f.c.repository(r)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"critical":{"identity":{"docker-reference":"x"},"image":{"docker-manifest-digest":"` + d + `"},"type":"cosign container image signature"},"optional":null}`)
	layer := content.NewDescriptorFromBytes(mediaTypeSimpleSigning, body)
	layer.Annotations = map[string]string{annotationSignature: b64([]byte("not a key's signature")), annotationCertificate: "-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n"}
	cfg := content.NewDescriptorFromBytes(ocispec.MediaTypeImageConfig, []byte(`{}`))
	man, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest, Config: cfg, Layers: []ocispec.Descriptor{layer}})
	if err := repo.Push(ctx, cfg, bytes.NewReader([]byte(`{}`))); err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, layer, bytes.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	if err := repo.PushReference(ctx, content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, man), bytes.NewReader(man), sigTag(d)); err != nil {
		t.Fatal(err)
	}
	_, _, _, _, err = PullVerified(ctx, f.c, f.trust, ref, false)
	if !errors.Is(err, ErrBadSignature) || !strings.Contains(err.Error(), "--new-bundle-format") {
		t.Fatalf("err = %v, want ErrBadSignature saying how to sign in the bundle format", err)
	}
}

// TestKeylessIdentityNotRecordable: a certificate identity that provenance
// could not record (a control character in it) is refused at the pull,
// even by a pattern loose enough to match it.
func TestKeylessIdentityNotRecordable(t *testing.T) {
	f := newKeylessFixture(t)
	loose := writeSigners(t, f.dir, Signer{Name: "any", Keyless: &Keyless{Issuer: ciIssuer, SubjectRegexp: `(?s)ci@example\.com.*`}, References: []string{f.host + "/tools/*"}})
	ref, d := f.push(t, "1.0", "a")
	f.attach(t, d, f.ss.Sign("ci@example.com\nsigner: someone else", ciIssuer, sigstoretest.Statement(f.host+"/tools/echo", d)))
	_, _, _, _, err := PullVerified(context.Background(), f.c, loose, ref, false)
	if !errors.Is(err, ErrIdentity) || !strings.Contains(err.Error(), "control characters") {
		t.Fatalf("err = %v, want ErrIdentity about control characters", err)
	}
}
