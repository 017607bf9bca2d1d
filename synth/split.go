package synth

import (
	"math"
	"math/rand/v2"
)

// DefaultHoldout is the share of examples held out by default.
const DefaultHoldout = 0.4

// split divides n example indices into shown and held-out, deterministically
// for a seed: a seeded shuffle, then the first round(n*holdout) (at least
// one, at most n-1) are held out. Fewer than two examples, or holdout <= 0,
// hold out nothing. Both lists keep the examples' original order.
func split(n int, holdout float64, seed uint64) (shown, held []int) {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	k := 0
	if n >= 2 && holdout > 0 {
		k = int(math.Round(float64(n) * holdout))
		k = max(1, min(k, n-1))
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r.Shuffle(n, func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	isHeld := make([]bool, n)
	for _, i := range idx[:k] {
		isHeld[i] = true
	}
	for i := 0; i < n; i++ {
		if isHeld[i] {
			held = append(held, i)
		} else {
			shown = append(shown, i)
		}
	}
	return shown, held
}
