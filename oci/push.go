package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

// Module is what Push sends: a module's bytes and what it says about
// itself.
type Module struct {
	// File is the module's file name ("echo.wasm"), the layer's title.
	File string
	// Bytes are the module's bytes.
	Bytes []byte
	// Capabilities are the grant strings the module requests.
	Capabilities []string
	// Describe is the module's describe document, nil for none.
	Describe json.RawMessage
}

// wasmConfig is the CNCF Wasm OCI artifact's config. Created is left out
// so that pushing the same module twice gives the same digest.
type wasmConfig struct {
	Architecture string   `json:"architecture"`
	OS           string   `json:"os"`
	LayerDigests []string `json:"layerDigests"`
}

// Push uploads m to reference (REGISTRY/REPOSITORY:TAG) as a Wasm OCI
// artifact and returns its manifest's digest.
func (c *Client) Push(ctx context.Context, reference string, m Module) (string, error) {
	ref, err := ParseReference(reference)
	if err != nil {
		return "", err
	}
	if len(m.Bytes) == 0 {
		return "", fmt.Errorf("oci: %s is empty: nothing to push", m.File)
	}
	repo, err := c.repository(ref)
	if err != nil {
		return "", err
	}
	layer := content.NewDescriptorFromBytes(MediaTypeWasm, m.Bytes)
	layer.Annotations = map[string]string{annotationTitle: filepath.Base(m.File)}
	cfgBytes, err := json.Marshal(wasmConfig{Architecture: "wasm", OS: "wasip1", LayerDigests: []string{layer.Digest.String()}})
	if err != nil {
		return "", fmt.Errorf("oci: %w", err)
	}
	cfg := content.NewDescriptorFromBytes(MediaTypeWasmConfig, cfgBytes)

	caps := m.Capabilities
	if caps == nil {
		caps = []string{}
	}
	capsJSON, err := json.Marshal(caps)
	if err != nil {
		return "", fmt.Errorf("oci: %w", err)
	}
	ann := map[string]string{AnnotationCapabilities: string(capsJSON)}
	if len(m.Describe) > 0 {
		var b bytes.Buffer
		if err := json.Compact(&b, m.Describe); err != nil {
			return "", fmt.Errorf("oci: the describe document is not JSON: %w", err)
		}
		if b.Len() <= maxDescribeAnnotation {
			ann[AnnotationDescribe] = b.String()
		}
	}
	man := ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		Config: cfg, Layers: []ocispec.Descriptor{layer}, Annotations: ann,
	}
	manBytes, err := json.Marshal(man)
	if err != nil {
		return "", fmt.Errorf("oci: %w", err)
	}
	manDesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, manBytes)

	for _, blob := range []struct {
		desc ocispec.Descriptor
		data []byte
	}{{cfg, cfgBytes}, {layer, m.Bytes}} {
		if ok, err := repo.Exists(ctx, blob.desc); err == nil && ok {
			continue
		}
		if err := repo.Push(ctx, blob.desc, bytes.NewReader(blob.data)); err != nil {
			return "", registryError("pushing a blob to", ref, err)
		}
	}
	if _, err := digest.Parse(ref.Reference); err == nil {
		if manDesc.Digest.String() != ref.Reference {
			return "", fmt.Errorf("oci: %s names digest %s, but the artifact's is %s: push to a tag", reference, ref.Reference, manDesc.Digest)
		}
		err = repo.Push(ctx, manDesc, bytes.NewReader(manBytes))
		if err != nil {
			return "", registryError("pushing to", ref, err)
		}
		return manDesc.Digest.String(), nil
	}
	if err := repo.PushReference(ctx, manDesc, bytes.NewReader(manBytes), ref.Reference); err != nil {
		return "", registryError("pushing to", ref, err)
	}
	return manDesc.Digest.String(), nil
}
