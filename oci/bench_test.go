package oci

import (
	"context"
	"testing"
)

// BenchmarkPullVerify3MB pulls a 3 MB module from the registry on
// loopback and verifies its cosign signature (target ≤ 300 ms).
func BenchmarkPullVerify3MB(b *testing.B) {
	reg := startRegistry(b)
	c := testClient()
	ctx := context.Background()
	keys := b.TempDir()
	sv, pub := keyPair(b, keys, "alice")
	trust := writeSigners(b, keys, Signer{Name: "alice", Key: pub, References: []string{reg.Host + "/tools/*"}})
	ref := reg.Host + "/tools/big:1"
	if _, err := c.Push(ctx, ref, Module{File: "big.wasm", Bytes: module("big", 3<<20)}); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Sign(ctx, ref, sv); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(3 << 20)
	for b.Loop() {
		if _, signer, _, _, err := PullVerified(ctx, c, trust, ref, false); err != nil || signer == nil {
			b.Fatal(err)
		}
	}
}
