package memory

import (
	"math"
	"slices"
	"testing"
)

func TestBM25ScoresByHand(t *testing.T) {
	x := newBM25Index()
	x.add(1, "Door code B4729")
	x.add(2, "the door is red")
	x.add(3, "cats")
	x.remove(2)
	x.add(2, "door is red") // re-added: replaces, never double counts
	got := x.score("door code")

	// N=3, lengths 3,3,1 (one-letter tokens dropped), avgdl=7/3.
	idfDoor := math.Log(1 + (3-2+0.5)/(2+0.5))
	idfCode := math.Log(1 + (3-1+0.5)/(1+0.5))
	tf := 2.5 / (1 + 1.5*(0.25+0.75*3/(7.0/3)))
	want := map[int64]float64{1: tf * (idfDoor + idfCode), 2: tf * idfDoor}
	if len(got) != len(want) {
		t.Fatalf("scores = %v, want %v", got, want)
	}
	for id, w := range want {
		if math.Abs(got[id]-w) > 1e-12 {
			t.Errorf("score[%d] = %.15f, want %.15f", id, got[id], w)
		}
	}
	// A repeated query term counts twice.
	twice := x.score("door door")
	if math.Abs(twice[2]-2*want[2]) > 1e-12 {
		t.Errorf("repeated term: %v, want %v", twice[2], 2*want[2])
	}
}

func TestTokenize(t *testing.T) {
	got := tokenize("Métro ligne A, puis B — 9h; Ünïcode-Wörds x2")
	want := []string{"métro", "ligne", "puis", "9h", "ünïcode", "wörds", "x2"}
	if !slices.Equal(got, want) {
		t.Errorf("tokenize = %q, want %q", got, want)
	}
}

func TestRankListTopKMatchesFullSort(t *testing.T) {
	for n := range 60 {
		list := make([]scored, n)
		for i := range list {
			// few distinct scores, so ties (broken by id) are common
			list[i] = scored{id: int64((i*37)%101 + 1), s: float64((i * 13) % 7)}
		}
		full := slices.Clone(list)
		slices.SortFunc(full, func(a, b scored) int {
			if a.s != b.s {
				if a.s > b.s {
					return -1
				}
				return 1
			}
			return int(a.id - b.id)
		})
		for _, k := range []int{0, 1, 3, n} {
			got := rankList(slices.Clone(list), k)
			want := make([]int64, 0, k)
			for _, x := range full[:min(k, n)] {
				want = append(want, x.id)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d k=%d: rankList = %v, want %v", n, k, got, want)
			}
		}
	}
}
