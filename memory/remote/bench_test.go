package remote

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/sqlitestore"
)

// seedFacts writes n facts into a new SQLite store in dir.
func seedFacts(b *testing.B, dir string, n int) string {
	b.Helper()
	path := filepath.Join(dir, "facts.db")
	st, err := sqlitestore.Open(path, sqlitestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	_, err = st.Update(context.Background(), func(s *memory.FactState) error {
		for i := range n {
			s.Facts = append(s.Facts, memory.Record{ID: int64(i + 1), Source: memory.SourceUser, ValidFrom: now, Updated: now,
				Text: fmt.Sprintf("The user's favourite number for project %d is %d and their colour is shade-%d.", i, i*7, i%97)})
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkRecall measures what serving a memory through go-plugin adds
// to a recall: the same Fact memory over the same SQLite file, in process
// and in a backend subprocess.
func BenchmarkRecall(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("in-process/%d-facts", n), func(b *testing.B) {
			st, err := sqlitestore.Open(seedFacts(b, b.TempDir(), n), sqlitestore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			f, err := memory.NewFact(context.Background(), memory.FactOptions{Store: st, MaxFacts: -1})
			if err != nil {
				b.Fatal(err)
			}
			benchRecall(b, f)
		})
		b.Run(fmt.Sprintf("go-plugin/%d-facts", n), func(b *testing.B) {
			dir := b.TempDir()
			seedFacts(b, dir, n)
			m, _ := start(b, "fact-sqlite", Options{Env: []string{testDirEnv + "=" + dir}})
			benchRecall(b, m)
		})
	}
}

func benchRecall(b *testing.B, m memory.Memory) {
	ctx := context.Background()
	var got []llm.Message
	if _, err := m.Recall(ctx, "warm-up", 1); err != nil { // builds the index outside the timing
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if got, err = m.Recall(ctx, "favourite number project 42", 5); err != nil {
			b.Fatal(err)
		}
	}
	if len(got) != 5 {
		b.Fatalf("recalled %d messages, want 5", len(got))
	}
}

// BenchmarkCompact measures a Compact that only shows the facts (no model
// call): the transcript crosses the boundary both ways.
func BenchmarkCompact(b *testing.B) {
	msgs := []llm.Message{llm.SystemText("You are helpful.")}
	for i := range 6 {
		msgs = append(msgs, llm.UserText(fmt.Sprintf("question %d", i)), llm.AssistantText(fmt.Sprintf("answer %d", i)))
	}
	run := func(b *testing.B, m memory.Memory) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := m.Compact(ctx, msgs); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("in-process", func(b *testing.B) {
		m, err := memory.NewBuffer(memory.BufferOptions{MaxMessages: 8})
		if err != nil {
			b.Fatal(err)
		}
		run(b, m)
	})
	b.Run("go-plugin", func(b *testing.B) {
		m, _ := start(b, "buffer", Options{})
		run(b, m)
	})
}
