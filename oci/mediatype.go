package oci

// Media types of the artifacts Push writes and Pull reads (RATIONALE.md,
// "Why these media types for tool modules?").
const (
	// MediaTypeWasm is a WebAssembly module layer (the CNCF Wasm OCI
	// artifact layout, as Wassette and wasm-pkg-tools push).
	MediaTypeWasm = "application/wasm"
	// MediaTypeWasmConfig is that layout's config.
	MediaTypeWasmConfig = "application/vnd.wasm.config.v0+json"
	// mediaTypeWasmToOCI is the layer type of the older wasm-to-oci tool.
	mediaTypeWasmToOCI = "application/vnd.wasm.content.layer.v1+wasm"
	// mediaTypeWasmModule is Istio's (Solo's wasme) Wasm layer type.
	mediaTypeWasmModule = "application/vnd.module.wasm.content.layer.v1+wasm"

	// Image layers: hyper-mcp publishes a plugin as an image built from
	// a Dockerfile, the module at /plugin.wasm in one of its layers.
	mediaTypeLayerTar        = "application/vnd.oci.image.layer.v1.tar"
	mediaTypeLayerTarGzip    = "application/vnd.oci.image.layer.v1.tar+gzip"
	mediaTypeDockerLayerGzip = "application/vnd.docker.image.rootfs.diff.tar.gzip"

	mediaTypeOCIManifest    = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeOCIIndex       = "application/vnd.oci.image.index.v1+json"
	mediaTypeDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
	mediaTypeDockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"

	// mediaTypeSimpleSigning is a cosign signature layer: the payload
	// signed, its signature in an annotation.
	mediaTypeSimpleSigning = "application/vnd.dev.cosign.simplesigning.v1+json"
)

// Annotations Push writes on the manifest.
const (
	// AnnotationCapabilities holds the module's requested capabilities as
	// a JSON array of grant strings.
	AnnotationCapabilities = "dev.autoagent.tool.capabilities"
	// AnnotationDescribe holds the module's describe document, compact
	// JSON, when it is at most maxDescribeAnnotation bytes.
	AnnotationDescribe = "dev.autoagent.tool.describe"
	// annotationTitle names the layer's file (oras pull writes it there).
	annotationTitle = "org.opencontainers.image.title"
	// annotationSignature holds a cosign signature, base64.
	annotationSignature = "dev.cosignproject.cosign/signature"
	// annotationCertificate holds the Fulcio certificate of a keyless
	// signature in cosign's older format (beside the key signatures).
	annotationCertificate = "dev.sigstore.cosign/certificate"
)

// maxDescribeAnnotation bounds the describe document carried as an
// annotation; a larger one is left out (pull runs describe anyway).
const maxDescribeAnnotation = 64 << 10
