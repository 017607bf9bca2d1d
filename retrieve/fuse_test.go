package retrieve_test

import (
	"context"
	"errors"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/bm25"
	"github.com/autoagent-go/autoagent/retrieve"
)

func fixed(ps ...retrieve.Passage) retrieve.Retriever {
	return retrieve.Func(func(_ context.Context, _ string, k int) ([]retrieve.Passage, error) {
		return ps[:min(k, len(ps))], nil
	})
}

func TestFuseRanksByReciprocalRank(t *testing.T) {
	a, b, c := retrieve.Passage{Source: "a", Text: "A"}, retrieve.Passage{Source: "b", Text: "B"}, retrieve.Passage{Source: "c", Text: "C"}
	bad := retrieve.Func(func(context.Context, string, int) ([]retrieve.Passage, error) { return nil, errors.New("store down") })
	bUntrusted := b
	bUntrusted.Untrusted = true
	got, err := retrieve.Fuse(fixed(a, b), fixed(bUntrusted, c), bad).Retrieve(context.Background(), "q", 3)
	if err == nil || !strings.Contains(err.Error(), "store down") {
		t.Errorf("a failing source's error is lost: %v", err)
	}
	var order []string
	for _, p := range got {
		order = append(order, p.Source)
	}
	// b: 1/62 + 1/61; a: 1/61; c: 1/62.
	if strings.Join(order, "") != "bac" {
		t.Fatalf("fused order %v, want b a c", order)
	}
	if !got[0].Untrusted {
		t.Error("a passage one source marks untrusted came out trusted")
	}
	if got, _ := retrieve.Fuse(fixed(a, b, c)).Retrieve(context.Background(), "q", 2); len(got) != 2 {
		t.Errorf("k = 2 gave %d passages", len(got))
	}
}

// hashEmbed is a deterministic embedder: each token of a text adds one at
// a coordinate chosen by its hash, so texts sharing words point alike, and
// a synonym table lets the semantic ranking find what BM25 cannot.
func hashEmbed(synonyms map[string]string) retrieve.Embedder {
	return func(ctx context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, s := range texts {
			v := make([]float32, 64)
			for _, tok := range bm25.Tokenize(s) {
				if syn, ok := synonyms[tok]; ok {
					tok = syn
				}
				h := fnv.New32a()
				h.Write([]byte(tok))
				v[h.Sum32()%64]++
			}
			out[i] = v
		}
		return out, nil
	}
}

// TestFilesHybrid: with an embedder, a chunk BM25 cannot find (no shared
// word) is found through its embedding and fused with the lexical
// ranking; when the query cannot be embedded the lexical ranking comes
// back with ErrEmbed.
func TestFilesHybrid(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "p1.md", "The automobile is parked in bay four.")
	write(t, dir, "p2.md", "The bicycle is chained near the vehicle entrance.")
	embed := hashEmbed(map[string]string{"car": "automobile"})
	f, err := retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{Embed: embed})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := f.Retrieve(context.Background(), "my car", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 || ps[0].Source != "p1.md:1" {
		t.Fatalf("hybrid passages %+v, want p1.md (the automobile) first (found by its embedding)", ps)
	}
	lexOnly, _ := retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{})
	if ps, _ := lexOnly.Retrieve(context.Background(), "my car", 2); len(ps) != 0 {
		t.Fatalf("BM25 alone found %+v: the test needs a chunk only embeddings find", ps)
	}
	calls := 0
	flaky := func(ctx context.Context, texts []string) ([][]float32, error) {
		calls++
		if calls > 1 {
			return nil, errors.New("quota exceeded")
		}
		return embed(ctx, texts)
	}
	f, err = retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{Embed: flaky})
	if err != nil {
		t.Fatal(err)
	}
	ps, err = f.Retrieve(context.Background(), "bicycle", 2)
	if !errors.Is(err, retrieve.ErrEmbed) || len(ps) != 1 || ps[0].Source != "p2.md:1" {
		t.Errorf("query embedding failed: %+v, %v; want the lexical ranking and ErrEmbed", ps, err)
	}
	failing := func(context.Context, []string) ([][]float32, error) { return nil, errors.New("no key") }
	if _, err := retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{Embed: failing}); err == nil || !strings.Contains(err.Error(), "no key") {
		t.Errorf("embedding the documents failed silently: %v", err)
	}
	short := func(context.Context, []string) ([][]float32, error) { return [][]float32{{1}}, nil }
	if _, err := retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{Embed: short}); err == nil {
		t.Error("an embedder answering fewer vectors than texts was accepted")
	}
}

func TestMemStore(t *testing.T) {
	s := retrieve.NewMemStore()
	must(t, s.Add(context.Background(), []int64{1, 2, 3}, [][]float32{{1, 0}, {0, 1}, {1, 1}}))
	must(t, s.Add(context.Background(), []int64{2}, [][]float32{{-1, 0}})) // replaced
	hits, err := s.Search(context.Background(), []float32{1, 0.1}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].ID != 1 || hits[1].ID != 3 {
		t.Errorf("hits %+v, want 1 then 3 (2 points away, so it does not count)", hits)
	}
	if hits, _ := s.Search(context.Background(), []float32{1, 0, 0}, 5); len(hits) != 0 {
		t.Errorf("vectors of another length matched: %+v", hits)
	}
	if err := s.Add(context.Background(), []int64{1}, nil); !errors.Is(err, retrieve.ErrInvalid) {
		t.Errorf("ids without vectors: %v", err)
	}
}
