package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
)

// Artifact is a module pulled from a registry, with where it came from.
type Artifact struct {
	// Reference is the reference pulled, as given.
	Reference string
	// Repository is REGISTRY/REPOSITORY.
	Repository string
	// Digest is the digest of the OCI manifest the module came from.
	Digest string
	// Module is the module's bytes; SHA256 their lower-case hex sha256.
	Module []byte
	SHA256 string
	// Layer is the digest of the layer that held the module: the
	// module's own for the Wasm layout, a tar's for an image.
	Layer string
	// Index is the image index the reference named, nil when it named a
	// manifest; Manifest is the image manifest the module came from.
	// Their bytes bind Digest to the module offline ([Record.Check]).
	Index, Manifest []byte
	// Capabilities are what the manifest's annotation says the module
	// requests; informational (the module's describe decides).
	Capabilities []string
}

// Pull fetches the module reference names, by digest: the tag is resolved
// once, and every byte read is checked against the digest that names it.
// Nothing is written anywhere ([Install] does that).
func (c *Client) Pull(ctx context.Context, reference string) (*Artifact, error) {
	ref, err := ParseReference(reference)
	if err != nil {
		return nil, err
	}
	repo, err := c.repository(ref)
	if err != nil {
		return nil, err
	}
	desc, err := repo.Resolve(ctx, ref.Reference)
	if err != nil {
		return nil, registryError("resolving", ref, err)
	}
	if ref.Reference != desc.Digest.String() {
		if _, perr := digest.Parse(ref.Reference); perr == nil {
			return nil, fmt.Errorf("%w: asked for %s, the registry answered %s", ErrDigest, ref.Reference, desc.Digest)
		}
	}
	index, manBytes, man, err := c.fetchManifest(ctx, repo, ref, desc)
	if err != nil {
		return nil, err
	}
	art := &Artifact{
		Reference: reference, Repository: ref.Registry + "/" + ref.Repository,
		Digest: desc.Digest.String(), Index: index, Manifest: manBytes,
	}
	if s, ok := man.Annotations[AnnotationCapabilities]; ok {
		_ = json.Unmarshal([]byte(s), &art.Capabilities)
	}
	module, layer, err := c.moduleOf(ctx, repo, ref, man)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(module)
	art.Module, art.SHA256, art.Layer = module, hex.EncodeToString(sum[:]), layer
	return art, nil
}

// fetchManifest reads the manifest desc names; an index is followed to
// its WebAssembly (or only) manifest, whose digest then names the
// artifact.
func (c *Client) fetchManifest(ctx context.Context, repo *remote.Repository, ref registry.Reference, desc ocispec.Descriptor) (index, manifest []byte, _ *ocispec.Manifest, _ error) {
	for hop := 0; ; hop++ {
		data, err := c.fetch(ctx, repo, ref, desc, maxMetadata)
		if err != nil {
			return nil, nil, nil, err
		}
		var probe struct {
			MediaType string               `json:"mediaType"`
			Manifests []ocispec.Descriptor `json:"manifests"`
			Layers    []ocispec.Descriptor `json:"layers"`
		}
		if err := json.Unmarshal(data, &probe); err != nil {
			return nil, nil, nil, fmt.Errorf("oci: %s: the manifest is not JSON: %v", ref, err)
		}
		mt := cmpOr(probe.MediaType, desc.MediaType)
		switch {
		case mt == mediaTypeOCIIndex || mt == mediaTypeDockerList || (probe.Manifests != nil && probe.Layers == nil):
			if hop > 0 {
				return nil, nil, nil, fmt.Errorf("%w: %s: an index inside an index", ErrNoModule, ref)
			}
			next, ok := pickManifest(probe.Manifests)
			if !ok {
				return nil, nil, nil, fmt.Errorf("%w: %s is an index of %d manifests, none for wasm (wasip1/wasi or architecture wasm)", ErrNoModule, ref, len(probe.Manifests))
			}
			desc, index = next, data
			continue
		case mt == mediaTypeOCIManifest || mt == mediaTypeDockerManifest || mt == "":
			var man ocispec.Manifest
			if err := json.Unmarshal(data, &man); err != nil {
				return nil, nil, nil, fmt.Errorf("oci: %s: reading the manifest: %v", ref, err)
			}
			return index, data, &man, nil
		default:
			return nil, nil, nil, fmt.Errorf("%w: %s is a %s, not an image manifest", ErrNoModule, ref, mt)
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// pickManifest chooses an index's WebAssembly manifest: a wasm platform,
// else the only manifest that is not an attestation.
func pickManifest(ms []ocispec.Descriptor) (ocispec.Descriptor, bool) {
	var others []ocispec.Descriptor
	for _, m := range ms {
		if p := m.Platform; p != nil && (p.Architecture == "wasm" || p.OS == "wasip1" || p.OS == "wasi" || p.OS == "wasip2") {
			return m, true
		}
		if m.Platform != nil && m.Platform.OS == "unknown" {
			continue // buildx attestations
		}
		others = append(others, m)
	}
	if len(others) == 1 {
		return others[0], true
	}
	return ocispec.Descriptor{}, false
}

// fetch reads the blob or manifest desc names, refusing one larger than
// max before reading it and checking the bytes against desc's digest.
func (c *Client) fetch(ctx context.Context, repo *remote.Repository, ref registry.Reference, desc ocispec.Descriptor, max int64) ([]byte, error) {
	if desc.Size > max {
		return nil, fmt.Errorf("%w: %s: %s is %d bytes, more than the bound of %d", ErrTooLarge, ref, desc.Digest, desc.Size, max)
	}
	if desc.Size < 0 {
		return nil, fmt.Errorf("oci: %s: %s has a negative size", ref, desc.Digest)
	}
	rc, err := repo.Fetch(ctx, desc)
	if err != nil {
		return nil, registryError("fetching "+desc.Digest.String()+" of", ref, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, desc.Size+1))
	if err != nil {
		return nil, registryError("reading "+desc.Digest.String()+" of", ref, err)
	}
	if int64(len(data)) != desc.Size {
		return nil, fmt.Errorf("%w: %s: %s should be %d bytes, the registry sent %d", ErrDigest, ref, desc.Digest, desc.Size, len(data))
	}
	if got := digest.FromBytes(data); got != desc.Digest {
		return nil, fmt.Errorf("%w: %s: the registry sent bytes of digest %s for %s: refusing them", ErrDigest, ref, got, desc.Digest)
	}
	return data, nil
}

func isNotFound(err error) bool { return errors.Is(err, errdef.ErrNotFound) }

var wasmLayers = []string{MediaTypeWasm, mediaTypeWasmToOCI, mediaTypeWasmModule}

var tarLayers = []string{mediaTypeLayerTar, mediaTypeLayerTarGzip, mediaTypeDockerLayerGzip, "application/vnd.docker.image.rootfs.diff.tar"}

// moduleOf returns the module the manifest holds and the digest of the
// layer it came from: the one WebAssembly layer, else plugin.wasm in an
// image's layers (hyper-mcp's convention).
func (c *Client) moduleOf(ctx context.Context, repo *remote.Repository, ref registry.Reference, man *ocispec.Manifest) ([]byte, string, error) {
	var wasm []ocispec.Descriptor
	for _, l := range man.Layers {
		if slices.Contains(wasmLayers, l.MediaType) {
			wasm = append(wasm, l)
		}
	}
	switch len(wasm) {
	case 1:
		data, err := c.fetch(ctx, repo, ref, wasm[0], c.maxModule())
		return data, wasm[0].Digest.String(), err
	case 0:
	default:
		return nil, "", fmt.Errorf("%w: %s has %d WebAssembly layers; want one", ErrNoModule, ref, len(wasm))
	}
	// Later layers override earlier ones: search from the top.
	for i := len(man.Layers) - 1; i >= 0; i-- {
		l := man.Layers[i]
		if !slices.Contains(tarLayers, l.MediaType) {
			continue
		}
		data, err := c.fetch(ctx, repo, ref, l, c.maxModule())
		if err != nil {
			return nil, "", err
		}
		module, err := pluginFromTar(data, strings.HasSuffix(l.MediaType, "gzip"), c.maxModule())
		if err != nil {
			return nil, "", fmt.Errorf("oci: %s: layer %s: %w", ref, l.Digest, err)
		}
		if module != nil {
			return module, l.Digest.String(), nil
		}
	}
	var types []string
	for _, l := range man.Layers {
		types = append(types, l.MediaType)
	}
	return nil, "", fmt.Errorf("%w: %s has layers of %s; want one of media type %s, or an image layer holding plugin.wasm",
		ErrNoModule, ref, strings.Join(nonEmpty(types), ", "), MediaTypeWasm)
}

func nonEmpty(ss []string) []string {
	if len(ss) == 0 {
		return []string{"none"}
	}
	return ss
}

// pluginFromTar returns the plugin.wasm a tar layer holds (nil when none),
// reading at most 4×max bytes of archive so a compressed bomb ends.
func pluginFromTar(data []byte, gzipped bool, max int64) ([]byte, error) {
	var r io.Reader = bytes.NewReader(data)
	if gzipped {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("not gzip: %v", err)
		}
		defer zr.Close()
		r = zr
	}
	budget := &io.LimitedReader{R: r, N: 4 * max}
	tr := tar.NewReader(budget)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			if budget.N <= 0 {
				return nil, fmt.Errorf("%w: the layer unpacks to more than %d bytes", ErrTooLarge, 4*max)
			}
			return nil, fmt.Errorf("not a tar archive: %v", err)
		}
		if h.Typeflag != tar.TypeReg || path.Base(path.Clean("/"+h.Name)) != "plugin.wasm" {
			continue
		}
		if h.Size > max {
			return nil, fmt.Errorf("%w: plugin.wasm is %d bytes, more than the bound of %d", ErrTooLarge, h.Size, max)
		}
		module, err := io.ReadAll(io.LimitReader(tr, max+1))
		if err != nil {
			return nil, fmt.Errorf("reading plugin.wasm: %v", err)
		}
		return module, nil
	}
}
