// Package oci ships WebAssembly tool modules through OCI registries: push a
// module as an artifact, pull it by digest with bounded reads, check its
// cosign signature against the plugins directory's signers file, and write
// it into the plugins directory as pending, never approved.
//
//	c := &oci.Client{}
//	art, err := c.Pull(ctx, "registry.example.com/tools/echo:1.0")
//	if err != nil { ... }
//	signer, err := trust.Verify(ctx, c, art) // *oci.Signers from signers.json
//	if err != nil { ... }
//	_, err = oci.Install("plugins", "echo", art, signer, false)
//
// # Layouts
//
// Push writes the CNCF Wasm OCI artifact layout: one layer of media type
// application/wasm, a config of application/vnd.wasm.config.v0+json, the
// module's requested capabilities and describe document as manifest
// annotations. Pull reads that layout, the older wasm-to-oci layer type,
// and hyper-mcp's images (a tar layer holding plugin.wasm), so what they
// publish pulls here and what is pushed here pulls with oras.
//
// # Signatures
//
// Signatures are cosign's, stored beside the artifact at the tag
// sha256-HEX.sig as simple-signing payloads naming the manifest digest
// (what `cosign sign --key` writes). They are verified with the Sigstore
// libraries against public keys the signers file trusts for a reference.
//
// This package, with its OCI and Sigstore dependencies, is imported by the
// command line only: the root package and the agent loop never link it.
package oci
