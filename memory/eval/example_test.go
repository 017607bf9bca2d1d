package eval_test

import (
	"context"
	"fmt"
	"log"

	"github.com/autoagent-go/autoagent/memory/eval"
)

func ExampleRun() {
	scenarios := eval.Scenarios()[:3]
	rep, err := eval.Run(context.Background(), eval.Config{
		// A real run passes a provider (openai.New, anthropic.New, ...).
		Provider:  eval.ScriptedModel(scenarios),
		Scenarios: scenarios,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range rep.Configs {
		fmt.Printf("%s: %d/%d\n", c.Name, c.Correct, c.Total)
	}
	// Output:
	// none: 0/3
	// summarizing: 1/3
	// fact: 3/3
}
