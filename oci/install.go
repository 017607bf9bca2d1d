package oci

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/autoagent-go/autoagent/internal/atomicfile"
	"github.com/autoagent-go/autoagent/internal/safefile"
	"github.com/autoagent-go/autoagent/manifest"
)

// ErrExists: the plugins directory holds other bytes under the name.
var ErrExists = errors.New("oci: a different module of that name is in the plugins directory")

// Record is what Install keeps beside a pulled module (NAME.source.json):
// where its bytes came from and the signature that was verified, so
// `tools approve` records the provenance and `tools verify` re-checks the
// signature without the registry.
type Record struct {
	Version int `json:"version"`
	// Reference, Repository, Digest: as [Artifact].
	Reference  string `json:"reference"`
	Repository string `json:"repository"`
	Digest     string `json:"digest"`
	// SHA256 is the module's sum: the record describes those bytes only.
	SHA256 string `json:"sha256"`
	// Layer, Index and Manifest: as [Artifact]; they bind Digest to
	// the module's bytes ([Record.Check]).
	Layer    string `json:"layer"`
	Index    []byte `json:"index,omitempty"`
	Manifest []byte `json:"manifest"`
	// Signer is the verified signer's identity, "" for an unsigned pull.
	Signer string `json:"signer,omitempty"`
	// Signature is the signature that verified, nil for an unsigned pull.
	Signature *Signature `json:"signature,omitempty"`
	PulledAt  time.Time  `json:"pulled_at"`
}

// SourceFile returns the provenance record's file name for a module file:
// "echo.wasm" → "echo.source.json".
func SourceFile(file string) string { return strings.TrimSuffix(file, ".wasm") + ".source.json" }

// Source returns the record as the manifest's provenance.
func (r *Record) Source() manifest.Source {
	return manifest.Source{Reference: r.Reference, Digest: r.Digest, Signer: r.Signer}
}

// maxRecord bounds a provenance record: its manifest, index and signature
// payload at their bound each and a bundle at its own, base64 in JSON,
// and room for the rest. Install refuses to write a larger one, so every
// record it writes reads back.
const maxRecord = (3*maxMetadata+maxBundle)*4/3 + 64<<10

// ReadRecord reads the provenance record beside the module file and
// returns it when it describes the bytes of sum; nil when there is none
// or it describes other bytes (a record left from an earlier pull).
func ReadRecord(moduleFile, sum string) (*Record, error) {
	data, err := safefile.Read(filepath.Join(filepath.Dir(moduleFile), SourceFile(filepath.Base(moduleFile))), maxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oci: reading %w", err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("oci: %s: %v", SourceFile(moduleFile), err)
	}
	if r.SHA256 != sum {
		return nil, nil
	}
	if err := r.Source().Validate(); err != nil {
		return nil, fmt.Errorf("oci: %s: %v", SourceFile(moduleFile), err)
	}
	return &r, nil
}

// Install writes the pulled module into dir as NAME.wasm, pending (no
// approval is made), with its provenance record beside it. Each file is
// replaced atomically, the record first: a crash leaves at most a record
// of bytes that are not there, which ReadRecord ignores. A NAME.wasm with
// other bytes is kept, and ErrExists returned, unless replace is set.
func Install(dir, name string, art *Artifact, signer *Signer, sig *Signature, replace bool) (string, error) {
	if !manifest.ValidName(name) {
		return "", fmt.Errorf("oci: %q is not a module name (1-128 letters, digits, '_', '.' or '-'): pass --name", name)
	}
	if sum := sha256.Sum256(art.Module); hex.EncodeToString(sum[:]) != art.SHA256 {
		return "", fmt.Errorf("%w: the module's bytes changed after the pull", ErrDigest)
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("oci: the plugins directory %s does not exist: create it first", dir)
	}
	path := filepath.Join(dir, name+".wasm")
	if old, err := safefile.Read(path, int64(len(art.Module))+1); err == nil {
		if bytes.Equal(old, art.Module) && !replace {
			replace = true // same bytes: only the record is refreshed
		}
		if !replace {
			return "", fmt.Errorf("%w: %s holds other bytes; pass --name to pull beside it, or use `autoagent tools update %s`", ErrExists, path, name)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		if !replace {
			return "", fmt.Errorf("%w: %s: %v", ErrExists, path, err)
		}
	}
	rec := Record{
		Version: 1, Reference: art.Reference, Repository: art.Repository, Digest: art.Digest,
		SHA256: art.SHA256, Layer: art.Layer, Index: art.Index, Manifest: art.Manifest, Signature: sig, PulledAt: time.Now().UTC().Truncate(time.Second),
	}
	if signer != nil {
		rec.Signer = signer.Identity()
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return "", fmt.Errorf("oci: %w", err)
	}
	if len(data)+1 > maxRecord {
		return "", fmt.Errorf("%w: the provenance record would be %d bytes, over %d", ErrTooLarge, len(data)+1, maxRecord)
	}
	if err := atomicfile.Write(filepath.Join(dir, SourceFile(name+".wasm")), append(data, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("oci: writing the provenance record: %w", err)
	}
	if err := atomicfile.Write(path, art.Module, 0o644); err != nil {
		return "", fmt.Errorf("oci: writing %s: %w", path, err)
	}
	return path, nil
}

// ErrRecord: a provenance record whose digest does not lead to the
// module it describes (edited, or copied beside other bytes).
var ErrRecord = errors.New("oci: the provenance record does not hold together")

// Check verifies, offline, that the record's digest leads to its module:
// Digest is the sha256 of the index (or manifest) recorded, the index
// lists the manifest, the manifest lists the layer, and a WebAssembly
// layer's digest is the module's sha256. An image layer (hyper-mcp's
// tar) cannot be re-read offline: its module was bound at pull time.
func (r *Record) Check() error {
	top := r.Manifest
	if r.Index != nil {
		top = r.Index
	}
	if digest.FromBytes(top).String() != r.Digest {
		return fmt.Errorf("%w: the recorded manifest is not %s", ErrRecord, r.Digest)
	}
	if r.Index != nil {
		var idx ocispec.Index
		if err := json.Unmarshal(r.Index, &idx); err != nil {
			return fmt.Errorf("%w: the recorded index: %v", ErrRecord, err)
		}
		md := digest.FromBytes(r.Manifest)
		if !slices.ContainsFunc(idx.Manifests, func(d ocispec.Descriptor) bool { return d.Digest == md }) {
			return fmt.Errorf("%w: the recorded index does not list the recorded manifest", ErrRecord)
		}
	}
	var man ocispec.Manifest
	if err := json.Unmarshal(r.Manifest, &man); err != nil {
		return fmt.Errorf("%w: the recorded manifest: %v", ErrRecord, err)
	}
	i := slices.IndexFunc(man.Layers, func(d ocispec.Descriptor) bool { return d.Digest.String() == r.Layer })
	if i < 0 {
		return fmt.Errorf("%w: the recorded manifest has no layer %s", ErrRecord, r.Layer)
	}
	if slices.Contains(wasmLayers, man.Layers[i].MediaType) && r.Layer != "sha256:"+r.SHA256 {
		return fmt.Errorf("%w: %s names the module %s, the record sha256 %s", ErrRecord, r.Digest, r.Layer, r.SHA256)
	}
	return nil
}
