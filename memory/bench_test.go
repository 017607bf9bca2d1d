package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
)

var benchWords = strings.Fields(`address apartment august bicycle building bus call car carpool children
city code colleague daughter day door email evening family flat floor garage garden holiday hospital
house husband job landline language metro mobile monday month morning name neighbour night nurse
office parking pet phone portugal rent school schedule scooter shift sister son street subway survey
teacher thursday town train travel visit weekend wife work`)

// writeFactStore writes a JSON store of n synthetic facts and returns its path.
func writeFactStore(b *testing.B, n int) string {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	facts := make([]memory.Record, n)
	for i := range facts {
		words := make([]string, 6+r.IntN(6))
		for j := range words {
			words[j] = benchWords[r.IntN(len(benchWords))]
		}
		at := t0.Add(time.Duration(i) * time.Minute)
		facts[i] = memory.Record{ID: int64(i + 1), Text: strings.Join(words, " ") + fmt.Sprintf(" %d.", i), Subject: "user", Source: memory.SourceAgent, ValidFrom: at, Updated: at}
	}
	data, err := json.Marshal(map[string]any{"version": 1, "next_id": n + 1, "facts": facts})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "facts.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// hashEmbed is a cheap deterministic embedding: each word adds to one of
// 64 dimensions (the hashing trick).
func hashEmbed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(strings.Trim(w, ".,")))
			v[h.Sum32()%64]++
		}
		out[i] = v
	}
	return out, nil
}

func BenchmarkFactRecall10k(b *testing.B) {
	ctx := context.Background()
	queries := []string{"door code building", "when to call in the morning", "daughter school bus", "rent of the flat", "night shift nurse hospital"}
	for _, mode := range []struct {
		name  string
		embed memory.EmbedFunc
	}{{"lexical", nil}, {"hybrid", hashEmbed}} {
		b.Run(mode.name, func(b *testing.B) {
			f, err := memory.NewFact(ctx, memory.FactOptions{Path: writeFactStore(b, 10_000), MaxFacts: -1, Embed: mode.embed})
			if err != nil {
				b.Fatal(err)
			}
			if got, err := f.Recall(ctx, queries[0], 5); err != nil || len(got) != 5 {
				b.Fatalf("warm-up recall = %d, %v", len(got), err) // also embeds every fact once
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := f.Recall(ctx, queries[i%len(queries)], 5); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// instantModel answers every memory call at once with a fixed answer.
func instantModel(text string) *fakeModel {
	resp := answer(text, 500, 40)
	m := &fakeModel{}
	m.fn = func(*llm.Request) (*llm.Response, error) { return resp, nil }
	return m
}

// benchTranscript is a 200-message conversation whose first message is
// replaced per iteration, so every compaction sees a new conversation.
func benchTranscript() []llm.Message {
	msgs := []llm.Message{llm.SystemText("You are helpful.")}
	for i := range 50 {
		msgs = append(msgs, llm.UserText(fmt.Sprintf("Question %d about the weather in Oslo?", i)))
		msgs = append(msgs, toolRoundBench(i)...)
		msgs = append(msgs, llm.AssistantText(fmt.Sprintf("It is %d degrees in Oslo.", i)))
	}
	return msgs
}

func toolRoundBench(i int) []llm.Message {
	id := fmt.Sprintf("c%d", i)
	return []llm.Message{call(id, "weather"), result(id, "weather", `{"temp":12,"sky":"clear"}`)}
}

func BenchmarkCompact(b *testing.B) {
	ctx := context.Background()
	buf, _ := memory.NewBuffer(memory.BufferOptions{MaxMessages: 20})
	sum, _ := memory.NewSummarizing(memory.SummarizingOptions{Provider: instantModel("A short summary."), MaxMessages: 40, KeepRecent: 12})
	fact, _ := memory.NewFact(ctx, memory.FactOptions{Provider: instantModel(`{"operations":[{"op":"add","fact":"Asked about the weather in Oslo."}]}`), MaxMessages: 40, KeepRecent: 12})
	for _, bm := range []struct {
		name string
		m    memory.Memory
		// fresh makes every iteration a new conversation (a fold);
		// otherwise the same transcript is compacted again (its fold is
		// found by fingerprint, no model call).
		fresh bool
	}{
		{"Buffer", buf, false},
		{"Summarizing/fold", sum, true},
		{"Summarizing/known", sum, false},
		{"Fact/fold", fact, true},
		{"Fact/known", fact, false},
	} {
		b.Run(bm.name, func(b *testing.B) {
			msgs := benchTranscript()
			if _, _, err := bm.m.Compact(ctx, msgs); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if bm.fresh {
					msgs[1] = llm.UserText(fmt.Sprintf("Conversation %d: question about the weather in Oslo?", i))
				}
				out, _, err := bm.m.Compact(ctx, msgs)
				if err != nil || len(out) >= len(msgs) {
					b.Fatalf("Compact = %d messages, %v", len(out), err)
				}
			}
		})
	}
}
