// Package sigstoretest signs as `cosign sign` does without a key, offline,
// for tests: sigstore-go's virtual Sigstore (a Fulcio certificate
// authority, a Rekor log and a timestamp authority made up in memory)
// issues the certificate and logs the signature, and the result is a
// Sigstore bundle as cosign attaches it to an image, with the trusted
// root that verifies it.
package sigstoretest

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore/pkg/signature"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
)

// BundleMediaType is the media type of the bundles made here, and the
// artifact type cosign attaches them with.
const BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// Sigstore is one virtual Sigstore instance.
type Sigstore struct {
	t  testing.TB
	vs *ca.VirtualSigstore
}

// New makes a virtual Sigstore: its own certificate authority, log and
// timestamp authority, trusted by no other instance's root.
func New(t testing.TB) *Sigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	return &Sigstore{t: t, vs: vs}
}

// WriteRoot writes the instance's trusted root (trusted_root.json) to
// path. With ctLogs it names a certificate transparency log too, so a
// verifier wants a signed certificate timestamp in every certificate
// (which the virtual authority does not issue).
func (s *Sigstore) WriteRoot(path string, ctLogs bool) {
	s.t.Helper()
	var ct map[string]*root.TransparencyLog
	if ctLogs {
		ct = s.rawIDs(s.vs.CTLogs())
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, s.vs.FulcioCertificateAuthorities(), ct, s.vs.TimestampingAuthorities(), s.rawIDs(s.vs.RekorLogs()))
	if err != nil {
		s.t.Fatal(err)
	}
	data, err := tr.MarshalJSON()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// rawIDs returns logs with their IDs as the key ID's bytes: the virtual
// Sigstore keeps the hex text there, which a trusted root file would
// carry as other bytes.
func (s *Sigstore) rawIDs(logs map[string]*root.TransparencyLog) map[string]*root.TransparencyLog {
	out := map[string]*root.TransparencyLog{}
	for id, l := range logs {
		raw, err := hex.DecodeString(id)
		if err != nil {
			s.t.Fatal(err)
		}
		c := *l
		c.ID = raw
		out[id] = &c
	}
	return out
}

// Statement is the in-toto statement `cosign sign` signs for an image of
// digest d in repository repo.
func Statement(repo, d string) []byte {
	hexd := strings.TrimPrefix(d, "sha256:")
	b, _ := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []map[string]any{{"name": repo, "digest": map[string]string{"sha256": hexd}}},
		"predicateType": "https://sigstore.dev/cosign/sign/v1",
		"predicate":     map[string]any{},
	})
	return b
}

// Sign returns the bundle of a keyless signature of statement by the
// OIDC identity subject from issuer, logged while its certificate was
// valid.
func (s *Sigstore) Sign(subject, issuer string, statement []byte) []byte {
	// The virtual authority's certificates are valid for ten minutes
	// from now; the log records the signature five minutes in.
	return s.SignAt(subject, issuer, statement, time.Now().Add(5*time.Minute))
}

// SignAt is Sign with the log recording the signature at logged: after
// the certificate's ten minutes, it had expired when it signed.
func (s *Sigstore) SignAt(subject, issuer string, statement []byte, logged time.Time) []byte {
	s.t.Helper()
	e, err := s.vs.AttestAtTime(subject, issuer, statement, logged, true)
	if err != nil {
		s.t.Fatal(err)
	}
	vc, err := e.VerificationContent()
	if err != nil {
		s.t.Fatal(err)
	}
	sc, err := e.SignatureContent()
	if err != nil {
		s.t.Fatal(err)
	}
	env := sc.(*bundle.Envelope).RawEnvelope()
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		s.t.Fatal(err)
	}
	pe := &protodsse.Envelope{Payload: payload, PayloadType: env.PayloadType}
	for _, sig := range env.Signatures {
		raw, err := base64.StdEncoding.DecodeString(sig.Sig)
		if err != nil {
			s.t.Fatal(err)
		}
		pe.Signatures = append(pe.Signatures, &protodsse.Signature{Sig: raw, Keyid: sig.KeyID})
	}
	entries, err := e.TlogEntries()
	if err != nil {
		s.t.Fatal(err)
	}
	var tles []*protorekor.TransparencyLogEntry
	for _, te := range entries {
		// The entry as a bundle carries it: with its kind and the log's
		// promise (the signed entry timestamp), which the virtual log
		// keeps apart.
		tle := te.TransparencyLogEntry()
		var kv struct{ Kind, APIVersion string }
		if err := json.Unmarshal(tle.CanonicalizedBody, &kv); err != nil {
			s.t.Fatal(err)
		}
		tle.KindVersion = &protorekor.KindVersion{Kind: kv.Kind, Version: kv.APIVersion}
		set, err := s.vs.RekorSignPayload(tlog.RekorPayload{
			Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody), IntegratedTime: tle.IntegratedTime,
			LogIndex: tle.LogIndex, LogID: hex.EncodeToString(tle.LogId.KeyId),
		})
		if err != nil {
			s.t.Fatal(err)
		}
		tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
		tles = append(tles, tle)
	}
	pb := &protobundle.Bundle{
		MediaType: BundleMediaType,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:     &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
			TlogEntries: tles,
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: pe},
	}
	b, err := bundle.NewBundle(pb)
	if err != nil {
		s.t.Fatal(err)
	}
	data, err := b.MarshalJSON()
	if err != nil {
		s.t.Fatal(err)
	}
	return data
}

// SwapCertificate returns raw with its certificate replaced by a fresh one
// the same authority issued to the same identity: a certificate that did
// not make the signature.
func (s *Sigstore) SwapCertificate(raw []byte, subject, issuer string) []byte {
	s.t.Helper()
	var b bundle.Bundle
	if err := b.UnmarshalJSON(raw); err != nil {
		s.t.Fatal(err)
	}
	leaf, _, err := s.vs.GenerateLeafCert(subject, issuer)
	if err != nil {
		s.t.Fatal(err)
	}
	b.VerificationMaterial.Content = &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: leaf.Raw}}
	data, err := b.MarshalJSON()
	if err != nil {
		s.t.Fatal(err)
	}
	return data
}

// Certificate returns the bundle's certificate.
func Certificate(t testing.TB, raw []byte) *x509.Certificate {
	t.Helper()
	var b bundle.Bundle
	if err := b.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	vc, err := b.VerificationContent()
	if err != nil {
		t.Fatal(err)
	}
	return vc.Certificate()
}

// Attach stores bundle as a referrer of digest d in the repository of
// registry host (plain HTTP), as `cosign sign` does: an OCI manifest of
// artifact type BundleMediaType whose one layer is the bundle, its
// subject the signed manifest.
func Attach(t testing.TB, host, repository, d string, raw []byte) {
	t.Helper()
	ctx := context.Background()
	repo, err := remote.NewRepository(host + "/" + repository)
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	// The CNCF registry has no referrers API: the referrers index is kept
	// at the tag sha256-HEX, and the registry deletes nothing.
	repo.SkipReferrersGC = true
	subject, err := repo.Resolve(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	layer := content.NewDescriptorFromBytes(BundleMediaType, raw)
	layer.Annotations = map[string]string{ocispec.AnnotationTitle: strings.Replace(digest.FromBytes(raw).String(), ":", "-", 1) + ".sigstore.json"}
	cfg := ocispec.DescriptorEmptyJSON
	man, err := json.Marshal(ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: BundleMediaType, Config: cfg, Layers: []ocispec.Descriptor{layer}, Subject: &subject,
		Annotations: map[string]string{"dev.sigstore.bundle.content": "dsse-envelope", "dev.sigstore.bundle.predicateType": "https://sigstore.dev/cosign/sign/v1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct {
		d    ocispec.Descriptor
		data []byte
	}{{cfg, cfg.Data}, {layer, raw}} {
		if ok, err := repo.Exists(ctx, b.d); err == nil && ok {
			continue
		}
		if err := repo.Push(ctx, b.d, bytes.NewReader(b.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := repo.Push(ctx, content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, man), bytes.NewReader(man)); err != nil {
		t.Fatal(err)
	}
}

// SignWithKey returns the bundle `cosign sign --key` (cosign v3, or v2
// with --new-bundle-format, and --tlog-upload=false) writes for
// statement: a DSSE envelope signed with signer, its verification
// material naming a key, not a certificate.
func SignWithKey(t testing.TB, signer signature.Signer, statement []byte) []byte {
	t.Helper()
	const payloadType = "application/vnd.in-toto+json"
	// DSSE's pre-authentication encoding of the envelope, which is what
	// its signature signs.
	pae := fmt.Appendf(nil, "DSSEv1 %d %s %d ", len(payloadType), payloadType, len(statement))
	pae = append(pae, statement...)
	sig, err := signer.SignMessage(bytes.NewReader(pae))
	if err != nil {
		t.Fatal(err)
	}
	pb := &protobundle.Bundle{
		MediaType: BundleMediaType,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{}},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload: statement, PayloadType: payloadType, Signatures: []*protodsse.Signature{{Sig: sig}},
		}},
	}
	b, err := bundle.NewBundle(pb)
	if err != nil {
		t.Fatal(err)
	}
	data, err := b.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return data
}
