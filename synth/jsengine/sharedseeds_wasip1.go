//go:build wasip1

package main

// sharedSeeds declares to the host that the engine's instances may start
// from one snapshot although its start-up drew randomness (host/ABI.md
// §1): nothing a script draws comes from it, as Math.random is seeded
// during the call (random.go). The host never calls it. An engine built
// without it (before random.go) gets no snapshot, whoever loads it.
//
//go:wasmexport autoagent_shared_seeds
//lint:ignore U1000 exported to the host by go:wasmexport, which staticcheck does not see
func sharedSeeds() {}
