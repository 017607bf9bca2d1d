package synth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/synth"
	"github.com/autoagent-go/autoagent/tool"
)

// writer plays the writer model: its answers are the tools it writes.
func writer(sources ...string) *scripted.Provider {
	var turns []scripted.Turn
	for _, src := range sources {
		b, _ := json.Marshal(map[string]any{
			"name": "double", "description": "Doubles n.",
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number"}}},
			"source":       src,
		})
		turns = append(turns, scripted.Turn{Text: string(b)})
	}
	return scripted.New(turns...)
}

func ExampleBuilder_Synthesize() {
	ctx := context.Background()
	h, err := host.New(ctx, host.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close(ctx)
	staging, _ := os.MkdirTemp("", "staging-*")
	defer os.RemoveAll(staging)

	// With seed 4, n = 1, 2, 3 are shown and n = 4, 5 held out. The first
	// tool memorises what it was shown; the second computes.
	b, err := synth.New(synth.Options{
		Host: h, StagingDir: staging,
		Writer: writer(
			`const seen = {1: 2, 2: 4, 3: 6}; function run(a) { return seen[a.n] ?? 0 }`,
			`function run(a) { return a.n * 2 }`,
		),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close(ctx)
	var examples []synth.Example
	for n := 1; n <= 5; n++ {
		examples = append(examples, synth.Example{
			Args:     json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)),
			Expected: json.RawMessage(fmt.Sprint(2 * n)),
		})
	}
	res, err := b.Synthesize(ctx, synth.Task{Goal: "Double n.", Examples: examples, Seed: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range res.Attempts {
		fmt.Printf("attempt %d: shown %d/%d, held-out %d/%d, accepted %v\n", a.Index, a.ShownPassed, a.ShownTotal, a.HeldOutPassed, a.HeldOutTotal, a.Accepted)
	}
	out, _ := res.Tool.Call(ctx, tool.Call{Name: "double", Arguments: json.RawMessage(`{"n":21}`)})
	fmt.Println("double(21) =", out.Text())
	// Output:
	// attempt 1: shown 3/3, held-out 0/2, accepted false
	// attempt 2: shown 3/3, held-out 2/2, accepted true
	// double(21) = 42
}
