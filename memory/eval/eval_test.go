package eval_test

import (
	"context"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/memory/eval"
)

func TestScore(t *testing.T) {
	sc := eval.Scenario{Expected: []string{"no", "Harbour Street"}, Forbidden: []string{"Mill Lane"}}
	for answer, want := range map[string]bool{
		"No.":                                    true,
		"I don't know.":                          false, // "no" is not a word of "know"
		"She lives at 12 HARBOUR STREET.":        true,
		"12 Harbour Street (formerly Mill Lane)": false,
		"harbour-street":                         true,
		"Nothing known":                          false,
	} {
		if got := eval.Score(sc, answer); got != want {
			t.Errorf("Score(%q) = %v, want %v", answer, got, want)
		}
	}
	accents := eval.Scenario{Expected: []string{"metro"}}
	if !eval.Score(accents, "Il prend le MÉTRO.") {
		t.Error("accents are not ignored")
	}
	phone := eval.Scenario{Expected: []string{"01 45 67 89 10"}}
	if !eval.Score(phone, "Call 01.45.67.89.10") || eval.Score(phone, "Call 01 45 67 89 100") {
		t.Error("number phrases must match whole words across punctuation")
	}
}

func TestScenarioShape(t *testing.T) {
	scs := eval.Scenarios()
	if len(scs) != 12 {
		t.Fatalf("%d scenarios, want 12", len(scs))
	}
	seen := map[string]bool{}
	for _, sc := range scs {
		if seen[sc.ID] || sc.Question == "" || len(sc.Expected) == 0 || len(sc.Sessions) == 0 {
			t.Errorf("scenario %q is incomplete or duplicated", sc.ID)
		}
		seen[sc.ID] = true
		for _, p := range sc.Expected {
			if eval.Score(eval.Scenario{Expected: []string{p}}, sc.Question) {
				t.Errorf("%s: the question itself contains the expected phrase %q", sc.ID, p)
			}
		}
	}
}

// TestScriptedEval runs the twelve scenarios with the scripted model and
// checks the scores its script implies. The reader answers with what the
// memory put in its context, so:
//
//   - none and buffer: a fresh session holds nothing → 0/12.
//   - fact: the facts message of the fresh session lists exactly the
//     current facts the extractions leave (contradicted and stale ones are
//     closed, not shown) → 12/12.
//   - summarizing: the summary stays with its conversation, but recall
//     searches every folded message lexically (BM25: any shared word of two
//     letters or more). It finds the fact when the question shares a word
//     with the message stating it, and also the stale statement when that
//     one does: contradicted-schedule ("call", "back" → "evening") and
//     stale-fact ("household" → "scooter") fail; job-and-employer fails
//     because "I'm a night-shift nurse at Saint-Louis Hospital." shares no
//     word with the question; contradicted-address passes because "I live
//     at 3 Mill Lane, in Oxford." shares none either → 9/12.
func TestScriptedEval(t *testing.T) {
	scs := eval.Scenarios()
	var log strings.Builder
	rep, err := eval.Run(context.Background(), eval.Config{
		Provider: eval.ScriptedModel(scs),
		Memories: append(eval.DefaultMemories(), eval.BufferMemory()),
		Log:      &log,
	})
	if err != nil {
		t.Fatal(err)
	}
	wantFail := map[string]map[string]bool{
		"summarizing": {"contradicted-schedule": true, "stale-fact": true, "job-and-employer": true},
		"fact":        {},
	}
	wantCorrect := map[string]int{"none": 0, "summarizing": 9, "fact": 12, "buffer": 0}
	for _, c := range rep.Configs {
		if len(c.Errors) > 0 {
			t.Errorf("%s: scenario errors %v", c.Name, c.Errors)
		}
		if c.Correct != wantCorrect[c.Name] || c.Total != 12 {
			t.Errorf("%s: %d/%d correct, want %d/12", c.Name, c.Correct, c.Total, wantCorrect[c.Name])
		}
		if fails, ok := wantFail[c.Name]; ok {
			for _, sc := range scs {
				if c.Scores[sc.ID] == fails[sc.ID] {
					t.Errorf("%s/%s: correct=%v, want %v; answer: %s", c.Name, sc.ID, c.Scores[sc.ID], !fails[sc.ID], c.Answers[sc.ID])
				}
			}
		}
		if c.Name == "none" && c.Answers["numeric-value"] != "I don't know." {
			t.Errorf("without memory the reader should know nothing: %q", c.Answers["numeric-value"])
		}
		if c.Name != "none" && c.Usage.TotalTokens == 0 {
			t.Errorf("%s: no usage counted", c.Name)
		}
	}
	fact := rep.Configs[2]
	if a := fact.Answers["contradicted-address"]; !strings.Contains(a, "12 Harbour Street") || strings.Contains(a, "Mill Lane") {
		t.Errorf("fact answer for the moved address: %q", a)
	}
	md := rep.Markdown()
	for _, want := range []string{"| scenario | none | summarizing | fact | buffer |", "| stale-fact | ✗ | ✗ | ✓ | ✗ |", "**12/12 (100 %)**", "**9/12 (75 %)**"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Count(log.String(), "\n") != 48 {
		t.Errorf("progress log has %d lines, want one per scenario and configuration", strings.Count(log.String(), "\n"))
	}
	t.Logf("\n%s", md)
}
