// Package manifest pins trust in WebAssembly tool modules to the sha256 of
// their exact bytes: a module runs with the capabilities a person approved
// for those bytes, and one changed byte revokes the approval.
//
// It also owns the grant grammar of DESIGN.md §4 ([ParseGrant]), shared by
// the manifest file, the CLI's --grant flags and the host.
//
//	g, err := manifest.ParseGrant("net:api.example.com")
//	if err != nil {
//		log.Fatal(err) // *manifest.GrantError says what is wrong
//	}
//	fmt.Println(g.MatchHost("api.example.com", 443)) // true
//
// manifest imports nothing else of this module.
package manifest
