// Package bm25 scores documents against a query with Okapi BM25, the
// ranking memory's recall and session search share:
//
//	x := bm25.New()
//	x.Add(1, "the door code is 4417B")
//	x.Add(2, "she prefers evening calls")
//	for _, s := range x.ScoreList("door code") { ... } // s.ID 1
package bm25

import (
	"math"
	"strings"
	"unicode"
)

// BM25 parameters: the usual defaults, which suit short documents such as
// one-sentence facts well.
const (
	k1 = 1.5
	b  = 0.75
)

// Tokenize lower-cases s and splits it on anything that is not a letter
// or a digit (any script, accents kept), dropping one-rune tokens.
func Tokenize(s string) []string {
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

// Index scores documents against a query with Okapi BM25. Documents
// are added and removed incrementally, so a store of many facts is never
// re-tokenised on a change. Documents live in dense slots so scoring
// accumulates into a reused slice instead of a map. Not safe for
// concurrent use.
type Index struct {
	slotOf   map[int64]int32
	docs     []doc // by slot; id 0 marks a free slot
	free     []int32
	postings map[string][]posting
	totalLen int
	acc      []float64 // scratch accumulator, by slot
	touched  []int32
}

type doc struct {
	id     int64
	terms  []string // distinct terms, for removal
	length int
}

// Scored is a document's id and its score.
type Scored struct {
	ID    int64
	Score float64
}

type posting struct {
	slot int32
	tf   int32
}

// New returns an empty index.
func New() *Index {
	return &Index{slotOf: make(map[int64]int32), postings: make(map[string][]posting)}
}

// Len is the number of indexed documents.
func (x *Index) Len() int { return len(x.slotOf) }

// Has reports whether id is indexed.
func (x *Index) Has(id int64) bool { _, ok := x.slotOf[id]; return ok }

// IDs returns the indexed ids, in no particular order.
func (x *Index) IDs() []int64 {
	out := make([]int64, 0, len(x.slotOf))
	for id := range x.slotOf {
		out = append(out, id)
	}
	return out
}

// Add indexes text under id, replacing what id held before.
func (x *Index) Add(id int64, text string) {
	x.Remove(id)
	toks := Tokenize(text)
	tf := make(map[string]int32, len(toks))
	for _, t := range toks {
		tf[t]++
	}
	var slot int32
	if n := len(x.free); n > 0 {
		slot, x.free = x.free[n-1], x.free[:n-1]
	} else {
		slot = int32(len(x.docs))
		x.docs = append(x.docs, doc{})
		x.acc = append(x.acc, 0)
	}
	d := doc{id: id, terms: make([]string, 0, len(tf)), length: len(toks)}
	for t, n := range tf {
		d.terms = append(d.terms, t)
		x.postings[t] = append(x.postings[t], posting{slot: slot, tf: n})
	}
	x.docs[slot] = d
	x.slotOf[id] = slot
	x.totalLen += d.length
}

// Remove drops id from the index.
func (x *Index) Remove(id int64) {
	slot, ok := x.slotOf[id]
	if !ok {
		return
	}
	d := x.docs[slot]
	for _, t := range d.terms {
		ps := x.postings[t]
		for i, p := range ps {
			if p.slot == slot {
				ps[i] = ps[len(ps)-1]
				ps = ps[:len(ps)-1]
				break
			}
		}
		if len(ps) == 0 {
			delete(x.postings, t)
		} else {
			x.postings[t] = ps
		}
	}
	x.totalLen -= d.length
	x.docs[slot] = doc{}
	x.free = append(x.free, slot)
	delete(x.slotOf, id)
}

// ScoreList returns every document with a positive BM25 score for query,
// in no particular order. A query term counts once per occurrence.
func (x *Index) ScoreList(query string) []Scored {
	n := float64(len(x.slotOf))
	if n == 0 {
		return nil
	}
	avg := float64(x.totalLen) / n
	if avg == 0 {
		avg = 1
	}
	qtf := make(map[string]int)
	for _, t := range Tokenize(query) {
		qtf[t]++
	}
	x.touched = x.touched[:0]
	for t, qc := range qtf {
		ps := x.postings[t]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			dl := float64(x.docs[p.slot].length)
			f := float64(p.tf)
			if x.acc[p.slot] == 0 {
				x.touched = append(x.touched, p.slot)
			}
			x.acc[p.slot] += float64(qc) * idf * f * (k1 + 1) / (f + k1*(1-b+b*dl/avg))
		}
	}
	out := make([]Scored, 0, len(x.touched))
	for _, slot := range x.touched {
		if s := x.acc[slot]; s > 0 {
			out = append(out, Scored{ID: x.docs[slot].id, Score: s})
		}
		x.acc[slot] = 0
	}
	return out
}

// Score returns the positive BM25 score of every document matching query.
func (x *Index) Score(query string) map[int64]float64 {
	list := x.ScoreList(query)
	if list == nil {
		return nil
	}
	m := make(map[int64]float64, len(list))
	for _, s := range list {
		m[s.ID] = s.Score
	}
	return m
}
