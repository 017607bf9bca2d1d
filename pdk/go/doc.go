// Package pdk is the guest-side kit for writing autoagent tools in Go: it
// turns ordinary Go functions into a WebAssembly module that exports the
// Extism `describe` and `call` functions the autoagent host (and any
// Extism host) loads.
//
//	package main
//
//	import (
//		"context"
//		"strings"
//
//		pdk "github.com/autoagent-go/autoagent/pdk/go"
//	)
//
//	type ShoutIn struct {
//		Text string `json:"text" jsonschema:"the text to shout"`
//	}
//
//	func init() {
//		pdk.Register(pdk.NewTool("shout", "Upper-cases text.",
//			func(ctx context.Context, in ShoutIn) (string, error) {
//				return strings.ToUpper(in.Text), nil
//			}))
//	}
//
//	func main() {}
//
// Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -ldflags="-s -w" -o shout.wasm .
//
// or `autoagent tools build .`, which runs the same command.
//
// # Tools
//
// [NewTool] has the signature of the host's tool.New: the input schema is
// derived from the In struct (json tags name the properties, fields without
// omitempty or omitzero are required, unknown properties are refused, the
// `jsonschema` tag is the description and the `enum` tag lists allowed
// values). Arguments are checked against it before the function runs, so
// a handler only ever sees well-formed input. The function's Out becomes
// the result: a string is sent as text, a [Result] is sent as is, anything
// else is sent as JSON text and, when it is an object, as structured
// content.
//
// # Errors
//
// A tool's failure is a result the model reads, never a crash: an error
// returned by the function, a panic inside it, arguments that do not fit
// the schema and an unknown tool name all become results with isError set.
// The message is the error's text, so write it for the model ("file not
// found: notes.txt", not "ENOENT").
//
// # Capabilities
//
// A module can do nothing the host did not grant. The grants a tool needs
// are declared with [RequestCapabilities] and reported by describe, so an
// operator sees them before approving the module. Inside the module:
//
//   - files: the normal os package, inside the directories granted with
//     fs.read:PATH, fs.write:PATH or fs.workspace:PATH (WASI preopens at the
//     same path; under fs.workspace the host journals each change first);
//   - network: [Fetch] and [Get], for hosts granted with net:HOST;
//   - key-value storage: [KV], for namespaces granted with kv:NAMESPACE;
//   - configuration: [Config] (environment variables granted with env:NAME
//     also arrive here and through os.Getenv);
//   - logging: [Log], shown by the host at its log level;
//   - per-instance variables: [GetVar] and [SetVar].
//
// Outside a WebAssembly host (go test on your machine) the package builds
// too: [Call] and [Describe] run the registered tools in-process, and the
// capability functions return [ErrNoHost], so tools can be unit-tested
// with the normal toolchain.
//
// # Memory
//
// A module instance lives across many calls and WebAssembly memory never
// shrinks, so every byte a call keeps raises the module's footprint for
// good. The kit reads each call's input into a reused buffer (dropped when
// it grew beyond 1 MiB), frees every block it takes from the host as soon
// as it has copied it, runs a garbage collection after a call that moved
// more than 256 KiB, and sets a soft Go memory limit of 48 MiB (below the
// host's default 64 MiB cap; GOMEMLIMIT overrides it) so the collector
// works harder before the host would kill the instance. Tool code should
// not keep growing caches in package variables for the same reason.
//
// # Host functions
//
// The `//go:wasmimport` declarations of the host's functions and the
// copies between the module's memory and the host's blocks are the
// subpackage [github.com/autoagent-go/autoagent/pdk/go/extism], the one
// binding autoagent's Go guests share: this package, the entry point of a
// tool a model writes in Go, and the JavaScript engine.
package pdk
