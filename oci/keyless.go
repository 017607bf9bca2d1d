package oci

import (
	"context"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/autoagent-go/autoagent/internal/safefile"
)

// Keyless signatures: a Sigstore bundle (a Fulcio certificate naming an
// OIDC identity, the signature, and the transparency log's proof that it
// was logged while the certificate was valid), attached to the artifact
// as an OCI referrer the way `cosign sign` (v3, or v2 with
// --new-bundle-format) attaches it, and verified offline against a
// trusted root file (RATIONALE.md, "Why keyless signatures verified
// offline against a trusted-root file?").

// TrustedRootFile is the trusted root's default name in the plugins
// directory, beside the signers file.
const TrustedRootFile = "trusted_root.json"

const (
	// mediaTypeBundle prefixes a Sigstore bundle's media type
	// (application/vnd.dev.sigstore.bundle.v0.3+json, or the older
	// application/vnd.dev.sigstore.bundle+json;version=0.2): the
	// referrer's artifact type and its layer's.
	mediaTypeBundle = "application/vnd.dev.sigstore.bundle"
	// predicateCosignSign is the predicate type of the in-toto statement
	// `cosign sign` signs: a signature of the subject, not an attestation
	// about it.
	predicateCosignSign = "https://sigstore.dev/cosign/sign/v1"
	// maxIdentity bounds a verified identity recorded as provenance (the
	// manifest's bound on a source text).
	maxIdentity = 1024
	// maxBundle bounds a Sigstore bundle (cosign's are a few KiB): it is
	// kept in the provenance record, which is read back bounded.
	maxBundle = 256 << 10
)

// Errors of keyless verification, each its own condition (errors.Is).
var (
	// ErrIdentity: the bundle verifies, but its certificate names an
	// identity (subject and issuer) no keyless signer trusts.
	ErrIdentity = errors.New("oci: the keyless signer's identity is not trusted")
	// ErrCertificate: the bundle's certificate was not issued by a
	// certificate authority of the trusted root, or was not valid (had
	// expired, or was not yet valid) when the signature was logged.
	ErrCertificate = errors.New("oci: the signing certificate does not verify")
	// ErrNoTrustedRoot: a keyless signer is trusted, but no Sigstore
	// trusted root was given to verify its certificates with.
	ErrNoTrustedRoot = errors.New("oci: no Sigstore trusted root")
)

// Keyless is a keyless signer's identity: the OIDC issuer and the subject
// (the certificate's subject alternative name: an email, or a CI
// workflow's URI) a Sigstore certificate must name, each exact or a
// regular expression, as cosign's --certificate-oidc-issuer[-regexp] and
// --certificate-identity[-regexp]. A regular expression must match the
// whole value (it is anchored), unlike cosign's.
type Keyless struct {
	Issuer        string `json:"issuer,omitempty"`
	IssuerRegexp  string `json:"issuer_regexp,omitempty"`
	Subject       string `json:"subject,omitempty"`
	SubjectRegexp string `json:"subject_regexp,omitempty"`

	identity verify.CertificateIdentity
}

// compile checks that k names exactly one issuer and one subject, and
// builds its matcher.
func (k *Keyless) compile() error {
	if (k.Issuer == "") == (k.IssuerRegexp == "") {
		return errors.New(`want exactly one of "issuer" and "issuer_regexp" (the OIDC issuer, e.g. https://token.actions.githubusercontent.com)`)
	}
	if (k.Subject == "") == (k.SubjectRegexp == "") {
		return errors.New(`want exactly one of "subject" and "subject_regexp" (the certificate identity: an email, or a workflow URI)`)
	}
	var err error
	k.identity, err = verify.NewShortCertificateIdentity(k.Issuer, anchor(k.IssuerRegexp), k.Subject, anchor(k.SubjectRegexp))
	if err != nil {
		return fmt.Errorf("not a regular expression: %v", err)
	}
	return nil
}

// anchor makes a regular expression match a whole value: a pattern for
// "https://github.com/org/" must not accept
// "https://evil.example/https://github.com/org/".
func anchor(re string) string {
	if re == "" {
		return ""
	}
	return `^(?:` + re + `)$`
}

func (k *Keyless) String() string {
	issuer, subject := k.Issuer, k.Subject
	if issuer == "" {
		issuer = "/" + k.IssuerRegexp + "/"
	}
	if subject == "" {
		subject = "/" + k.SubjectRegexp + "/"
	}
	return "subject " + subject + ", issuer " + issuer
}

// LoadTrustedRoot reads a Sigstore trusted root (trusted_root.json, as
// `cosign trusted-root create` writes it or the Sigstore TUF repository
// serves it): the certificate authorities, transparency logs and
// timestamp authorities keyless signatures are checked against. Nothing
// is fetched: the file is the whole of the trust.
func LoadTrustedRoot(path string) (*root.TrustedRoot, error) {
	data, err := safefile.Read(path, 4<<20)
	if err != nil {
		return nil, fmt.Errorf("oci: reading the trusted root %w", err)
	}
	tr, err := root.NewTrustedRootFromJSON(data)
	if err != nil {
		return nil, fmt.Errorf("oci: %s is not a Sigstore trusted root (want the JSON of media type %s, e.g. from `cosign trusted-root create`): %v", path, root.TrustedRootMediaType01, err)
	}
	if len(tr.FulcioCertificateAuthorities()) == 0 || len(tr.RekorLogs()) == 0 {
		return nil, fmt.Errorf("oci: %s names no certificate authority or no transparency log: a keyless signature cannot verify against it", path)
	}
	return tr, nil
}

// UseTrustedRoot verifies keyless signatures against the trusted root at
// path from now on.
func (s *Signers) UseTrustedRoot(path string) error {
	tr, err := LoadTrustedRoot(path)
	if err != nil {
		return err
	}
	s.root, s.rootPath = tr, path
	return nil
}

// useDefaultRoot loads the trusted root beside the signers file, if there
// is one.
func (s *Signers) useDefaultRoot(dir string) error {
	err := s.UseTrustedRoot(filepath.Join(dir, TrustedRootFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func (s *Signers) hasKeyless() bool {
	for i := range s.Signers {
		if s.Signers[i].Keyless != nil {
			return true
		}
	}
	return false
}

// bundleCheck is what a bundle's cryptographic check established: the
// certificate's identity, and the digest its signature is for.
type bundleCheck struct {
	cert *certificate.Summary
	// other is the digest the bundle signs when it is not the one
	// asked for ("" when it is).
	other string
}

// checkBundle verifies raw, a Sigstore bundle, against the trusted root
// as a signature of digest d: the certificate chains to a certificate
// authority of the root at the time the transparency log (and any
// timestamp authority) saw the signature, the log's proof verifies, and
// the signature verifies with the certificate's key, over an in-toto
// statement of `cosign sign` naming d (or over d itself). The identity is
// not checked here: the caller matches it with the signers.
func (s *Signers) checkBundle(raw []byte, d string) (*bundleCheck, error) {
	if s.root == nil {
		return nil, fmt.Errorf("%w: %s trusts keyless signers, and a keyless signature needs the Sigstore trusted root to verify against: put it at %s, or pass --trusted-root FILE (`cosign trusted-root create --with-default-services --out FILE` writes the public-good instance's)",
			ErrNoTrustedRoot, s.Path, TrustedRootFile)
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("%w: not a Sigstore bundle this can read: %v", ErrBadSignature, err)
	}
	if vc, err := b.VerificationContent(); err == nil && vc.PublicKey() != nil {
		return nil, fmt.Errorf("%w: the Sigstore bundle is signed with a key, not a certificate: a key's signature is verified where cosign sign --key stores it without a bundle (the tag sha256-HEX.sig), not in a bundle", ErrBadSignature)
	}
	hexd, ok := strings.CutPrefix(d, "sha256:")
	sum, err := hex.DecodeString(hexd)
	if !ok || err != nil {
		return nil, fmt.Errorf("oci: %s is not a sha256 digest", d)
	}
	opts := []verify.VerifierOption{verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1)}
	if len(s.root.CTLogs()) > 0 {
		// A root that names certificate transparency logs wants every
		// certificate logged there, as cosign does.
		opts = append(opts, verify.WithSignedCertificateTimestamps(1))
	}
	v, err := verify.NewVerifier(s.root, opts...)
	if err != nil {
		return nil, fmt.Errorf("oci: the trusted root %s: %v", s.rootPath, err)
	}
	res, err := v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", sum), verify.WithoutIdentitiesUnsafe()))
	other := ""
	if err != nil {
		if cerr := s.diagnoseCertificate(&b); cerr != nil {
			return nil, cerr
		}
		// The signature may verify over another artifact: say so
		// rather than "does not verify".
		env, eerr := b.Envelope()
		if eerr != nil || env == nil {
			return nil, fmt.Errorf("%w: the Sigstore bundle does not verify (changed after signing, or holding a certificate that did not sign it): %v", ErrBadSignature, err)
		}
		res2, err2 := v.Verify(&b, verify.NewPolicy(verify.WithoutArtifactUnsafe(), verify.WithoutIdentitiesUnsafe()))
		if err2 != nil || res2.Statement == nil {
			return nil, fmt.Errorf("%w: the Sigstore bundle does not verify (changed after signing, or holding a certificate that did not sign it): %v", ErrBadSignature, err)
		}
		res = res2
		other = "another artifact"
		for _, sub := range res2.Statement.GetSubject() {
			if h := sub.GetDigest()["sha256"]; h != "" {
				other = "sha256:" + h
				break
			}
		}
	}
	if res.Signature == nil || res.Signature.Certificate == nil {
		return nil, fmt.Errorf("%w: the Sigstore bundle verified without a certificate", ErrBadSignature)
	}
	if st := res.Statement; st != nil && st.GetPredicateType() != predicateCosignSign {
		return nil, fmt.Errorf("%w: the Sigstore bundle is an attestation (predicate %s), not a signature (%s)", ErrBadSignature, st.GetPredicateType(), predicateCosignSign)
	}
	return &bundleCheck{cert: res.Signature.Certificate, other: other}, nil
}

// diagnoseCertificate says why a bundle that did not verify was refused
// when its certificate is the reason: checked with the library against
// the trusted root at each time the bundle's log entries claim, it does
// not chain (another certificate authority), or was not valid then.
func (s *Signers) diagnoseCertificate(b *bundle.Bundle) error {
	vc, err := b.VerificationContent()
	if err != nil {
		return nil
	}
	leaf := vc.Certificate()
	if leaf == nil {
		return nil
	}
	entries, err := b.TlogEntries()
	if err != nil {
		return nil
	}
	for _, e := range entries {
		t := e.IntegratedTime()
		chains, err := verify.VerifyLeafCertificate(t, leaf, s.root)
		if err == nil {
			if len(s.root.CTLogs()) > 0 {
				if err := verify.VerifySignedCertificateTimestamp(chains, 1, s.root); err != nil {
					return fmt.Errorf("%w: the certificate for %s carries no signed certificate timestamp from a certificate transparency log of the trusted root %s (%v): it was not logged as Fulcio logs its certificates",
						ErrCertificate, certName(leaf), s.rootPath, err)
				}
			}
			continue
		}
		if t.Before(leaf.NotBefore) || t.After(leaf.NotAfter) {
			return fmt.Errorf("%w: the certificate for %s was valid from %s to %s, and the signature was logged at %s: it had expired (or was not yet valid) when it signed",
				ErrCertificate, certName(leaf), leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339), t.UTC().Format(time.RFC3339))
		}
		return fmt.Errorf("%w: the certificate for %s (issued by %q) was not issued by a certificate authority of the trusted root %s",
			ErrCertificate, certName(leaf), leaf.Issuer.String(), s.rootPath)
	}
	return nil
}

func certName(c *x509.Certificate) string {
	switch {
	case len(c.URIs) > 0:
		return c.URIs[0].String()
	case len(c.EmailAddresses) > 0:
		return c.EmailAddresses[0]
	}
	return c.Subject.String()
}

// keylessIdentity is how provenance names a verified keyless signer: the
// signer's name and the identity the certificate named.
func keylessIdentity(name string, c *certificate.Summary) string {
	return name + " (keyless: subject " + c.SubjectAlternativeName + ", issuer " + c.Issuer + ")"
}

// recordable reports whether a certificate's identity can be recorded as
// provenance: bounded, without control characters.
func recordable(c *certificate.Summary) bool {
	s := c.SubjectAlternativeName + c.Issuer
	return len(s) <= maxIdentity-100 && strings.IndexFunc(s, unicode.IsControl) < 0
}

// verifyKeyless checks a bundle against the signers trusted for repo
// (trusted) and the rest: the first keyless signer trusted for repo whose
// identity the verified certificate names, with the signer's verified
// identity set. Otherwise the error says why.
func (s *Signers) verifyKeyless(repo, d string, raw []byte, trusted []*Signer) (*Signer, error) {
	if !s.hasKeyless() {
		return nil, fmt.Errorf("%w: %s@%s has a keyless (Sigstore bundle) signature, and %s trusts no keyless identity: add {\"name\", \"keyless\": {\"issuer\", \"subject\"}, \"references\": [%q]} and the Sigstore trusted root (%s)",
			ErrIdentity, repo, d, s.Path, repo, TrustedRootFile)
	}
	chk, err := s.checkBundle(raw, d)
	if err != nil {
		return nil, err
	}
	if !recordable(chk.cert) {
		return nil, fmt.Errorf("%w: the certificate's identity is longer than %d bytes or holds control characters", ErrIdentity, maxIdentity-100)
	}
	for _, sg := range trusted {
		if sg.Keyless == nil || sg.Keyless.identity.Verify(*chk.cert) != nil {
			continue
		}
		if chk.other != "" {
			return nil, fmt.Errorf("%w: %s signed %s, but %s resolved to %s: refusing a signature copied from another artifact", ErrOtherDigest, keylessIdentity(sg.Name, chk.cert), chk.other, repo, d)
		}
		v := *sg
		v.verified = keylessIdentity(sg.Name, chk.cert)
		return &v, nil
	}
	for i := range s.Signers {
		sg := &s.Signers[i]
		if sg.Keyless == nil || sg.covers(repo) || sg.Keyless.identity.Verify(*chk.cert) != nil {
			continue
		}
		return nil, fmt.Errorf("%w: %s signed %s@%s, but %s trusts that identity only for %s: add %s to its references if you trust it there",
			ErrSignerNotForReference, keylessIdentity(sg.Name, chk.cert), repo, d, s.Path, strings.Join(sg.References, ", "), repo)
	}
	var want []string
	for _, sg := range trusted {
		if sg.Keyless != nil {
			want = append(want, sg.Name+" ("+sg.Keyless.String()+")")
		}
	}
	if len(want) == 0 {
		want = []string{"none"}
	}
	return nil, fmt.Errorf("%w: %s@%s was signed by subject %s, issuer %s; %s trusts for it only: %s",
		ErrIdentity, repo, d, chk.cert.SubjectAlternativeName, chk.cert.Issuer, s.Path, strings.Join(want, "; "))
}

// errStopReferrers ends a listing of referrers early.
var errStopReferrers = errors.New("enough referrers")

// bundles returns the Sigstore bundles attached to digest d as OCI
// referrers (the referrers API, or the referrers tag schema where the
// registry has no such API), at most max of them.
func (c *Client) bundles(ctx context.Context, repo *remote.Repository, ref registry.Reference, d string, max int) ([]Signature, error) {
	var mans []ocispec.Descriptor
	subject := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.Digest(d)}
	err := repo.Referrers(ctx, subject, "", func(page []ocispec.Descriptor) error {
		for _, m := range page {
			if !strings.HasPrefix(m.ArtifactType, mediaTypeBundle) {
				continue
			}
			if len(mans) == max {
				return errStopReferrers
			}
			mans = append(mans, m)
		}
		return nil
	})
	if errors.Is(err, errStopReferrers) {
		return nil, fmt.Errorf("%w: %s: %s has more than %d Sigstore bundles attached: refusing to fetch them all", ErrTooLarge, ref, d, max)
	}
	if err != nil && !isNotFound(err) {
		return nil, registryError("listing the referrers (keyless signatures) of", ref, err)
	}
	var out []Signature
	for _, m := range mans {
		data, err := c.fetch(ctx, repo, ref, m, maxMetadata)
		if err != nil {
			return nil, err
		}
		var man ocispec.Manifest
		if err := json.Unmarshal(data, &man); err != nil {
			return nil, fmt.Errorf("oci: %s: the referrer %s: %v", ref, m.Digest, err)
		}
		for _, l := range man.Layers {
			if !strings.HasPrefix(l.MediaType, mediaTypeBundle) {
				continue
			}
			body, err := c.fetch(ctx, repo, ref, l, maxBundle)
			if err != nil {
				return nil, err
			}
			out = append(out, Signature{Bundle: body})
			break
		}
	}
	return out, nil
}
