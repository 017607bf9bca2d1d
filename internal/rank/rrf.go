// Package rank fuses rankings by Reciprocal Rank Fusion, the fusion
// memory's fact recall and package retrieve share:
//
//	rank.FuseRRF([]int64{3, 1, 2}, []int64{1, 2, 3}) // [1 3 2]
//
// A document's fused score is the sum over the rankings holding it of
// 1/(K+rank), rank counted from 1; ties go to the smaller id, so the order
// is reproducible.
package rank

import (
	"cmp"
	"slices"
)

// K is the fusion constant: 60, the value of the original paper
// (Cormack, Clarke and Büttcher, 2009). It damps the weight of the very
// first ranks, so one ranking's favourite does not win alone.
const K = 60

// Scored is an id with its fused score.
type Scored struct {
	ID    int64
	Score float64
}

// FuseRRF merges rankings (each a list of ids, best first) into one, best
// first. An id repeated within one ranking counts at its first place only.
func FuseRRF(rankings ...[]int64) []int64 {
	fused := FuseRRFScored(rankings...)
	out := make([]int64, len(fused))
	for i, x := range fused {
		out[i] = x.ID
	}
	return out
}

// FuseRRFScored is FuseRRF with each id's fused score.
func FuseRRFScored(rankings ...[]int64) []Scored {
	scores := make(map[int64]float64)
	for _, r := range rankings {
		seen := make(map[int64]bool, len(r))
		for i, id := range r {
			if seen[id] {
				continue
			}
			seen[id] = true
			scores[id] += 1.0 / float64(K+i+1)
		}
	}
	all := make([]Scored, 0, len(scores))
	for id, s := range scores {
		all = append(all, Scored{id, s})
	}
	slices.SortFunc(all, func(a, b Scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return all
}
