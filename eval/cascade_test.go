package eval_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/eval"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

func tier(name string, built *[]string, turns ...scripted.Turn) eval.Tier {
	return eval.Tier{Name: name, NewAgent: func() (*loop.Agent, error) {
		*built = append(*built, name)
		return &loop.Agent{Provider: scripted.New(turns...)}, nil
	}}
}

func mustSay(word string) func(*loop.Result) error {
	return func(r *loop.Result) error {
		if !strings.Contains(r.Output, word) {
			return errors.New("the answer lacks " + word)
		}
		return nil
	}
}

// The cheap tier first; the next only when the check refuses; every tier
// that ran is paid and counted; the tiers after the one that passed are
// never built.
func TestCascadeAccounting(t *testing.T) {
	var built []string
	tiers := []eval.Tier{
		tier("cheap", &built, scripted.Turn{Text: "maybe", Usage: &llm.Usage{InputTokens: 10, OutputTokens: 2}}),
		tier("mid", &built, scripted.Turn{Text: "yes, 42", Usage: &llm.Usage{InputTokens: 100, OutputTokens: 20}}),
		tier("top", &built, scripted.Turn{Text: "42"}),
	}
	res, err := eval.Cascade(context.Background(), tiers, "q", mustSay("42"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(built, ",") != "cheap,mid" || res.Passed == nil || res.Passed.Tier != "mid" || len(res.Runs) != 2 {
		t.Fatalf("built %v, passed %+v, %d runs", built, res.Passed, len(res.Runs))
	}
	if res.Usage.InputTokens != 110 || res.Usage.OutputTokens != 22 || !res.UsageKnown {
		t.Errorf("usage %+v known %v, want 110/22 known", res.Usage, res.UsageKnown)
	}
	if res.Runs[0].Passed || res.Runs[0].Err == nil || !strings.Contains(res.Runs[0].Err.Error(), "lacks 42") {
		t.Errorf("the cheap tier's run: %+v", res.Runs[0])
	}
	// Exhausted: every tier ran; a tier without usage makes it unknown.
	built = nil
	res, err = eval.Cascade(context.Background(), tiers[:1], "q", mustSay("never"))
	if !errors.Is(err, eval.ErrCascadeExhausted) || len(res.Runs) != 1 || res.Passed != nil {
		t.Errorf("exhausted: %v %+v", err, res)
	}
	res, _ = eval.Cascade(context.Background(), tiers[2:], "q", mustSay("never"))
	if res.UsageKnown {
		t.Error("a tier without usage left the usage known")
	}
}

// An approval pause stops the cascade and surfaces: the next tier is not
// tried.
func TestCascadeApprovalStops(t *testing.T) {
	var built []string
	pay, _ := tool.New("pay", "Pay.", func(context.Context, struct{}) (string, error) { return "paid", nil })
	reg, _ := tool.NewRegistry(pay)
	tiers := []eval.Tier{
		{Name: "cheap", NewAgent: func() (*loop.Agent, error) {
			built = append(built, "cheap")
			return &loop.Agent{
				Provider: scripted.New(scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "pay", Arguments: []byte(`{}`)}}}),
				Tools:    reg,
				Checks: loop.Checks{Policy: loop.PolicyFunc(func(context.Context, *loop.PolicyInput) (loop.Decision, error) {
					return loop.Decision{Verdict: loop.VerdictApprove}, nil
				})},
			}, nil
		}},
		tier("top", &built, scripted.Turn{Text: "done"}),
	}
	res, err := eval.Cascade(context.Background(), tiers, "q", mustSay("done"))
	if !errors.Is(err, loop.ErrApprovalRequired) || strings.Join(built, ",") != "cheap" || len(res.Runs) != 1 {
		t.Errorf("err %v, built %v, runs %d", err, built, len(res.Runs))
	}
}
