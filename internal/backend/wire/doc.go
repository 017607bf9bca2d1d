// Package wire is how values and errors cross the process boundary to a
// backend: a JSON gRPC codec selected per call, helpers to declare and call
// JSON methods without generated code, and an error encoding that keeps
// typed and sentinel errors intact.
//
// # Why JSON
//
// Every value that crosses (llm.Request, llm.Response, llm.Message,
// memory.Record) is already JSON-serialisable and round-trips through JSON
// without loss; the llm vocabulary is the schema. Declaring it a second time
// in protobuf would need a code generator in the build and a translation
// layer that must follow every change of the vocabulary. The codec is
// selected per call with a content subtype, so go-plugin's own services
// (health, broker, controller, stdio) keep their protobuf encoding on the
// same connection.
//
// # Errors
//
// Application errors travel in-band, in the Error field of each response
// message, never as gRPC status errors. A gRPC status error therefore always
// means the transport or the backend process failed, which is what the
// supervisor acts on.
package wire
