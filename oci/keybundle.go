package oci

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// Key-signed Sigstore bundles: `cosign sign --key` in cosign v3 (and v2
// with --new-bundle-format) writes its signature as a bundle naming a key
// instead of a certificate, attached as an OCI referrer like a keyless
// one. It is verified with the keys the signers file trusts for the
// reference, as a signature at the `.sig` tag is: the key alone says who
// signed, so no trusted root is needed, and a transparency-log entry the
// bundle may carry is not required (as cosign verifies with a key
// offline).

// isKeyBundle reports whether raw is a Sigstore bundle whose verification
// material is a public key.
func isKeyBundle(raw []byte) bool {
	var b bundle.Bundle
	if b.UnmarshalJSON(raw) != nil {
		return false
	}
	vc, err := b.VerificationContent()
	return err == nil && vc.PublicKey() != nil
}

// verifyKeyBundle checks raw, a key-signed bundle, against the keys in
// trusted (the signers trusted for repo): the first whose key verifies it
// as cosign's signature statement of digest d is returned. A bundle some
// trusted key verifies over another digest is ErrOtherDigest; one only an
// untrusted-for-repo key verifies is ErrSignerNotForReference; otherwise
// ErrBadSignature, or ErrNoSigner when no key is trusted for repo.
func (s *Signers) verifyKeyBundle(repo, d string, raw []byte, trusted []*Signer) (*Signer, error) {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("%w: not a Sigstore bundle this can read: %v", ErrBadSignature, err)
	}
	hexd, ok := strings.CutPrefix(d, "sha256:")
	sum, err := hex.DecodeString(hexd)
	if !ok || err != nil {
		return nil, fmt.Errorf("oci: %s is not a sha256 digest", d)
	}
	// check verifies b with sg's key: the statement it signs, and "" or
	// the other digest it names.
	check := func(sg *Signer) (bool, string, error) {
		km := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
			return root.NewExpiringKey(sg.verifier, time.Time{}, time.Time{}), nil
		})
		v, err := verify.NewVerifier(km, verify.WithCurrentTime())
		if err != nil {
			return false, "", err
		}
		res, err := v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", sum), verify.WithKey()))
		other := ""
		if err != nil {
			res, err = v.Verify(&b, verify.NewPolicy(verify.WithoutArtifactUnsafe(), verify.WithKey()))
			if err != nil || res.Statement == nil {
				return false, "", nil
			}
			other = "another artifact"
			for _, sub := range res.Statement.GetSubject() {
				if h := sub.GetDigest()["sha256"]; h != "" {
					other = "sha256:" + h
					break
				}
			}
		}
		if st := res.Statement; st == nil || st.GetPredicateType() != predicateCosignSign {
			pt := "none: a bare message signature"
			if st != nil {
				pt = st.GetPredicateType()
			}
			return true, other, fmt.Errorf("%w: the Sigstore bundle is not cosign's signature of an image (its statement's predicate is %s, want %s)", ErrBadSignature, pt, predicateCosignSign)
		}
		return true, other, nil
	}
	keys := 0
	for _, sg := range trusted {
		if sg.verifier == nil {
			continue
		}
		keys++
		ok, other, err := check(sg)
		if !ok {
			continue
		}
		if err != nil {
			return nil, err
		}
		if other != "" {
			return nil, fmt.Errorf("%w: %s signed %s, but %s resolved to %s: refusing a signature copied from another artifact", ErrOtherDigest, sg.Identity(), other, repo, d)
		}
		return sg, nil
	}
	for i := range s.Signers {
		sg := &s.Signers[i]
		if sg.verifier == nil || sg.covers(repo) {
			continue
		}
		if ok, _, _ := check(sg); ok {
			return nil, fmt.Errorf("%w: %s signed %s@%s, but %s trusts that key only for %s: add %s to its references if you trust it there",
				ErrSignerNotForReference, sg.Identity(), repo, d, s.Path, strings.Join(sg.References, ", "), repo)
		}
	}
	if keys == 0 {
		return nil, fmt.Errorf("%w: %s@%s has a key-signed Sigstore bundle, and %s trusts no key for it: add {\"name\", \"key\": \"cosign.pub\", \"references\": [%q]}",
			ErrNoSigner, repo, d, s.Path, repo)
	}
	return nil, fmt.Errorf("%w: no key %s trusts for %s verifies its key-signed Sigstore bundle", ErrBadSignature, s.Path, repo)
}
