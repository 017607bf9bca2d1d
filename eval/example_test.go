package eval_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/autoagent-go/autoagent/eval"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// A case run four times, where one run in four answers wrong: pass@1 is
// 0.75, pass^4 is 0.
func Example() {
	cases, err := eval.ReadCases(strings.NewReader(
		`{"id": "capital", "prompt": "Capital of Norway?", "expect": {"output_equals": "Oslo"}}`+"\n"), "cases.jsonl")
	if err != nil {
		panic(err)
	}
	newAgent := func(_ context.Context, _ *eval.Case, run int) (*loop.Agent, error) {
		answer := "Oslo"
		if run == 3 {
			answer = "Bergen"
		}
		return &loop.Agent{Provider: scripted.New(scripted.Turn{Text: answer})}, nil
	}
	rep, err := eval.RunK(context.Background(), newAgent, cases, eval.Options{K: 4})
	if err != nil {
		panic(err)
	}
	fmt.Printf("pass@1 %.2f  pass^4 %.2f  pass@4 %.2f\n", rep.PassAt1, rep.PassHatK, rep.PassAtK)
	fmt.Printf("pass^k curve %.2f\n", rep.PassHatCurve)
	fmt.Println(rep.Cases[0].Failures[0].Reason)
	// Output:
	// pass@1 0.75  pass^4 0.00  pass@4 1.00
	// pass^k curve [0.75 0.50 0.25 0.00]
	// output "Bergen", want "Oslo"
}
