package oci

import (
	"bytes"
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
)

// PasswordEnv names the environment variable holding an encrypted private
// key's password, as cosign reads it.
const PasswordEnv = "COSIGN_PASSWORD"

// LoadSigner reads a private key in PEM: cosign's encrypted key (its
// password from $COSIGN_PASSWORD), or an unencrypted PKCS#8, EC or RSA key.
func LoadSigner(path string) (signature.SignerVerifier, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("oci: reading the key: %w", err)
	}
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(data, func(bool) ([]byte, error) {
		return []byte(os.Getenv(PasswordEnv)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("oci: %s is not a private key this can read (cosign's, or PKCS#8 PEM; an encrypted key's password comes from $%s): %v", path, PasswordEnv, err)
	}
	sv, err := signature.LoadSignerVerifier(priv, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("oci: %s: %v", path, err)
	}
	return sv, nil
}

// SignBlob signs data as `cosign sign-blob --key` does and returns the
// signature in base64 (`cosign verify-blob --key --signature` checks it).
func SignBlob(sv signature.Signer, data []byte) (string, error) {
	sig, err := sv.SignMessage(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("oci: signing: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

// sigTag is the tag cosign keeps the signatures of digest d at.
func sigTag(d string) string { return strings.Replace(d, ":", "-", 1) + ".sig" }

// Sign signs the artifact reference names as `cosign sign --key` does: a
// simple-signing payload naming its manifest digest, signed, added as a
// layer to the signature manifest at tag sha256-HEX.sig. It returns the
// digest signed.
func (c *Client) Sign(ctx context.Context, reference string, sv signature.Signer) (string, error) {
	ref, err := ParseReference(reference)
	if err != nil {
		return "", err
	}
	repo, err := c.repository(ref)
	if err != nil {
		return "", err
	}
	desc, err := repo.Resolve(ctx, ref.Reference)
	if err != nil {
		return "", registryError("resolving", ref, err)
	}
	d := desc.Digest.String()
	body, err := json.Marshal(payload.SimpleContainerImage{Critical: payload.Critical{
		Identity: payload.Identity{DockerReference: ref.Registry + "/" + ref.Repository},
		Image:    payload.Image{DockerManifestDigest: d},
		Type:     payload.CosignSignatureType,
	}})
	if err != nil {
		return "", fmt.Errorf("oci: %w", err)
	}
	sig, err := SignBlob(sv, body)
	if err != nil {
		return "", err
	}
	layer := content.NewDescriptorFromBytes(mediaTypeSimpleSigning, body)
	layer.Annotations = map[string]string{annotationSignature: sig}

	// Signatures already there are kept: each signer adds a layer.
	var layers []ocispec.Descriptor
	if sigs, err := c.signatureManifest(ctx, repo, ref, d); err == nil {
		layers = sigs.Layers
	} else if !errors.Is(err, ErrUnsigned) {
		return "", err
	}
	layers = append(layers, layer)
	cfgBytes, err := json.Marshal(ocispec.Image{
		Platform: ocispec.Platform{Architecture: "", OS: ""},
		RootFS:   ocispec.RootFS{Type: "layers", DiffIDs: diffIDs(layers)},
	})
	if err != nil {
		return "", fmt.Errorf("oci: %w", err)
	}
	cfg := content.NewDescriptorFromBytes(ocispec.MediaTypeImageConfig, cfgBytes)
	man, err := json.Marshal(ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		Config: cfg, Layers: layers,
	})
	if err != nil {
		return "", fmt.Errorf("oci: %w", err)
	}
	for _, b := range []struct {
		desc ocispec.Descriptor
		data []byte
	}{{cfg, cfgBytes}, {layer, body}} {
		if ok, err := repo.Exists(ctx, b.desc); err == nil && ok {
			continue
		}
		if err := repo.Push(ctx, b.desc, bytes.NewReader(b.data)); err != nil {
			return "", registryError("pushing the signature to", ref, err)
		}
	}
	manDesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, man)
	if err := repo.PushReference(ctx, manDesc, bytes.NewReader(man), sigTag(d)); err != nil {
		return "", registryError("pushing the signature to", ref, err)
	}
	return d, nil
}

func diffIDs(layers []ocispec.Descriptor) []digest.Digest {
	var out []digest.Digest
	for _, l := range layers {
		out = append(out, l.Digest)
	}
	return out
}

// Signature is one cosign signature of an artifact: the payload signed
// and the signature's bytes (a key's signature), or a Sigstore bundle
// (keyless, attached as a referrer).
type Signature struct {
	Payload   []byte `json:"payload,omitempty"`
	Signature []byte `json:"signature,omitempty"`
	// Bundle is a Sigstore bundle's JSON; Payload and Signature are then
	// empty.
	Bundle []byte `json:"bundle,omitempty"`

	// certificate: the signature carries a Fulcio certificate, cosign's
	// older keyless format, which no key verifies.
	certificate bool
}

// maxSignatures bounds the signatures of one artifact that are fetched
// and checked, so a registry cannot make a pull fetch without end.
const maxSignatures = 32

// ErrUnsigned: the artifact has no cosign signature.
var ErrUnsigned = errors.New("oci: not signed")

// signatureManifest reads the signature manifest of digest d.
func (c *Client) signatureManifest(ctx context.Context, repo *remote.Repository, ref registry.Reference, d string) (*ocispec.Manifest, error) {
	desc, err := repo.Resolve(ctx, sigTag(d))
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("%w: %s has no cosign signature (no tag %s in %s/%s)", ErrUnsigned, ref, sigTag(d), ref.Registry, ref.Repository)
		}
		return nil, registryError("looking for the signature of", ref, err)
	}
	data, err := c.fetch(ctx, repo, ref, desc, maxMetadata)
	if err != nil {
		return nil, err
	}
	var man ocispec.Manifest
	if err := json.Unmarshal(data, &man); err != nil {
		return nil, fmt.Errorf("oci: %s: the signature manifest is not JSON: %v", ref, err)
	}
	return &man, nil
}

// Signatures returns the cosign signatures of the artifact a pulled
// reference resolved to (digest d): the key signatures at its tag
// sha256-HEX.sig, then the Sigstore bundles attached to it as referrers
// (keyless), or an error wrapping ErrUnsigned when there is neither.
func (c *Client) Signatures(ctx context.Context, reference, d string) ([]Signature, error) {
	ref, err := ParseReference(reference)
	if err != nil {
		return nil, err
	}
	repo, err := c.repository(ref)
	if err != nil {
		return nil, err
	}
	var out []Signature
	man, err := c.signatureManifest(ctx, repo, ref, d)
	switch {
	case err == nil:
		for _, l := range man.Layers {
			if l.MediaType != mediaTypeSimpleSigning {
				continue
			}
			if len(out) == maxSignatures {
				return nil, fmt.Errorf("%w: %s: the signature manifest at %s holds more than %d signatures: refusing to fetch them all", ErrTooLarge, ref, sigTag(d), maxSignatures)
			}
			sig, err := base64.StdEncoding.DecodeString(l.Annotations[annotationSignature])
			if err != nil || len(sig) == 0 {
				continue
			}
			body, err := c.fetch(ctx, repo, ref, l, maxMetadata)
			if err != nil {
				return nil, err
			}
			out = append(out, Signature{Payload: body, Signature: sig, certificate: l.Annotations[annotationCertificate] != ""})
		}
	case !errors.Is(err, ErrUnsigned):
		return nil, err
	}
	bundles, err := c.bundles(ctx, repo, ref, d, maxSignatures)
	if err != nil {
		return nil, err
	}
	out = append(out, bundles...)
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s has no cosign signature: no key signature at the tag %s in %s/%s, and no Sigstore bundle attached to %s as a referrer",
			ErrUnsigned, ref, sigTag(d), ref.Registry, ref.Repository, d)
	}
	return out, nil
}
