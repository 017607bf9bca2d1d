package memory

import "github.com/autoagent-go/autoagent/internal/bm25"

// tokenize is the BM25 tokenizer (package internal/bm25), which fact
// extraction reuses.
func tokenize(s string) []string { return bm25.Tokenize(s) }

// bm25Index is internal/bm25's index in memory's own vocabulary.
type bm25Index struct{ x *bm25.Index }

func newBM25Index() *bm25Index { return &bm25Index{bm25.New()} }

func (i *bm25Index) len() int                  { return i.x.Len() }
func (i *bm25Index) has(id int64) bool         { return i.x.Has(id) }
func (i *bm25Index) ids() []int64              { return i.x.IDs() }
func (i *bm25Index) add(id int64, text string) { i.x.Add(id, text) }
func (i *bm25Index) remove(id int64)           { i.x.Remove(id) }

// scoreList returns every document with a positive score for query, in no
// particular order.
func (i *bm25Index) scoreList(query string) []scored {
	list := i.x.ScoreList(query)
	out := make([]scored, len(list))
	for k, s := range list {
		out[k] = scored{s.ID, s.Score}
	}
	return out
}

// score returns the positive score of every document matching query.
func (i *bm25Index) score(query string) map[int64]float64 { return i.x.Score(query) }
