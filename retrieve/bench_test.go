package retrieve_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/autoagent-go/autoagent/retrieve"
)

// BenchmarkMemStoreSearch: one question against 10 000 chunks of 1 536
// dimensions (text-embedding-3-small's), the flat exact scan.
func BenchmarkMemStoreSearch(b *testing.B) {
	const n, dim = 10_000, 1536
	rng := rand.New(rand.NewPCG(1, 2))
	s := retrieve.NewMemStore()
	ids := make([]int64, n)
	vecs := make([][]float32, n)
	for i := range n {
		ids[i] = int64(i + 1)
		v := make([]float32, dim)
		for j := range v {
			v[j] = rng.Float32() - 0.5
		}
		vecs[i] = v
	}
	if err := s.Add(context.Background(), ids, vecs); err != nil {
		b.Fatal(err)
	}
	q := vecs[42]
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Search(context.Background(), q, 100); err != nil {
			b.Fatal(err)
		}
	}
}
