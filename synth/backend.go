package synth

import "context"

// Package is a tool ready for the host: the module and what the host needs
// besides it.
type Package struct {
	// Module is the WebAssembly module.
	Module []byte
	// Sidecar is the describe document (NAME.tool.json) to stage with the
	// module; nil when the module describes itself.
	Sidecar []byte
	// Config is Extism configuration the module needs at run time beyond
	// what its sidecar's "config" object gives it (host.Module.Config).
	Config map[string]string
	// Probe, when set, is the describe document the module is loaded with
	// in quarantine instead of Sidecar: it also offers the tool ProbeTool,
	// which checks the module without running the tool (the JavaScript
	// engine compiles the script and checks that it defines run). A
	// package whose probe fails is refused before any test runs.
	Probe     []byte
	ProbeTool string

	// sha is Module's digest when the back-end already knows it (the
	// JavaScript engine's, computed once); "" means compute it.
	sha string
}

// Backend turns source code in one language into a [Package]. The
// JavaScript back-end ([JavaScript]) needs nothing at run time but its
// engine module; the Go back-end ([Go]) needs the go command.
//
// A Backend is used by one Builder from many goroutines at once and must be
// safe for concurrent use.
type Backend interface {
	// Language names the language: "js", "go". The writer model and the
	// CLI's --lang use this name.
	Language() string
	// Guide tells the writer model how a tool is written in this language:
	// the entry point, what it receives and returns, what is available.
	Guide() string
	// Screen checks source for size and shape before anything is built.
	// A *RejectError is fed back to the model; other errors are failures of
	// the back-end itself.
	Screen(source string) error
	// Build packages source as a module offering the tool spec. A
	// *RejectError (a compile error) is fed back to the model; any other
	// error means the back-end could not build at all (no toolchain, no
	// engine) and stops the synthesis.
	Build(ctx context.Context, spec Spec, source string) (*Package, error)
}
