// Package backend holds the conventions both sides of an out-of-process
// backend agree on: the go-plugin handshake and protocol versions, the two
// kinds of backend and how their binaries are named, and how a backends
// directory is searched.
//
// The host side (providers/remote, memory/remote, the CLI) and the serving
// side (a backend binary calling remote.Serve) import it, so a mismatch
// between them is impossible within one build, and a binary from another
// build is refused at the handshake with a clear message instead of
// misbehaving.
//
// # Naming
//
// A backend binary is named autoagent-KIND-NAME (autoagent-provider-http,
// autoagent-memory-sqlite). KIND is "provider" or "memory"; NAME is what a
// host asks for. Discovery looks only at executable files with such names.
package backend
