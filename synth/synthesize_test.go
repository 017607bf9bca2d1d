package synth

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/providers/scripted"
)

// reverseExamples asks for a tool reversing words; every string is
// distinct, so a leak of any held-out example is visible in a request.
func reverseExamples() []Example {
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"}
	var out []Example
	for _, w := range words {
		r := []rune(w)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		out = append(out, Example{
			Args:     json.RawMessage(fmt.Sprintf(`{"word":%q}`, w)),
			Expected: json.RawMessage(fmt.Sprintf(`{"reversed":%q}`, string(r))),
		})
	}
	return out
}

const reverseJS = `function run(args) { return { reversed: [...args.word].reverse().join("") } }`

// lookupJS is an overfitted tool: a table of the shown examples.
func lookupJS(shown []Example) string {
	var s strings.Builder
	s.WriteString("const table = {")
	for _, ex := range shown {
		var a struct{ Word string }
		var e struct{ Reversed string }
		_ = json.Unmarshal(ex.Args, &a)
		_ = json.Unmarshal(ex.Expected, &e)
		fmt.Fprintf(&s, "%q: %q, ", a.Word, e.Reversed)
	}
	s.WriteString("};\nfunction run(args) { return { reversed: table[args.word] ?? \"?\" } }")
	return s.String()
}

var reverseSchema = json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`)

func TestSynthesizeRejectsOverfittingAndNeverLeaksHeldOutCases(t *testing.T) {
	examples := reverseExamples()
	task := Task{Goal: "Reverse the letters of a word.", Examples: examples, Seed: 7}
	shownIdx, heldIdx := split(len(examples), DefaultHoldout, task.Seed)
	if len(heldIdx) != 4 || len(shownIdx) != 6 {
		t.Fatalf("split %v / %v, want 6 shown and 4 held out", shownIdx, heldIdx)
	}
	shown, held := pick(examples, shownIdx), pick(examples, heldIdx)
	w := scripted.New(
		turn(draft{Name: "reverse_word", Description: "Reverses a word.", InputSchema: reverseSchema, Source: lookupJS(shown)}),
		turn(draft{Name: "reverse_word", Description: "Reverses a word.", InputSchema: reverseSchema, Source: reverseJS,
			SelfTests: []map[string]any{{"args": map[string]any{"word": "abc"}, "expect": map[string]any{"reversed": "cba"}}}}),
	)
	var ev events
	b := newBuilder(t, w, func(o *Options) { o.Observer = ev.observe })
	res, err := b.Synthesize(context.Background(), task)
	if err != nil {
		t.Fatalf("Synthesize: %v", err)
	}
	if !res.Accepted() || len(res.Attempts) != 2 {
		t.Fatalf("accepted %v after %d attempts: %+v", res.Accepted(), len(res.Attempts), res.Attempts)
	}
	a1 := res.Attempts[0]
	if a1.Accepted || a1.Stage != StageHeldOut || a1.ShownPassed != 6 || !a1.HeldOutRan || a1.HeldOutPassed != 0 || a1.HeldOutTotal != 4 {
		t.Fatalf("attempt 1: %+v", a1)
	}
	wantFeedback := "All shown examples pass, but 4 of 4 unseen cases fail."
	if !strings.HasPrefix(a1.Feedback, wantFeedback) {
		t.Fatalf("feedback %q", a1.Feedback)
	}
	if a2 := res.Attempts[1]; !a2.Accepted || a2.ShownPassed != 6 || a2.HeldOutPassed != 4 {
		t.Fatalf("attempt 2: %+v", a2)
	}

	// What the writer saw: the shown examples, the count of unseen
	// failures, and nothing of any held-out example.
	reqs := w.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d writer requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		text := requestText(r)
		for _, ex := range shown {
			if !strings.Contains(text, compactJSON(ex.Args)) {
				t.Errorf("request %d lacks shown example %s", i+1, ex.Args)
			}
		}
		for _, ex := range held {
			var a struct{ Word string }
			var e struct{ Reversed string }
			_ = json.Unmarshal(ex.Args, &a)
			_ = json.Unmarshal(ex.Expected, &e)
			for _, secret := range []string{a.Word, e.Reversed} {
				if strings.Contains(text, secret) {
					t.Errorf("request %d contains held-out %q", i+1, secret)
				}
			}
		}
	}
	if !strings.Contains(requestText(reqs[1]), "4 of 4 unseen cases fail") {
		t.Errorf("second request lacks the held-out count")
	}
	// Nor did any event carry a held-out example (events go to traces).
	for _, e := range ev.ev {
		for _, ex := range held {
			var a struct{ Word string }
			_ = json.Unmarshal(ex.Args, &a)
			if strings.Contains(e.Error+e.Detail, a.Word) {
				t.Errorf("event %+v contains held-out %q", e, a.Word)
			}
		}
	}
	// Usage is the sum of both writer calls.
	if res.Usage == nil || res.Usage.InputTokens != 600 || res.Usage.OutputTokens != 240 || res.Usage.TotalTokens != 840 {
		t.Fatalf("usage %+v", res.Usage)
	}
	// Only the accepted tool was staged.
	st := res.Staged
	if st == nil || st.Stem != "reverse_word" {
		t.Fatalf("staged %+v", st)
	}
	files, _ := os.ReadDir(st.Dir)
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	if strings.Join(names, " ") != "reverse_word.js reverse_word.synth.json reverse_word.tool.json reverse_word.wasm" {
		t.Fatalf("staging holds %v", names)
	}
	src, _ := os.ReadFile(st.Source)
	if string(src) != reverseJS {
		t.Fatalf("staged source %q", src)
	}
	var rec Provenance
	raw, _ := os.ReadFile(st.Record)
	if err := json.Unmarshal(raw, &rec); err != nil || rec.SHA256 != res.Tool.SHA256() || rec.SidecarSHA256 == "" || rec.Attempts != 2 || rec.HeldOut != 4 {
		t.Fatalf("record %s (%v)", raw, err)
	}
	side, _ := os.ReadFile(st.Sidecar)
	var doc struct {
		Tools  []struct{ Name string }
		Config map[string]string
	}
	if err := json.Unmarshal(side, &doc); err != nil || len(doc.Tools) != 1 || doc.Tools[0].Name != "reverse_word" || doc.Config["script"] != reverseJS {
		t.Fatalf("sidecar %s (%v)", side, err)
	}
}

func TestSynthesizeHonoursTheAttemptBound(t *testing.T) {
	wrong := turn(draft{Name: "reverse_word", InputSchema: reverseSchema, Source: `function run(a) { return { reversed: a.word } }`})
	w := scripted.New(wrong, wrong, wrong, wrong)
	b := newBuilder(t, w, nil)
	res, err := b.Synthesize(context.Background(), Task{Goal: "Reverse a word.", Examples: reverseExamples(), MaxAttempts: 2, FeedbackCases: 1})
	if err != nil {
		t.Fatalf("Synthesize: %v", err)
	}
	if res.Accepted() || len(res.Attempts) != 2 || w.Calls() != 2 || res.Staged != nil {
		t.Fatalf("accepted %v, %d attempts, %d writer calls, staged %v", res.Accepted(), len(res.Attempts), w.Calls(), res.Staged)
	}
	a := res.Attempts[0]
	if a.Stage != StageShown || a.ShownPassed != 0 || a.HeldOutRan {
		t.Fatalf("attempt %+v", a)
	}
	// Shown failures are quoted (one, as asked), with what the tool returned.
	if strings.Count(a.Feedback, "args=") != 1 || !strings.Contains(a.Feedback, "6 of the 6 shown examples failed") || !strings.Contains(a.Feedback, `got={"reversed":`) {
		t.Fatalf("feedback %q", a.Feedback)
	}
	if !strings.Contains(requestText(w.Requests()[1]), "6 of the 6 shown examples failed") {
		t.Fatalf("the second request lacks the feedback")
	}
	if entries, _ := os.ReadDir(filepath.Dir(b.opts.StagingDir)); len(entries) != 0 {
		t.Fatalf("something was staged for a rejected tool: %v", entries)
	}
}

func TestSynthesizeFeedsBuildFailuresBack(t *testing.T) {
	w := scripted.New(
		turn(draft{Name: "reverse_word", InputSchema: reverseSchema, Source: `function run(a) { return { reversed: a.word.split("").reverse().join("") }`}),
		turn(draft{Name: "reverse_word", InputSchema: reverseSchema, Source: reverseJS}),
	)
	b := newBuilder(t, w, nil)
	res, err := b.Synthesize(context.Background(), Task{Goal: "Reverse a word.", Examples: reverseExamples()})
	if err != nil {
		t.Fatalf("Synthesize: %v", err)
	}
	if !res.Accepted() || len(res.Attempts) != 2 {
		t.Fatalf("attempts %+v", res.Attempts)
	}
	a := res.Attempts[0]
	if a.Stage != StageBuild || !strings.HasPrefix(a.Feedback, "The tool could not be built: the script does not compile") {
		t.Fatalf("attempt 1 %+v", a)
	}
	if !strings.Contains(requestText(w.Requests()[1]), "could not be built: the script does not compile") {
		t.Fatalf("the build failure was not fed back")
	}
}

func TestSynthesizeValidatesTheTask(t *testing.T) {
	b := newBuilder(t, scripted.New(), nil)
	ctx := context.Background()
	if _, err := b.Synthesize(ctx, Task{Goal: "x"}); err != ErrNoExamples {
		t.Fatalf("no examples: %v", err)
	}
	if _, err := b.Synthesize(ctx, Task{Goal: "x", Examples: []Example{{Args: json.RawMessage(`[1]`), Expected: json.RawMessage(`1`)}}}); err == nil || !strings.Contains(err.Error(), "args must be a JSON object") {
		t.Fatalf("bad args: %v", err)
	}
	if _, err := b.Synthesize(ctx, Task{Goal: "x", Examples: reverseExamples(), Holdout: 1}); err == nil {
		t.Fatalf("holdout 1 accepted")
	}
}

func TestSplit(t *testing.T) {
	cases := []struct {
		n       int
		holdout float64
		held    int
	}{{10, 0.4, 4}, {1, 0.4, 0}, {2, 0.4, 1}, {2, 0.9, 1}, {5, 0.01, 1}, {10, -1, 0}, {3, 0.5, 2}}
	for _, c := range cases {
		shown, held := split(c.n, c.holdout, 42)
		if len(held) != c.held || len(shown)+len(held) != c.n || (c.n > 0 && len(shown) == 0) {
			t.Errorf("split(%d, %v) = %v / %v", c.n, c.holdout, shown, held)
		}
		s2, h2 := split(c.n, c.holdout, 42)
		if fmt.Sprint(shown, held) != fmt.Sprint(s2, h2) {
			t.Errorf("split(%d, %v) is not deterministic", c.n, c.holdout)
		}
	}
	_, a := split(10, 0.4, 1)
	_, b := split(10, 0.4, 2)
	if fmt.Sprint(a) == fmt.Sprint(b) {
		t.Errorf("seeds 1 and 2 give the same split %v", a)
	}
}
