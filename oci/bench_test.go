package oci

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/autoagent-go/autoagent/internal/sigstoretest"
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

// BenchmarkPullVerifyKeyless3MB is BenchmarkPullVerify3MB with a keyless
// signature: the bundle found as a referrer and verified against the
// trusted root.
func BenchmarkPullVerifyKeyless3MB(b *testing.B) {
	reg := startRegistry(b)
	c := testClient()
	ctx := context.Background()
	ss := sigstoretest.New(b)
	dir := b.TempDir()
	ss.WriteRoot(filepath.Join(dir, TrustedRootFile), false)
	trust := writeSigners(b, dir, Signer{Name: "ci", Keyless: &Keyless{Issuer: "https://issuer.example", Subject: "ci@example.com"}, References: []string{reg.Host + "/tools/*"}})
	ref := reg.Host + "/tools/big:1"
	d, err := c.Push(ctx, ref, Module{File: "big.wasm", Bytes: module("big", 3<<20)})
	if err != nil {
		b.Fatal(err)
	}
	sigstoretest.Attach(b, reg.Host, "tools/big", d, ss.Sign("ci@example.com", "https://issuer.example", sigstoretest.Statement(reg.Host+"/tools/big", d)))
	b.SetBytes(3 << 20)
	for b.Loop() {
		if _, signer, _, _, err := PullVerified(ctx, c, trust, ref, false); err != nil || signer == nil {
			b.Fatal(err)
		}
	}
}
