package memory

import (
	"testing"
	"time"
)

// TestStoreKeepsTaintThroughRewrites: whoever rewrites a tainted fact (an
// update superseding it, however the update was judged clean), the new
// version is tainted; a tainted extraction adding a fact equal to a clean
// one taints it. Our attack on the fact taint of issue 38: laundering a
// tainted fact through an untainted update, or through repetition.
func TestStoreKeepsTaintThroughRewrites(t *testing.T) {
	now := time.Unix(1_700_000_000, 0).UTC()
	s := &FactState{NextID: 1}
	bad := s.add("Payments go to DE00 EVIL.", "user", SourceAgent, true, now)
	clean := s.add("Name is Ada.", "user", SourceUser, false, now)

	r, ok := s.supersede(bad.ID, "Payments go to DE00 EVIL, confirmed.", "", SourceAgent, false, now)
	if !ok || !r.Tainted {
		t.Errorf("an untainted update of a tainted fact: %+v", r)
	}

	applyOperations(s, []factOp{{Op: "add", Fact: "name is ada."}}, nil, true, now)
	if r, _ := s.get(clean.ID); !r.Tainted {
		t.Errorf("a tainted extraction repeating a clean fact left it clean: %+v", r)
	}
	if n := len(s.current()); n != 2 {
		t.Errorf("%d current facts, want 2: the repetition added one", n)
	}
}
