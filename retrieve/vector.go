package retrieve

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/autoagent-go/autoagent/internal/rank"
)

// Embedder returns one embedding vector per text, in order: the
// signature of openai.Provider.Embed, gemini.Provider.Embed and
// memory.EmbedFunc.
type Embedder func(ctx context.Context, texts []string) ([][]float32, error)

// Store keeps embedding vectors under ids and finds those nearest a query
// vector. [MemStore] is the embedded default; a store backed by a vector
// database implements the same two methods.
type Store interface {
	// Add stores vectors[i] under ids[i], replacing what an id held. The
	// store may keep the slices; the caller does not change them after.
	Add(ctx context.Context, ids []int64, vectors [][]float32) error
	// Search returns up to k ids whose vectors are nearest v by cosine
	// similarity, best first, with that similarity; only positive
	// similarities count. Vectors of another length than v are ignored.
	Search(ctx context.Context, v []float32, k int) ([]rank.Scored, error)
}

// MemStore is a [Store] in process memory: a flat scan, exact, which is
// fast enough for the tens of thousands of chunks a directory of
// documents gives. Safe for concurrent use.
type MemStore struct {
	mu    sync.RWMutex
	slot  map[int64]int
	ids   []int64
	vecs  [][]float32
	norms []float64
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{slot: make(map[int64]int)} }

// Add implements [Store].
func (s *MemStore) Add(_ context.Context, ids []int64, vectors [][]float32) error {
	if len(ids) != len(vectors) {
		return fmt.Errorf("%w: %d ids for %d vectors", ErrInvalid, len(ids), len(vectors))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, id := range ids {
		n := norm(vectors[i])
		if j, ok := s.slot[id]; ok {
			s.vecs[j], s.norms[j] = vectors[i], n
			continue
		}
		s.slot[id] = len(s.ids)
		s.ids = append(s.ids, id)
		s.vecs = append(s.vecs, vectors[i])
		s.norms = append(s.norms, n)
	}
	return nil
}

// Search implements [Store].
func (s *MemStore) Search(ctx context.Context, v []float32, k int) ([]rank.Scored, error) {
	qn := norm(v)
	if k <= 0 || qn == 0 {
		return nil, ctx.Err()
	}
	s.mu.RLock()
	var out []rank.Scored
	for i, w := range s.vecs {
		if len(w) != len(v) || s.norms[i] == 0 {
			continue
		}
		var dot float64
		for j, a := range w {
			dot += float64(a) * float64(v[j])
		}
		if c := dot / (s.norms[i] * qn); c > 0 {
			out = append(out, rank.Scored{ID: s.ids[i], Score: c})
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, byScore)
	return out[:min(k, len(out))], ctx.Err()
}

func norm(v []float32) float64 {
	var s float64
	for _, a := range v {
		s += float64(a) * float64(a)
	}
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return 0
	}
	return math.Sqrt(s)
}

// byScore orders best first, ties by ascending id.
func byScore(a, b rank.Scored) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}
