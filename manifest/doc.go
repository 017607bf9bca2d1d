// Package manifest pins trust in WebAssembly tool modules to the sha256 of
// their exact bytes: a module runs with the capabilities a person approved
// for those bytes, and one changed byte voids the approval.
//
//	store := &manifest.Store{Path: "plugins/manifest.json"}
//	module, _ := os.ReadFile("plugins/fetch_url.wasm")
//	grant, _ := manifest.ParseGrant("net:api.example.com")
//	_, err := store.Approve(ctx, manifest.Approval{
//		SHA256:    manifest.Sum(module),
//		File:      "fetch_url.wasm",
//		Grants:    []manifest.Grant{grant},
//		Requested: []manifest.Grant{grant}, // what the module's describe asks for
//		By:        "alice",
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	m, _ := store.Load()
//	e, ok := m.Lookup(manifest.Sum(module)) // ok: run with e.Grants and e.Limits
//
// # The file
//
// The manifest (docs/ARCHITECTURE.md §5) is a JSON object meant to be committed:
//
//	{
//	  "version": 1,
//	  "tools": {
//	    "<sha256 hex>": {
//	      "file": "fetch_url.wasm",
//	      "name": "fetch_url",
//	      "grants": ["net:api.example.com"],
//	      "limits": {"memory_mb": 64, "timeout_ms": 5000},
//	      "approved_by": "alice",
//	      "approved_at": "2026-11-29T10:00:00Z",
//	      "note": "reviewed v1.2.0"
//	    }
//	  }
//	}
//
// limits may hold memory_mb, timeout_ms, output_bytes and
// http_response_bytes; an absent or zero limit is the host's default.
// sidecar_sha256 pins the describe sidecar (NAME.tool.json) of a module that
// has one, since it holds the tool descriptions the model reads.
// skip_tools lists regular expressions of tool names not to expose, each
// matching a whole name (hyper-mcp's skip_tools). tools lists the names of
// the tools the module offered when approved, so an approval can be
// revoked by a tool's name after its file changed (informational: what a
// module may do follows its sha256 and grants). note, limits,
// sidecar_sha256, skip_tools and tools are optional, every other field is
// required.
//
// Reading is strict, because this file decides what code may do: a syntax
// error, a duplicate key, an unknown field, a grant outside the grammar or a
// missing field is a *[ParseError] naming the file, the line and column and
// the field; a file of another version is refused ([ErrUnsupportedVersion]).
// Such a file is never treated as empty and never overwritten. Only a
// missing file is an empty manifest.
//
// # Changing it
//
// [Store.Approve] and [Store.Revoke] are read-modify-write cycles under an
// exclusive lock on PATH.lock (so concurrent writers in several processes
// never lose an entry), replace the file atomically, and append one line
// per change to the audit log PATH without ".json" + ".log.jsonl"
// ([AuditEntry], [ReadLog]). Approving grants beyond what the module requests
// is refused with an *[ExceedError] unless forced. Re-approving an edited
// module adds an entry for its new bytes; revoking a name removes every
// approval of that name.
//
// # Grants
//
// The package also owns the grant grammar of docs/ARCHITECTURE.md §4 ([ParseGrant]),
// shared by the manifest file, the CLI's --grant flags and the host:
//
//	net:HOST  net:*.HOST  net:HOST:PORT  net:[IPv6]:PORT
//	fs.read:/ABS/PATH  fs.write:/ABS/PATH  fs.workspace:/ABS/PATH
//	env:NAME  kv:NAMESPACE  tools:NAME  clock  random  state
//	config:KEY=VALUE  config:KEY=$VAR
//
// # Trusting a manifest
//
// A manifest is meant to be committed, so the one a program finds in a
// working directory is whoever wrote the checkout's. A [TrustStore] is one
// user's record, outside every checkout ([DefaultTrustPath]), of the
// content they trusted per manifest path: [TrustStore.Check] says whether
// a manifest's bytes ([Manifest.ContentSHA256]) are that content, with an
// *[UntrustedError] saying why not. A [Store] with Trust keeps this user's
// trust current across their own approvals and revocations of trusted
// content, never of content others wrote. The autoagent command judges
// every manifest it reads this way; a program that names its manifest
// itself need not.
//
//	ts := &manifest.TrustStore{Path: path} // path from manifest.DefaultTrustPath()
//	m, _ := store.Load()
//	if err := ts.Check(store.Path, m.ContentSHA256()); errors.Is(err, manifest.ErrUntrusted) {
//		// its approvals do not count: err says why and what to run
//	}
//
// # Verifying
//
// [Verify] checks a plugins directory against the manifest: which approved
// files changed or disappeared, and which modules have no approval.
//
// manifest imports nothing else of this module.
package manifest
