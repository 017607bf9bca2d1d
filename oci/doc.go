// Package oci ships WebAssembly tool modules through OCI registries: push a
// module as an artifact, pull it by digest with bounded reads, check its
// cosign signature against the plugins directory's signers file, and write
// it into the plugins directory as pending, never approved.
//
//	c := &oci.Client{}
//	trust, err := oci.LoadSigners("plugins/signers.json")
//	if err != nil { ... }
//	art, signer, sig, _, err := oci.PullVerified(ctx, c, trust, "registry.example.com/tools/echo:1.0", false)
//	if err != nil { ... }
//	_, err = oci.Install("plugins", "echo", art, signer, sig, false)
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
// (what `cosign sign --key` writes in cosign v2), or Sigstore bundles
// naming a key attached as OCI referrers (what it writes in cosign v3).
// They are verified with the Sigstore libraries against public keys the
// signers file trusts for a reference.
//
// Keyless signatures are Sigstore bundles attached to the artifact as
// OCI referrers (what `cosign sign` writes without a key). sigstore-go
// verifies them offline against a trusted root file ([TrustedRootFile],
// [Signers.UseTrustedRoot]), and the certificate's issuer and subject
// must match a keyless identity ([Keyless]) the signers file trusts for
// the reference.
//
// This package, with its OCI and Sigstore dependencies, is imported by the
// command line only: the root package and the agent loop never link it.
package oci
