package bm25_test

import (
	"math"
	"slices"
	"testing"

	"github.com/autoagent-go/autoagent/internal/bm25"
)

// Scores by hand (Okapi BM25, k1 1.5, b 0.75), through Add, Remove and a
// re-Add that replaces.
func TestScoresByHand(t *testing.T) {
	x := bm25.New()
	x.Add(1, "Door code B4729")
	x.Add(2, "the door is red")
	x.Add(3, "cats")
	x.Remove(2)
	x.Add(2, "door is red")
	if x.Len() != 3 || !x.Has(2) || x.Has(9) {
		t.Fatalf("Len %d, Has(2) %v, Has(9) %v", x.Len(), x.Has(2), x.Has(9))
	}
	ids := x.IDs()
	slices.Sort(ids)
	if !slices.Equal(ids, []int64{1, 2, 3}) {
		t.Errorf("IDs %v", ids)
	}
	idfDoor := math.Log(1 + (3-2+0.5)/(2+0.5))
	idfCode := math.Log(1 + (3-1+0.5)/(1+0.5))
	tf := 2.5 / (1 + 1.5*(0.25+0.75*3/(7.0/3)))
	want := map[int64]float64{1: tf * (idfDoor + idfCode), 2: tf * idfDoor}
	got := x.Score("door code")
	if len(got) != 2 || math.Abs(got[1]-want[1]) > 1e-12 || math.Abs(got[2]-want[2]) > 1e-12 {
		t.Errorf("Score = %v, want %v", got, want)
	}
	list := x.ScoreList("door code")
	if len(list) != 2 {
		t.Fatalf("ScoreList = %v", list)
	}
	for _, s := range list {
		if math.Abs(s.Score-want[s.ID]) > 1e-12 {
			t.Errorf("ScoreList %v, want %v", list, want)
		}
	}
	x.Remove(1)
	if got := x.Score("code"); len(got) != 0 {
		t.Errorf("a removed document still scores: %v", got)
	}
	if got := bm25.Tokenize("A door, x2 — Métro"); !slices.Equal(got, []string{"door", "x2", "métro"}) {
		t.Errorf("Tokenize = %q", got)
	}
}
