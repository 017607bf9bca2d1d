package retrieve_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/eval"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/retrieve"
)

// newerFacts is how many facts are remembered after a scenario's
// sessions: more than the fact memory shows in its context block (20), so
// the scenario's facts are old ones that block no longer holds.
const newerFacts = 30

// TestOldFactReachesTheContextOnlyWithRetrieval plays each of the memory
// eval's twelve scenarios into a fact memory (the scripted extraction of
// package memory/eval), then remembers 30 newer, unrelated facts. Asked
// the scenario's question, an agent with that memory is sent its 20 most
// recent facts: the old fact is not among them. With retrieval from the
// same memory, it is sent the facts relevant to the question, and the
// scenario's answer is in what the model reads (eval.Score: an expected
// phrase, no stale one): 8 of the 12 scenarios.
//
// The other four share no word with their fact, which BM25 needs (its
// tokens are whole words, unstemmed): "work" and "Works as a night-shift
// nurse", "get to work" and "commutes by metro", "current address" and
// "Lives at 12 Harbour Street", "carpool" and "Carpools". Recall finds
// nothing, so there is no block. These are what embeddings are for (a
// fact memory with an EmbedFunc fuses both rankings); the scripted run
// has no embedding model, so the test pins the lexical outcome.
func TestOldFactReachesTheContextOnlyWithRetrieval(t *testing.T) {
	scs := eval.Scenarios()
	lexicalMiss := map[string]bool{"several-facts": true, "contradicted-address": true, "distractors": true, "job-and-employer": true}
	found := 0
	for _, sc := range scs {
		t.Run(sc.ID, func(t *testing.T) {
			ctx := context.Background()
			f, err := memory.NewFact(ctx, memory.FactOptions{Provider: eval.ScriptedModel(scs), MaxMessages: 6, KeepRecent: 2})
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range sc.Sessions {
				if _, _, err := f.Compact(ctx, eval.SessionMessages(s)); err != nil {
					t.Fatalf("session %d: %v", i+1, err)
				}
			}
			for i := range newerFacts {
				if _, err := f.Remember(ctx, fmt.Sprintf("Archive entry %d: batch Q%d filed under folder K%d.", i, i, i), "", ""); err != nil {
					t.Fatal(err)
				}
			}
			ask := func(rc retrieve.Config) string {
				p := scripted.New(scripted.Turn{Text: "ok"})
				a := &loop.Agent{Provider: p, Knowledge: loop.Knowledge{Memory: f, Retrieval: rc}}
				if _, err := a.RunMessages(ctx, []llm.Message{llm.SystemText(eval.SystemPrompt), llm.UserText(sc.Question)}); err != nil {
					t.Fatal(err)
				}
				var b strings.Builder
				for _, m := range p.Requests()[0].Messages {
					b.WriteString(m.Text() + "\n")
				}
				return b.String()
			}
			without := ask(retrieve.Config{})
			if !strings.Contains(without, memory.FactsMarker) {
				t.Fatal("the fact memory showed no facts: the test measures nothing")
			}
			for _, phrase := range sc.Expected {
				if eval.Score(eval.Scenario{Expected: []string{phrase}}, without) {
					t.Errorf("without retrieval the context already holds %q: the fact is not old enough", phrase)
				}
			}
			with := ask(retrieve.Config{Retriever: retrieve.Facts(f)})
			if lexicalMiss[sc.ID] {
				if strings.Contains(with, retrieve.BlockHeader) {
					t.Errorf("BM25 now finds a fact for %q: update the test's account of the misses", sc.Question)
				}
				return
			}
			if !strings.Contains(with, retrieve.BlockHeader) {
				t.Fatalf("no retrieval block:\n%s", with)
			}
			_, block, _ := strings.Cut(with, retrieve.BlockHeader)
			if !eval.Score(sc, block) {
				t.Errorf("with retrieval the block lacks the answer (%v) or holds a stale one (%v):\n%s", sc.Expected, sc.Forbidden, block)
			} else {
				found++
			}
		})
	}
	if found != 8 {
		t.Errorf("retrieval brought %d old facts into the context, want 8 of 12", found)
	}
}
