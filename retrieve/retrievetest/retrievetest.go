// Package retrievetest checks that a [retrieve.Retriever] or a
// [retrieve.Store] keeps the contract the agent loop relies on, the way
// testing/slogtest checks a slog.Handler.
//
//	func TestConformance(t *testing.T) {
//		retrievetest.Run(t, retrievetest.Options{
//			New: func(t *testing.T, texts []string) retrieve.Retriever {
//				return myretriever.Index(texts)
//			},
//		})
//		retrievetest.RunStore(t, func(t *testing.T) retrieve.Store {
//			return myvectordb.Open(t.TempDir())
//		})
//	}
//
// # What is checked
//
// Run gives the retriever a corpus of short texts, each holding one word
// no other text holds, and checks:
//
//   - a query naming a text's own word finds that text among the first
//     passages (the retriever searches what it was given);
//   - at most k passages, and none for k ≤ 0;
//   - best first: scores never rise;
//   - every passage has a source, and its text comes from the corpus
//     (nothing invented): it holds one text whole ([Options].Whole), or
//     is a part of one;
//   - the caller owns the slice: changing it changes no later answer;
//   - an empty query and a query matching nothing are no error;
//   - a context already ended gives an error or no passages, promptly;
//   - concurrent calls (run the suite with -race) answer as one call does.
//
// RunStore checks a vector store: ids and vectors of different counts are
// refused; Search gives at most k ids, best first, with their cosine
// similarity, only positive ones; vectors of another length and the zero
// vector are ignored; Add under an id replaces its vector; concurrent Add
// and Search are safe.
package retrievetest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/retrieve"
)

// Options configures Run.
type Options struct {
	// New returns a retriever over texts, each a passage-sized text of a
	// few sentences. Required.
	New func(t *testing.T, texts []string) retrieve.Retriever
	// Whole says the retriever returns each text whole, perhaps with
	// words of its own around it (a fact's subject); otherwise a
	// passage's text is a part of one text (a chunk).
	Whole bool
}

// corpus is the suite's texts: each holds one word (its key) that no
// other text holds, among words several share.
func corpus() (texts, keys []string) {
	keys = []string{"aardvark", "balalaika", "cormorant", "dulcimer", "espadrille", "flamingo", "gazpacho", "harpsichord"}
	for i, k := range keys {
		texts = append(texts, fmt.Sprintf("Note %d about the shared project. The %s was mentioned in the meeting about the shared project.", i, k))
	}
	return texts, keys
}

// Run checks the retriever opts.New makes.
func Run(t *testing.T, opts Options) {
	t.Helper()
	if opts.New == nil {
		t.Fatal("retrievetest: Options.New is required")
	}
	texts, keys := corpus()
	r := opts.New(t, texts)
	ctx := context.Background()

	check := func(t *testing.T, q string, k int, ps []retrieve.Passage) {
		t.Helper()
		if len(ps) > max(k, 0) {
			t.Fatalf("query %q, k=%d: %d passages", q, k, len(ps))
		}
		for i, p := range ps {
			if p.Source == "" {
				t.Errorf("query %q: passage %d has no source: %+v", q, i, p)
			}
			if strings.TrimSpace(p.Text) == "" {
				t.Errorf("query %q: passage %d has no text: %+v", q, i, p)
			}
			if !fromCorpus(p.Text, texts, opts.Whole) {
				t.Errorf("query %q: passage %d is not from the corpus: %q", q, i, p.Text)
			}
			if math.IsNaN(p.Score) {
				t.Errorf("query %q: passage %d scores NaN", q, i)
			}
			if i > 0 && p.Score > ps[i-1].Score {
				t.Errorf("query %q: passage %d scores %v after %v: not best first", q, i, p.Score, ps[i-1].Score)
			}
		}
	}

	t.Run("finds", func(t *testing.T) {
		for i, key := range keys {
			q := "what about the " + key + "?"
			ps, err := r.Retrieve(ctx, q, 3)
			if err != nil {
				t.Fatalf("query %q: %v", q, err)
			}
			check(t, q, 3, ps)
			if !slices.ContainsFunc(ps, func(p retrieve.Passage) bool { return strings.Contains(p.Text, key) }) {
				t.Errorf("query %q: text %d (%q) not among %d passages: %+v", q, i, texts[i], len(ps), ps)
			}
		}
	})
	t.Run("k", func(t *testing.T) {
		for _, k := range []int{-1, 0, 1, 2, 100} {
			ps, err := r.Retrieve(ctx, "the shared project meeting", k)
			if err != nil {
				t.Fatalf("k=%d: %v", k, err)
			}
			check(t, "the shared project meeting", k, ps)
			if k == 1 && len(ps) != 1 {
				t.Errorf("k=1 for a query every text matches: %d passages", len(ps))
			}
		}
	})
	t.Run("owned", func(t *testing.T) {
		q := "the " + keys[0]
		first, err := r.Retrieve(ctx, q, 3)
		if err != nil || len(first) == 0 {
			t.Fatalf("query %q: %v, %d passages", q, err, len(first))
		}
		want := slices.Clone(first)
		for i := range first {
			first[i] = retrieve.Passage{Source: "changed", Text: "changed"}
		}
		again, err := r.Retrieve(ctx, q, 3)
		if err != nil || !slices.Equal(again, want) {
			t.Fatalf("after the caller changed the first answer: %+v, %v; want %+v", again, err, want)
		}
	})
	t.Run("nothing", func(t *testing.T) {
		for _, q := range []string{"", "   ", "zyzzyva quokka"} {
			ps, err := r.Retrieve(ctx, q, 3)
			if err != nil {
				t.Errorf("query %q: %v", q, err)
			}
			check(t, q, 3, ps)
		}
	})
	t.Run("ended", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		ps, err := r.Retrieve(c, "the "+keys[1], 3)
		if err == nil && len(ps) > 0 {
			t.Errorf("an ended context: %d passages and no error", len(ps))
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		want := make([][]retrieve.Passage, len(keys))
		for i, key := range keys {
			ps, err := r.Retrieve(ctx, "the "+key, 2)
			if err != nil {
				t.Fatal(err)
			}
			want[i] = ps
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4*len(keys))
		for range 4 {
			for i, key := range keys {
				wg.Go(func() {
					ps, err := r.Retrieve(ctx, "the "+key, 2)
					if err != nil {
						errs <- err
					} else if !slices.Equal(ps, want[i]) {
						errs <- fmt.Errorf("query %q concurrently: %+v, alone: %+v", key, ps, want[i])
					}
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// fromCorpus reports whether text holds one of texts (whole) or is a
// part of one, its surrounding space aside.
func fromCorpus(text string, texts []string, whole bool) bool {
	text = strings.TrimSpace(text)
	for _, c := range texts {
		c = strings.TrimSpace(c)
		if whole && strings.Contains(text, c) || !whole && strings.Contains(c, text) {
			return true
		}
	}
	return false
}

// RunStore checks the store newStore makes (a new, empty one each call).
func RunStore(t *testing.T, newStore func(t *testing.T) retrieve.Store) {
	t.Helper()
	ctx := context.Background()
	t.Run("counts", func(t *testing.T) {
		s := newStore(t)
		if err := s.Add(ctx, []int64{1, 2}, [][]float32{{1, 0}}); err == nil {
			t.Error("two ids for one vector: no error")
		}
	})
	t.Run("search", func(t *testing.T) {
		s := newStore(t)
		if err := s.Add(ctx, []int64{1, 2, 3, 4, 5, 6}, [][]float32{
			{1, 0, 0}, {0.8, 0.6, 0}, {0, 1, 0}, {-1, 0, 0}, {1, 0}, {0, 0, 0},
		}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Search(ctx, []float32{1, 0, 0}, 10)
		if err != nil {
			t.Fatal(err)
		}
		// 3 is orthogonal, 4 opposite: no positive similarity; 5 has
		// another length; 6 is the zero vector.
		if len(got) != 2 || got[0].ID != 1 || got[1].ID != 2 {
			t.Fatalf("search: %+v, want ids 1 then 2", got)
		}
		if math.Abs(got[0].Score-1) > 1e-6 || math.Abs(got[1].Score-0.8) > 1e-6 {
			t.Errorf("scores %v and %v, want the cosines 1 and 0.8", got[0].Score, got[1].Score)
		}
		if got, err := s.Search(ctx, []float32{1, 0, 0}, 1); err != nil || len(got) != 1 || got[0].ID != 1 {
			t.Errorf("k=1: %+v, %v", got, err)
		}
		for _, k := range []int{0, -1} {
			if got, err := s.Search(ctx, []float32{1, 0, 0}, k); err != nil || len(got) != 0 {
				t.Errorf("k=%d: %+v, %v", k, got, err)
			}
		}
		if got, err := s.Search(ctx, []float32{0, 0, 0}, 5); err != nil || len(got) != 0 {
			t.Errorf("the zero vector as query: %+v, %v", got, err)
		}
	})
	t.Run("replace", func(t *testing.T) {
		s := newStore(t)
		if err := s.Add(ctx, []int64{7}, [][]float32{{1, 0}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Add(ctx, []int64{7}, [][]float32{{0, 1}}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Search(ctx, []float32{1, 0}, 5); err != nil || len(got) != 0 {
			t.Errorf("the replaced vector still found: %+v, %v", got, err)
		}
		if got, err := s.Search(ctx, []float32{0, 1}, 5); err != nil || len(got) != 1 || got[0].ID != 7 {
			t.Errorf("the new vector: %+v, %v", got, err)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		s := newStore(t)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 50 {
					id := int64(g*1000 + i)
					if err := s.Add(ctx, []int64{id}, [][]float32{{float32(i + 1), 1}}); err != nil {
						t.Error(err)
						return
					}
					if _, err := s.Search(ctx, []float32{1, 1}, 3); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if got, err := s.Search(ctx, []float32{1, 1}, 1000); err != nil || len(got) != 200 {
			t.Errorf("after 200 concurrent adds: %d found, %v", len(got), err)
		}
	})
}
