package memory

import (
	"math"
	"strings"
	"unicode"
)

// BM25 parameters: the usual defaults, which suit short documents such as
// one-sentence facts well.
const (
	bm25K1 = 1.5
	bm25B  = 0.75
)

// tokenize lower-cases s and splits it on anything that is not a letter
// or a digit (any script, accents kept), dropping one-rune tokens.
func tokenize(s string) []string {
	fields := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	out := fields[:0]
	for _, f := range fields {
		if len([]rune(f)) >= 2 {
			out = append(out, f)
		}
	}
	return out
}

// bm25Index scores documents against a query with Okapi BM25. Documents
// are added and removed incrementally, so a store of many facts is never
// re-tokenised on a change. Not safe for concurrent use.
type bm25Index struct {
	docs     map[int64]bm25Doc
	postings map[string]map[int64]int
	totalLen int
}

type bm25Doc struct {
	terms  []string // distinct terms, for removal
	length int
}

func newBM25Index() *bm25Index {
	return &bm25Index{docs: make(map[int64]bm25Doc), postings: make(map[string]map[int64]int)}
}

func (x *bm25Index) len() int { return len(x.docs) }

func (x *bm25Index) has(id int64) bool { _, ok := x.docs[id]; return ok }

// add indexes text under id, replacing what id held before.
func (x *bm25Index) add(id int64, text string) {
	x.remove(id)
	toks := tokenize(text)
	tf := make(map[string]int, len(toks))
	for _, t := range toks {
		tf[t]++
	}
	d := bm25Doc{terms: make([]string, 0, len(tf)), length: len(toks)}
	for t, n := range tf {
		d.terms = append(d.terms, t)
		p := x.postings[t]
		if p == nil {
			p = make(map[int64]int)
			x.postings[t] = p
		}
		p[id] = n
	}
	x.docs[id] = d
	x.totalLen += d.length
}

// remove drops id from the index.
func (x *bm25Index) remove(id int64) {
	d, ok := x.docs[id]
	if !ok {
		return
	}
	for _, t := range d.terms {
		p := x.postings[t]
		delete(p, id)
		if len(p) == 0 {
			delete(x.postings, t)
		}
	}
	x.totalLen -= d.length
	delete(x.docs, id)
}

// score returns the positive BM25 score of every document matching query.
// A query term counts once per occurrence.
func (x *bm25Index) score(query string) map[int64]float64 {
	n := float64(len(x.docs))
	if n == 0 {
		return nil
	}
	avg := float64(x.totalLen) / n
	if avg == 0 {
		avg = 1
	}
	qtf := make(map[string]int)
	for _, t := range tokenize(query) {
		qtf[t]++
	}
	scores := make(map[int64]float64)
	for t, qc := range qtf {
		p := x.postings[t]
		if len(p) == 0 {
			continue
		}
		df := float64(len(p))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for id, tf := range p {
			dl := float64(x.docs[id].length)
			f := float64(tf)
			scores[id] += float64(qc) * idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*dl/avg))
		}
	}
	for id, s := range scores {
		if s <= 0 {
			delete(scores, id)
		}
	}
	return scores
}
