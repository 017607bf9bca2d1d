package memory_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/memory"
)

// TestFactHammer mixes every operation from several goroutines on one
// memory backed by a JSON file; run with -race. At the end the store on
// disk and the memory agree, ids are unique, and nothing panicked.
func TestFactHammer(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.json")
	e := &conceptEmbed{}
	f := newFact(t, alwaysModel(), memory.FactOptions{Path: path, MaxMessages: 6, KeepRecent: 2, Embed: e.embed, MaxFacts: 300})
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range 15 {
				switch (g + i) % 5 {
				case 0:
					if _, err := f.Remember(ctx, fmt.Sprintf("goroutine %d remembers item %d about work", g, i), "user", ""); err != nil {
						t.Error(err)
					}
				case 1:
					if _, err := f.Recall(ctx, "work item metro", 3); err != nil {
						t.Error(err)
					}
				case 2:
					if _, _, err := f.Compact(ctx, session(fmt.Sprintf("g%d i%d: I take the metro to work.", g, i), "ok")); err != nil {
						t.Error(err)
					}
				case 3:
					if _, err := f.Forget(ctx, int64(i+1)); err != nil {
						t.Error(err)
					}
				case 4:
					_ = f.Facts(true)
					_ = f.History(int64(i + 1))
				}
			}
		})
	}
	wg.Wait()
	mem := f.Facts(true)
	seen := map[int64]bool{}
	for _, r := range mem {
		if seen[r.ID] {
			t.Fatalf("id %d twice", r.ID)
		}
		seen[r.ID] = true
	}
	g := newFact(t, nil, memory.FactOptions{Path: path})
	if disk := g.Facts(true); len(disk) != len(mem) {
		t.Errorf("store on disk has %d records, memory %d", len(disk), len(mem))
	}
}
