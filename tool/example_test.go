package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/autoagent-go/autoagent/tool"
)

type weatherIn struct {
	City  string `json:"city" jsonschema:"the city to look up"`
	Units string `json:"units,omitempty" enum:"metric,imperial"`
}

func Example() {
	weather, err := tool.New("weather", "Current weather for a city.",
		func(ctx context.Context, in weatherIn) (string, error) {
			return "sunny in " + in.City, nil
		})
	if err != nil {
		log.Fatal(err) // the schema could not be derived
	}
	reg, err := tool.NewRegistry(weather)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	res, _ := reg.Call(ctx, tool.Call{Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)})
	fmt.Println(res.Text())

	// Failures the model can fix are results, not Go errors.
	res, _ = reg.Call(ctx, tool.Call{Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo","units":"kelvin"}`)})
	fmt.Println(res.IsError, res.Text())
	res, _ = reg.Call(ctx, tool.Call{Name: "forecast"})
	fmt.Println(res.IsError, res.Text())
	// Output:
	// sunny in Oslo
	// true invalid arguments: units: enum: kelvin does not equal any of: [metric imperial]
	// true unknown tool: "forecast" (available: [weather])
}
