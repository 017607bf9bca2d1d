// Package host runs tools compiled to WebAssembly in a sandbox under
// wazero, giving each module only the capabilities it was granted, and
// exposes every tool a module describes as a [tool.Tool].
//
//	h, err := host.New(ctx, host.Options{}) // one per process
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer h.Close(ctx)
//	wasm, _ := os.ReadFile("plugins/fetch_url.wasm")
//	mod, err := h.Load(ctx, host.Module{
//		Name:   "fetch_url",
//		Bytes:  wasm,
//		Grants: []manifest.Grant{must(manifest.ParseGrant("net:api.example.com"))},
//	})
//	if err != nil {
//		log.Fatal(err) // malformed, no ABI, an import the host does not provide, a bad describe
//	}
//	defer mod.Close(ctx)
//	for _, t := range mod.Tools() {
//		registry.Add(t) // a tool.Tool like any other: the loop knows nothing of WebAssembly
//	}
//
// # Module ABIs
//
// A module is either an Extism plugin (it exports describe and call and
// exchanges MCP-shaped JSON through Extism's kernel, so plugins built with
// any Extism PDK run unchanged) or a WASI command (it exports _start, reads
// the call on stdin, writes the result on stdout, and ships a sidecar
// NAME.tool.json). host/ABI.md is the contract for guest authors: every
// function a guest may import and what each needs.
//
// # Capabilities
//
// A module gets nothing it was not granted (docs/ARCHITECTURE.md §4): net: through the
// host's own http_request, every hop checked against the grants and every
// resolved address checked at dial time (loopback, private, link-local and
// metadata addresses need an explicit IP grant); fs.read: and fs.write: as
// WASI preopens at the same path, which `..` and symlinks cannot leave;
// fs.workspace: as fs.write:, each file recorded by Options.Journal
// before the call's first change of it ([Journal]);
// env: as WASI environment and Extism config; kv: as a persistent store per
// namespace; clock, the real clock to the microsecond (without it, to the
// millisecond); random, recorded when used (randomness is cryptographic
// either way; Options.Deterministic fixes clock and randomness for tests
// and replays); tools: to call a host tool through
// Options.CallTool. Grants are asked at call time, as Extism does: a module
// that imports a capability function it was not granted loads, and each
// call of the function is refused (a [*DeniedError] ends the call; its
// record says denied); [Inspection.Ungranted] lists such imports. An
// import the host does not provide fails to load with an [*ImportError].
//
// # Limits and failures
//
// Each call runs under the module's [Limits] (memory, wall time, output,
// HTTP response and kv value sizes; [manifest.DefaultLimits] apply to zero fields).
// A call past a limit, a refused action, a crash or invalid output ends as
// an error Result the model reads ("tool exceeded its time limit of 10s");
// the instance is discarded and the host keeps serving. Tool.Call returns a
// Go error only when the call could not be attempted (the module was
// closed, the caller's context ended).
//
// # Performance
//
// Each distinct module is compiled once per process and its machine code is
// cached on disk (Options.CacheDir), so a new process is ready without
// compiling; for large modules the host also caches its own preparation
// (the rewritten bytes, the describe document) there. Each call gets a
// fresh instance by default: one an earlier call left, put back to the
// module's snapshot (its memories and globals as its initialisers left
// them), or one from a small pool of pre-initialised instances
// (Options.PoolSize) that refills in the background after calls, from the
// module's first call on (an initialiser runs with the module's grants);
// Module.Reuse keeps a warm instance across calls for modules that
// tolerate shared state, and the grant state makes one instance serve
// every call of a module. Extism memory lives in a small WebAssembly kernel beside
// each instance, so a guest's loads and stores never leave WebAssembly.
//
// The time limit costs compute-bound guests almost nothing: the host adds a
// counter check at loop headers and in functions that make calls, and the
// guest returns to the host every 10 000 checks, where it is stopped when
// its time is up (see host/ABI.md "What the host changes in a module").
//
// # Tool flags
//
// Each tool carries [tool.Flags] derived from its module's grants, which
// the author's MCP annotations may add to but never reduce: Egress for a
// net: grant; Untrusted for net: or an fs grant, or openWorldHint;
// Idempotent for a module without effects outside the call (no net,
// fs.write, fs.workspace, kv or tools grant) or with idempotentHint or readOnlyHint; and
// the grant strings as Permissions.
//
// # Observability
//
// Options.OnCall receives a [CallRecord] after every call: tool, module
// hash, grants and the grants the call used, refused actions, duration,
// memory peak and [Outcome]. host imports no tracing package; the
// application bridges the records to its traces.
package host
