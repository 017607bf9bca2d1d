package manifest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

func benchManifest(b *testing.B, n int) []byte {
	b.Helper()
	var m Manifest
	gs := mustGrants(b, "net:api.example.com", "kv:notes", "clock")
	for i := range n {
		err := m.Put(Entry{SHA256: Sum(fmt.Appendf(nil, "%d", i)), File: fmt.Sprintf("tool%d.wasm", i), Name: fmt.Sprintf("tool%d", i),
			Grants: gs, Limits: Limits{Memory: 64 << 20}, ApprovedBy: "alice", ApprovedAt: fixedNow, Note: "reviewed"})
		if err != nil {
			b.Fatal(err)
		}
	}
	data, err := m.MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// Parsing is on the path of every plugins-directory reload.
func BenchmarkParse100(b *testing.B) {
	data := benchManifest(b, 100)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// One approval: lock, read, parse, write a temporary file, fsync, rename,
// fsync the directory, append and fsync the audit line. Dominated by the
// file system's fsync.
func BenchmarkApprove(b *testing.B) {
	s := &Store{Path: filepath.Join(b.TempDir(), "manifest.json"), Now: func() time.Time { return fixedNow }}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		if _, err := s.Approve(ctx, Approval{SHA256: Sum(fmt.Appendf(nil, "%d", i%50)), File: "a.wasm", By: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}
