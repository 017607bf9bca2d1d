package memory

import (
	"cmp"
	"slices"
)

// rrfK is the Reciprocal Rank Fusion constant: a document's fused score is
// the sum over rankings of 1/(rrfK+rank). 60 is the value of the original
// paper; it damps the weight of the very first ranks.
const rrfK = 60

// ranked returns the ids of scores, best first, ties by ascending id (a
// stable, reproducible order).
func ranked(scores map[int64]float64) []int64 {
	ids := make([]int64, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b int64) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return ids
}

// fuseRRF merges rankings (each best first) by Reciprocal Rank Fusion.
func fuseRRF(rankings ...[]int64) []int64 {
	scores := make(map[int64]float64)
	for _, r := range rankings {
		for i, id := range r {
			scores[id] += 1.0 / float64(rrfK+i+1)
		}
	}
	return ranked(scores)
}
