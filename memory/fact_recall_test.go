package memory_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/memory"
)

// conceptEmbed is a deterministic embedding: one dimension per concept
// word family, so tests know the cosine of every pair.
type conceptEmbed struct {
	mu    sync.Mutex
	calls [][]string
	fail  bool
}

func (e *conceptEmbed) embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls = append(e.calls, slices.Clone(texts))
	fail := e.fail
	e.mu.Unlock()
	if fail {
		return nil, errors.New("embedding service down")
	}
	out := make([][]float32, len(texts))
	for i, s := range texts {
		s = strings.ToLower(s)
		v := make([]float32, 3)
		for _, w := range []string{"metro", "work", "commut"} {
			if strings.Contains(s, w) {
				v[0] = 1
			}
		}
		if strings.Contains(s, "bus") {
			v[1] = 1
		}
		if strings.Contains(s, "school") || strings.Contains(s, " to ") {
			v[2] = 1
		}
		out[i] = v
	}
	return out, nil
}

func (e *conceptEmbed) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.calls)
}

func recalledIDs(t *testing.T, f *memory.Fact, q string, k int) []int64 {
	t.Helper()
	rs, err := f.RecallFacts(context.Background(), q, k)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	return ids
}

func seedCommute(t *testing.T, f *memory.Fact) {
	t.Helper()
	for _, s := range []string{"Commutes by metro, line A then line B.", "His daughter takes bus 12.", "His son cycles to school."} {
		if _, err := f.Remember(context.Background(), s, "", ""); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFactRecallModes(t *testing.T) {
	e := &conceptEmbed{}
	q := "how does he get to work"
	for _, tt := range []struct {
		mode memory.RecallMode
		want []int64
	}{
		{memory.RecallLexical, []int64{3}},     // only "to" matches
		{memory.RecallSemantic, []int64{1, 3}}, // cosine 0.707 each, ties by id
		{memory.RecallHybrid, []int64{3, 1}},   // 3: 1/61+1/62 beats 1: 1/61
	} {
		f := newFact(t, nil, memory.FactOptions{Embed: e.embed, RecallMode: tt.mode})
		seedCommute(t, f)
		if got := recalledIDs(t, f, q, 5); !slices.Equal(got, tt.want) {
			t.Errorf("%s recall = %v, want %v", tt.mode, got, tt.want)
		}
	}
	// Without an embed function hybrid is lexical.
	f := newFact(t, nil, memory.FactOptions{})
	seedCommute(t, f)
	if got := recalledIDs(t, f, q, 5); !slices.Equal(got, []int64{3}) {
		t.Errorf("recall without embeddings = %v, want [3]", got)
	}
	if got := recalledIDs(t, f, "bus school metro", 2); len(got) != 2 {
		t.Errorf("recall k=2 returned %v", got)
	}
}

func TestFactRecallEmbeddingFailureFallsBack(t *testing.T) {
	e := &conceptEmbed{fail: true}
	f := newFact(t, nil, memory.FactOptions{Embed: e.embed})
	seedCommute(t, f)
	if got := recalledIDs(t, f, "how does he get to work", 5); !slices.Equal(got, []int64{3}) {
		t.Errorf("recall with a failing embedder = %v, want the lexical [3]", got)
	}
	bad := func(ctx context.Context, texts []string) ([][]float32, error) { return [][]float32{{1}}, nil }
	g := newFact(t, nil, memory.FactOptions{Embed: bad, RecallMode: memory.RecallSemantic})
	seedCommute(t, g)
	if got := recalledIDs(t, g, "how does he get to work", 5); !slices.Equal(got, []int64{3}) {
		t.Errorf("recall with a miscounting embedder = %v, want the lexical [3]", got)
	}
}

func TestFactVectorsAreStoredAndReused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "f.json")
	e := &conceptEmbed{}
	f := newFact(t, nil, memory.FactOptions{Path: path, Embed: e.embed, EmbedModel: "concept-v1", EmbedBatch: 2})
	seedCommute(t, f)
	recalledIDs(t, f, "work", 1)
	if e.count() != 3 { // 2 batches of facts + the query
		t.Fatalf("embed calls = %v, want two fact batches and one query", e.calls)
	}
	recalledIDs(t, f, "work", 1)
	if e.count() != 4 {
		t.Fatalf("second recall re-embedded facts: %v", e.calls)
	}
	side, err := os.ReadFile(path + ".vectors.json")
	if err != nil || !strings.Contains(string(side), `"model":"concept-v1"`) {
		t.Fatalf("vectors sidecar: %s, %v", side, err)
	}

	e2 := &conceptEmbed{}
	g := newFact(t, nil, memory.FactOptions{Path: path, Embed: e2.embed, EmbedModel: "concept-v1"})
	recalledIDs(t, g, "work", 1)
	if e2.count() != 1 {
		t.Errorf("a new memory on the same store re-embedded its facts: %v", e2.calls)
	}
	e3 := &conceptEmbed{}
	h := newFact(t, nil, memory.FactOptions{Path: path, Embed: e3.embed, EmbedModel: "other-model"})
	recalledIDs(t, h, "work", 1)
	if e3.count() != 2 {
		t.Errorf("vectors of another model were reused: %v", e3.calls)
	}

	// Forgetting a fact removes its vector from disk too.
	if ok, err := h.Forget(ctx, 1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	side, _ = os.ReadFile(path + ".vectors.json")
	if strings.Contains(string(side), `"1":`) {
		t.Errorf("vector of the forgotten fact is still stored: %s", side)
	}
}

func TestFactRecallSkipsStaleFactsAndFormats(t *testing.T) {
	ctx := context.Background()
	f := newFact(t, nil, memory.FactOptions{})
	_, _ = f.Remember(ctx, "Rent is 743 euros.", "user", "")
	msgs, err := f.Recall(ctx, "rent", 3)
	if err != nil || len(msgs) != 1 || msgs[0].Text() != "[Fact #1] Rent is 743 euros. (user)" {
		t.Fatalf("Recall = %q, %v", texts(msgs), err)
	}
	if ok, _ := f.Forget(ctx, 1); !ok {
		t.Fatal("Forget(1) found nothing")
	}
	if ok, _ := f.Forget(ctx, 1); ok {
		t.Error("Forget of an erased id reported true")
	}
	if got, _ := f.Recall(ctx, "rent", 3); len(got) != 0 {
		t.Errorf("recall after forget = %q", texts(got))
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.Recall(cctx, "rent", 3); !errors.Is(err, context.Canceled) {
		t.Errorf("recall with a cancelled context: %v", err)
	}
}

func TestFactCorruptVectorSidecarIsRebuilt(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(path+".vectors.json", []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &conceptEmbed{}
	f := newFact(t, nil, memory.FactOptions{Path: path, Embed: e.embed, RecallMode: memory.RecallSemantic})
	seedCommute(t, f)
	if got := recalledIDs(t, f, "how does he get to work", 5); !slices.Equal(got, []int64{1, 3}) {
		t.Errorf("semantic recall over a corrupt sidecar = %v, want [1 3] after re-embedding", got)
	}
	if ok, err := f.Forget(ctx, 1); !ok || err != nil {
		t.Fatalf("Forget = %v, %v", ok, err)
	}
	side, _ := os.ReadFile(path + ".vectors.json")
	if !strings.Contains(string(side), `"vectors":{"2":`) && !strings.Contains(string(side), `"vectors":{"3":`) {
		t.Errorf("sidecar was not rewritten: %s", side)
	}
}
