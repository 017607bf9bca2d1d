// Package tool defines what the agent loop calls: the [Tool] interface, Go
// functions turned into tools with a JSON Schema inferred from their argument
// type ([New]), the [Result] a tool returns, the [Flags] that govern a tool
// (untrusted, egress, idempotent, permissions) and the [Registry] that holds
// a run's tools.
//
//	type WeatherIn struct {
//		City  string `json:"city" jsonschema:"the city to look up"`
//		Units string `json:"units,omitempty" enum:"metric,imperial"`
//	}
//	weather, err := tool.New("weather", "Current weather for a city.",
//		func(ctx context.Context, in WeatherIn) (string, error) {
//			return "sunny in " + in.City, nil
//		})
//	if err != nil {
//		log.Fatal(err) // the schema could not be derived
//	}
//	reg, err := tool.NewRegistry(weather)
//	if err != nil {
//		log.Fatal(err) // a duplicate or invalid name
//	}
//	res, _ := reg.Call(ctx, tool.Call{Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)})
//	fmt.Println(res.Text()) // sunny in Oslo
//
// # Two tiers of failure
//
// A tool that fails (bad arguments, a handler error, a panic, an unknown
// tool name) produces a [Result] with IsError set: the model sees the message
// and the run goes on. A non-nil Go error from [Tool.Call] means the
// infrastructure failed (a sandbox could not start, a backend died) and is
// also turned into an error result by the loop, but is traced as such.
//
// # Schemas
//
// [New] derives the input schema from the In type with
// github.com/google/jsonschema-go: struct fields become properties named by
// their json tag, fields without omitempty/omitzero are required, unknown
// properties are refused (additionalProperties: false). The `jsonschema` tag
// is the property's description; the `enum` tag lists allowed values
// separated by commas. Arguments are validated against the schema before the
// handler runs, and the error names the offending field.
//
// Validation ([Schema.Validate]) is bounded whatever the schema: schemas
// come from modules, MCP servers and models, so each validation has a
// budget of steps, patterns are bounded before they compile, and an error
// is one short line (RATIONALE.md, "Why our own JSON Schema validator?").
package tool
