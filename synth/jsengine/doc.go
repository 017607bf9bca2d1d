// Command jsengine is the JavaScript engine that runs the tools a model
// writes in JavaScript: goja, an ECMAScript 2020+ interpreter written in
// Go, compiled to WebAssembly (GOOS=wasip1) as an Extism plugin, so a
// JavaScript tool runs in the same sandbox as any other tool module and no
// JavaScript toolchain is needed at run time.
//
// Build it from the repository root with
//
//	make synth-engine
//
// which runs, in this directory,
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../.cache/synth/jsengine.wasm .
//
// # The script
//
// One module serves every JavaScript tool: the tool's script is not in the
// module but in its configuration, under the key "script": the tool's
// describe sidecar carries it in its "config" object, which the host hands
// to the guest (host/ABI.md §1.3) and the manifest pins with the
// module. Keeping the module identical for every tool means it is compiled
// to machine code once and served from the disk cache afterwards.
//
// The script defines a function run(args) that takes the call's arguments
// (a JSON object) and returns a JSON value, or a promise of one:
//
//	function run(args) {
//		return { words: args.text.split(/\s+/).filter(Boolean).length };
//	}
//
// The result is the JSON of the returned value, computed with the built-in
// JSON.stringify as it was before the script ran (a script that replaces
// JSON or pollutes prototypes changes only its own result, never the shape
// of the reply). It is sent as the text of the tool's result and, when it
// is an object, as its structured content. A thrown error, a syntax error,
// a missing run function or a value JSON cannot represent ends the call
// with an error result naming the problem, followed by the end of what the
// script wrote with console.log.
//
// # What a script can reach
//
// Nothing but its arguments: no require, no files, no network, no
// environment, no timers. Date and Math.random read the sandbox's clock and
// random source: the real clock (to the millisecond) and cryptographic
// randomness, fixed and seeded on a host with Options.Deterministic.
// Math.random is a generator each runtime seeds from that source when the
// script first draws (random.go), so instances the host starts from one
// snapshot draw their own numbers; the module says so to the host by
// exporting autoagent_shared_seeds (sharedseeds_wasip1.go).
// Recursion deeper than 10000 calls throws a RangeError;
// time, memory and output are bounded by the host's limits.
//
// # Host tools (code mode)
//
// Built with -tags toolbridge the engine also offers tools.call(name, args),
// which calls the host tool name through the host's tool_call function and
// returns its structured content (or text), throwing when the tool reports
// an error. That build imports tool_call, so it loads only with a
// tools:NAME grant; the default build imports nothing that needs a grant.
// Without the tag tools.call throws.
//
// A code-mode program (configuration key "mode" set to "program") is the
// body of an async function calling tools.NAME(args). One whose only
// awaits are on those calls runs without them, as a plain function
// (syncprogram.go: the rule, and why nothing observable changes), and a
// call's arguments are encoded in Go as JSON.stringify encodes them
// (argsjson.go); in such a program an object literal's keys are taken
// from the source rather than listed at run time (literalargs.go).
package main
