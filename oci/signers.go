package oci

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/autoagent-go/autoagent/internal/safefile"
)

// SignersFile is the signers file's name in the plugins directory.
const SignersFile = "signers.json"

// Errors of signature verification, each its own condition (errors.Is).
var (
	// ErrNoSigner: the signers file trusts no key for the repository.
	ErrNoSigner = errors.New("oci: no signer is trusted for this reference")
	// ErrBadSignature: no signature verifies with a key trusted for the
	// repository (another key signed it, or the payload was changed).
	ErrBadSignature = errors.New("oci: no signature verifies with a trusted key")
	// ErrSignerNotForReference: a signature verifies with a known key,
	// but the signers file trusts that key for other references only.
	ErrSignerNotForReference = errors.New("oci: the signer is not trusted for this reference")
	// ErrOtherDigest: a trusted key signed another digest (a signature
	// copied from another artifact).
	ErrOtherDigest = errors.New("oci: the signature is for another digest")
)

// Signer is one entry of the signers file: a public key, or a keyless
// identity, trusted to sign the artifacts of the repositories References
// match.
type Signer struct {
	// Name names the signer in listings and provenance ("alice").
	Name string `json:"name"`
	// Key is the path of the signer's PEM public key (cosign.pub),
	// relative to the signers file's directory. A signer has a Key or
	// Keyless, not both.
	Key string `json:"key,omitempty"`
	// Keyless is the identity a Sigstore certificate must name (cosign
	// sign without --key), verified against the trusted root.
	Keyless *Keyless `json:"keyless,omitempty"`
	// References are the repositories the key may sign:
	// REGISTRY/REPOSITORY exactly, or a prefix ending in "/*" for every
	// repository below it.
	References []string `json:"references"`

	verifier    signature.Verifier
	fingerprint string
	// verified is the identity a keyless signer's certificate named, set
	// on the copy Verify returns.
	verified string
}

// Signers is the signers file: which keys, or keyless identities, are
// trusted for which references (RATIONALE.md, "Why a signers file in the
// plugins directory?").
type Signers struct {
	// Path is the file read.
	Path    string
	Signers []Signer

	// root verifies keyless signatures; rootPath is its file.
	root     *root.TrustedRoot
	rootPath string
}

type signersJSON struct {
	Version int      `json:"version"`
	Signers []Signer `json:"signers"`
}

// LoadSigners reads the signers file at path. A missing file is an empty
// set (every signed pull is then refused with ErrNoSigner); a file that
// does not parse, or a key that does not load, is an error naming it.
func LoadSigners(path string) (*Signers, error) {
	data, err := safefile.Read(path, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return &Signers{Path: path}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oci: reading %w", err)
	}
	var f signersJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("oci: %s: %v (want {\"version\": 1, \"signers\": [{\"name\", \"key\" or \"keyless\": {\"issuer\", \"subject\"}, \"references\"}]})", path, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("oci: %s: version %d: this autoagent reads version 1", path, f.Version)
	}
	s := &Signers{Path: path}
	for i, sg := range f.Signers {
		if sg.Name == "" || (sg.Key == "") == (sg.Keyless == nil) || len(sg.References) == 0 {
			return nil, fmt.Errorf("oci: %s: signers[%d]: want a name, a key file or a keyless identity (one of them) and at least one reference", path, i)
		}
		for _, r := range sg.References {
			last := r[strings.LastIndex(r, "/")+1:]
			if !strings.Contains(r, "/") || strings.HasPrefix(r, "/") || strings.ContainsAny(r, "@ ") || strings.Contains(last, ":") {
				return nil, fmt.Errorf("oci: %s: signers[%d] reference %q: want REGISTRY/REPOSITORY or REGISTRY/PREFIX/* (no tag or digest)", path, i, r)
			}
		}
		if sg.Keyless != nil {
			k := *sg.Keyless
			if err := k.compile(); err != nil {
				return nil, fmt.Errorf("oci: %s: signers[%d] (%s) keyless: %v", path, i, sg.Name, err)
			}
			sg.Keyless = &k
			s.Signers = append(s.Signers, sg)
			continue
		}
		keyPath := sg.Key
		if !filepath.IsAbs(keyPath) {
			keyPath = filepath.Join(filepath.Dir(path), keyPath)
		}
		pem, err := safefile.Read(keyPath, 64<<10)
		if err != nil {
			return nil, fmt.Errorf("oci: %s: signers[%d] (%s): reading the key %w", path, i, sg.Name, err)
		}
		pub, err := cryptoutils.UnmarshalPEMToPublicKey(pem)
		if err != nil {
			return nil, fmt.Errorf("oci: %s: signers[%d] (%s): %s is not a PEM public key: %v", path, i, sg.Name, keyPath, err)
		}
		sg.verifier, err = signature.LoadVerifier(pub, crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("oci: %s: signers[%d] (%s): %v", path, i, sg.Name, err)
		}
		der, err := cryptoutils.MarshalPublicKeyToDER(pub)
		if err != nil {
			return nil, fmt.Errorf("oci: %s: signers[%d] (%s): %v", path, i, sg.Name, err)
		}
		sum := sha256.Sum256(der)
		sg.fingerprint = hex.EncodeToString(sum[:])
		s.Signers = append(s.Signers, sg)
	}
	if s.hasKeyless() {
		if err := s.useDefaultRoot(filepath.Dir(path)); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// covers reports whether the signer may sign the repository repo.
func (sg *Signer) covers(repo string) bool {
	for _, r := range sg.References {
		if prefix, ok := strings.CutSuffix(r, "/*"); ok {
			if strings.HasPrefix(repo, prefix+"/") {
				return true
			}
		} else if r == repo {
			return true
		}
	}
	return false
}

// Identity is how provenance names the signer: its name and its key's
// fingerprint (the sha256 of the public key's DER), or for a keyless
// signer that verified, its name and the subject and issuer its
// certificate named.
func (sg *Signer) Identity() string {
	if sg.Keyless != nil {
		if sg.verified != "" {
			return sg.verified
		}
		return sg.Name + " (keyless: " + sg.Keyless.String() + ")"
	}
	return sg.Name + " (key sha256:" + sg.fingerprint + ")"
}

// Verify checks sigs, the cosign signatures of digest d of repository repo
// (REGISTRY/REPOSITORY), and returns the first signer trusted for repo
// whose key verifies one of them over a payload naming d. Otherwise the
// error says why, most telling first: a trusted key signed another digest
// (ErrOtherDigest), a key trusted elsewhere signed it
// (ErrSignerNotForReference), no trusted key verifies (ErrBadSignature),
// no key is trusted for repo at all (ErrNoSigner).
func (s *Signers) Verify(repo, d string, sigs []Signature) (*Signer, error) {
	sg, _, err := s.verifyIndex(repo, d, sigs)
	return sg, err
}

// verifyIndex is Verify, also returning the index of the signature that
// verified.
func (s *Signers) verifyIndex(repo, d string, sigs []Signature) (*Signer, int, error) {
	var trusted []*Signer
	for i := range s.Signers {
		if s.Signers[i].covers(repo) {
			trusted = append(trusted, &s.Signers[i])
		}
	}
	// The first refusal of each kind, reported most telling first.
	var otherDigest, elsewhere, identity, certErr, noRoot, bad error
	first := func(dst *error, err error) {
		if *dst == nil {
			*dst = err
		}
	}
	for si, sig := range sigs {
		if sig.Bundle != nil {
			verifyBundle := s.verifyKeyless
			if isKeyBundle(sig.Bundle) {
				verifyBundle = s.verifyKeyBundle
			}
			sg, err := verifyBundle(repo, d, sig.Bundle, trusted)
			if err == nil {
				return sg, si, nil
			}
			switch {
			case errors.Is(err, ErrOtherDigest):
				first(&otherDigest, err)
			case errors.Is(err, ErrSignerNotForReference):
				first(&elsewhere, err)
			case errors.Is(err, ErrIdentity):
				first(&identity, err)
			case errors.Is(err, ErrCertificate):
				first(&certErr, err)
			case errors.Is(err, ErrNoTrustedRoot):
				first(&noRoot, err)
			default:
				first(&bad, err)
			}
			continue
		}
		for _, sg := range trusted {
			if sg.verifier == nil || sg.verifier.VerifySignature(bytes.NewReader(sig.Signature), bytes.NewReader(sig.Payload)) != nil {
				continue
			}
			var p payload.SimpleContainerImage
			if err := json.Unmarshal(sig.Payload, &p); err != nil || p.Critical.Type != payload.CosignSignatureType {
				continue
			}
			if got := p.Critical.Image.DockerManifestDigest; got != d {
				otherDigest = fmt.Errorf("%w: %s signed %s, but %s resolved to %s: refusing a signature copied from another artifact", ErrOtherDigest, sg.Name, got, repo, d)
				continue
			}
			return sg, si, nil
		}
		for i := range s.Signers {
			sg := &s.Signers[i]
			if sg.verifier == nil || sg.covers(repo) || sg.verifier.VerifySignature(bytes.NewReader(sig.Signature), bytes.NewReader(sig.Payload)) != nil {
				continue
			}
			elsewhere = fmt.Errorf("%w: %s's key signed %s@%s, but %s trusts it only for %s: add %s to its references if you trust it there",
				ErrSignerNotForReference, sg.Name, repo, d, s.Path, strings.Join(sg.References, ", "), repo)
		}
	}
	switch {
	case otherDigest != nil:
		return nil, 0, otherDigest
	case elsewhere != nil:
		return nil, 0, elsewhere
	case len(trusted) == 0:
		return nil, 0, fmt.Errorf("%w: %s has no signer for %s: add one ({\"name\", \"key\" or \"keyless\", \"references\": [%q]}), or pass --allow-unsigned to pull it unverified",
			ErrNoSigner, s.Path, repo, repo)
	case identity != nil:
		return nil, 0, identity
	case certErr != nil:
		return nil, 0, certErr
	case noRoot != nil:
		return nil, 0, noRoot
	case bad != nil:
		return nil, 0, bad
	}
	var names []string
	for _, sg := range trusted {
		names = append(names, sg.Name)
	}
	legacy := 0
	for _, sig := range sigs {
		if sig.certificate {
			legacy++
		}
	}
	hint := ""
	if legacy > 0 {
		hint = fmt.Sprintf("; %d of them are keyless signatures in cosign's older format (a certificate beside the signature at the .sig tag), which this does not verify: ask the publisher to sign with cosign v3 (or cosign sign --new-bundle-format), which attaches a Sigstore bundle", legacy)
	}
	return nil, 0, fmt.Errorf("%w: %s@%s has %d signature(s), none made by a key %s trusts for it (%s): it was signed by another key, or changed after signing%s",
		ErrBadSignature, repo, d, len(sigs), s.Path, strings.Join(names, ", "), hint)
}

// PullVerified pulls reference and checks its cosign signature against
// s. With allowUnsigned, a module whose signature is missing or refused is
// returned anyway, with a nil signer and the refusal as unverified.
func PullVerified(ctx context.Context, c *Client, s *Signers, reference string, allowUnsigned bool) (art *Artifact, signer *Signer, sig *Signature, unverified, err error) {
	art, err = c.Pull(ctx, reference)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	sigs, err := c.Signatures(ctx, reference, art.Digest)
	if err == nil {
		var i int
		signer, i, err = s.verifyIndex(art.Repository, art.Digest, sigs)
		if err == nil {
			return art, signer, &sigs[i], nil, nil
		}
	}
	if allowUnsigned && (errors.Is(err, ErrUnsigned) || isRefusal(err)) {
		return art, nil, nil, err, nil
	}
	if errors.Is(err, ErrUnsigned) {
		err = fmt.Errorf("%w: ask its publisher to sign it (`autoagent tools sign REF --key`), or pass --allow-unsigned to pull it unverified", err)
	}
	return nil, nil, nil, nil, err
}

func isRefusal(err error) bool {
	return errors.Is(err, ErrNoSigner) || errors.Is(err, ErrBadSignature) || errors.Is(err, ErrSignerNotForReference) || errors.Is(err, ErrOtherDigest) ||
		errors.Is(err, ErrIdentity) || errors.Is(err, ErrCertificate) || errors.Is(err, ErrNoTrustedRoot)
}

// VerifyRecord re-checks a pulled module's record against s, without
// the registry: the record must hold together ([Record.Check]), and its
// signature still verify with a key s trusts for the record's
// repository, over the recorded digest, naming the same signer.
func (s *Signers) VerifyRecord(r *Record) error {
	if err := r.Check(); err != nil {
		return err
	}
	if r.Signature == nil {
		return fmt.Errorf("%w: %s was pulled with --allow-unsigned", ErrUnsigned, r.Reference)
	}
	sg, err := s.Verify(r.Repository, r.Digest, []Signature{*r.Signature})
	if err != nil {
		return err
	}
	if sg.Identity() != r.Signer {
		return fmt.Errorf("%w: %s was signed by %s, and %s now names that key %s", ErrBadSignature, r.Reference, r.Signer, s.Path, sg.Identity())
	}
	return nil
}
