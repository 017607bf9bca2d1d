package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// forgetFixture stores Paul Martin's address (moved once), Paul
// Martineau's phone and a compound fact, then plays the forget answers.
func forgetFixture(t *testing.T, answers ...scripted.Turn) (*memory.Fact, *scripted.Provider) {
	t.Helper()
	ctx := context.Background()
	p := scripted.New(append([]scripted.Turn{{Text: `{"operations":[{"op":"update","id":1,"fact":"Paul Martin lives at 9 Quay Street, Leeds."}]}`}}, answers...)...)
	f := newFact(t, p, memory.FactOptions{})
	for _, s := range []string{"Paul Martin lives at 4 Elm Road, York.", "Paul Martineau's phone is 0611.", "Paul Martin and his wife both like jazz."} {
		if _, err := f.Remember(ctx, s, "", memory.SourceUser); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := f.Compact(ctx, session("Paul Martin moved to 9 Quay Street, Leeds.", "Noted.")); err != nil {
		t.Fatal(err)
	}
	return f, p
}

func TestForgetMatchingDryRunThenErase(t *testing.T) {
	ctx := context.Background()
	ans := scripted.Turn{Text: `{"forget":[4],"reason":"the address of Paul Martin"}`, Usage: &llm.Usage{InputTokens: 50, OutputTokens: 5, TotalTokens: 55}}
	f, p := forgetFixture(t, ans, ans)

	would, err := f.ForgetMatching(ctx, "forget Paul Martin's address", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(would) != 2 || would[0].ID != 1 || would[1].ID != 4 {
		t.Fatalf("dry run = %+v; want the address and its earlier version", would)
	}
	if len(f.Facts(true)) != 4 {
		t.Fatal("dry run erased something")
	}
	prompt := userText(p.Requests()[1])
	if !strings.Contains(prompt, "Instruction: forget Paul Martin's address") || !strings.Contains(prompt, "[id 4] Paul Martin lives at 9 Quay Street, Leeds.") || strings.Contains(prompt, "4 Elm Road") {
		t.Errorf("forget prompt (current facts only):\n%s", prompt)
	}
	if !strings.Contains(systemText(p.Requests()[1]), `"Paul Martin" is not "Paul Martineau"`) {
		t.Error("forget system prompt lacks the near-name warning")
	}

	gone, err := f.ForgetMatching(ctx, "forget Paul Martin's address", false)
	if err != nil || len(gone) != 2 {
		t.Fatalf("erase = %+v, %v", gone, err)
	}
	if got := strings.Join(currentTexts(f), "|"); got != "Paul Martineau's phone is 0611.|Paul Martin and his wife both like jazz." || len(f.Facts(true)) != 2 {
		t.Errorf("after erasing: %q (%d records)", got, len(f.Facts(true)))
	}
	// The forget calls' usage is reported by the next Compact.
	_, usage, _ := f.Compact(ctx, []llm.Message{llm.UserText("hi")})
	if usage == nil || usage.TotalTokens != 110 {
		t.Errorf("usage reported after two forget calls = %+v, want 110", usage)
	}
}

func TestForgetMatchingFailsClosed(t *testing.T) {
	ctx := context.Background()
	for name, turn := range map[string]scripted.Turn{
		"provider error":       {Err: errors.New("connection reset")},
		"prose":                {Text: "Delete fact 4."},
		"no forget list":       {Text: `{"delete":[4]}`},
		"boolean id":           {Text: `{"forget":[true]}`},
		"id not shown":         {Text: `{"forget":[4, 1]}`},
		"unknown id":           {Text: `{"forget":[99]}`},
		"object in list":       {Text: `{"forget":[{"id":4}]}`},
		"truncated, no repair": {Text: `{"forget":[4,`},
	} {
		t.Run(name, func(t *testing.T) {
			f, _ := forgetFixture(t, turn)
			gone, err := f.ForgetMatching(ctx, "forget Paul Martin's address", false)
			if !errors.Is(err, memory.ErrForgetRefused) || gone != nil {
				t.Fatalf("ForgetMatching = %+v, %v; want ErrForgetRefused", gone, err)
			}
			if len(f.Facts(true)) != 4 {
				t.Errorf("something was erased: %+v", f.Facts(true))
			}
		})
	}
}

func TestForgetMatchingAcceptsStringIDsAndNothing(t *testing.T) {
	ctx := context.Background()
	f, _ := forgetFixture(t, scripted.Turn{Text: "```json\n{\"forget\":[\"3\"],\"reason\":\"x\"}\n```"}, scripted.Turn{Text: `{"forget":[],"reason":"nothing matches"}`})
	gone, err := f.ForgetMatching(ctx, "forget Martineau's phone", false)
	if err != nil || len(gone) != 1 || gone[0].ID != 3 {
		t.Fatalf("erase by string id = %+v, %v", gone, err)
	}
	gone, err = f.ForgetMatching(ctx, "forget my cat", false)
	if err != nil || gone != nil {
		t.Fatalf("nothing to forget = %+v, %v", gone, err)
	}
	if _, err := f.ForgetMatching(ctx, "  ", false); !errors.Is(err, memory.ErrEmptyInstruction) {
		t.Errorf("blank instruction: %v", err)
	}
}

func TestForgetMatchingWithoutFactsMakesNoCall(t *testing.T) {
	p := scripted.New()
	f := newFact(t, p, memory.FactOptions{})
	gone, err := f.ForgetMatching(context.Background(), "forget everything", false)
	if err != nil || gone != nil || p.Calls() != 0 {
		t.Fatalf("= %v, %v, %d calls; want nothing and no call", gone, err, p.Calls())
	}
}

func TestForgetMatchingShowsLexicalCandidates(t *testing.T) {
	ctx := context.Background()
	p := scripted.New(scripted.Turn{Text: `{"forget":[]}`})
	f := newFact(t, p, memory.FactOptions{MaxConsolidationFacts: 2})
	for _, s := range []string{"Likes jazz.", "Case 12 is closed.", "Owns a bike.", "Case 120 is open."} {
		_, _ = f.Remember(ctx, s, "", "")
	}
	if _, err := f.ForgetMatching(ctx, "forget case 12", false); err != nil {
		t.Fatal(err)
	}
	prompt := userText(p.Requests()[0])
	if strings.Count(prompt, "[id ") != 2 || !strings.Contains(prompt, "Case 12 is closed.") || !strings.Contains(prompt, "Case 120 is open.") {
		t.Errorf("candidates shown:\n%s", prompt)
	}
}
