package rank_test

import (
	"slices"
	"testing"

	"github.com/autoagent-go/autoagent/internal/rank"
)

func TestFuseRRF(t *testing.T) {
	// 1: 1/62+1/61 = 0.03252; 3: 1/61+1/63 = 0.03227; 2: 1/63+1/62 = 0.03200
	if got, want := rank.FuseRRF([]int64{3, 1, 2}, []int64{1, 2, 3}), []int64{1, 3, 2}; !slices.Equal(got, want) {
		t.Errorf("FuseRRF = %v, want %v", got, want)
	}
	if got := rank.FuseRRF([]int64{5, 4}, []int64{4, 5}); !slices.Equal(got, []int64{4, 5}) {
		t.Errorf("equal fused scores must break ties by id: %v", got)
	}
	// An id found by one ranking only still comes out, after those both
	// rankings found.
	if got := rank.FuseRRF([]int64{7, 8}, []int64{8, 9}); !slices.Equal(got, []int64{8, 7, 9}) {
		t.Errorf("FuseRRF = %v, want [8 7 9]", got)
	}
	// A repeat within one ranking counts once, at its first place.
	if got := rank.FuseRRF([]int64{1, 1, 1, 2}, []int64{2}); !slices.Equal(got, []int64{2, 1}) {
		t.Errorf("a repeated id counted more than once: %v", got)
	}
}
