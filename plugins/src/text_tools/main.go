// Command text_tools is the first-party tool module of pure functions that
// need no capability at all: json_query, regex, calc and csv_stats. Each
// is a pure function of its arguments (none reads the clock or draws
// randomness), so every call is reproducible.
package main

import pdk "github.com/autoagent-go/autoagent/pdk/go"

func init() {
	pure := pdk.Annotations{ReadOnly: true, Idempotent: true}
	pdk.Register(
		pdk.NewTool("json_query",
			`Extract values from a JSON document with a path such as .items[0].name, .users[*].email or ["key with spaces"]. `+
				`Segments: .name, ["name"], [N] (negative counts from the end), [*] or .* (every element or value). The result is JSON.`,
			jsonQuery).WithAnnotations(pure),
		pdk.NewTool("regex",
			"Apply a regular expression (RE2 syntax, as in Go) to text: find the matches with their groups, test whether it matches, replace matches ($1 refers to a group), or split the text.",
			regex).WithAnnotations(pure),
		pdk.NewTool("calc",
			"Evaluate an arithmetic expression exactly as written: + - * / % ^ (power), parentheses, unary minus, the constants pi and e, and the functions sqrt, abs, floor, ceil, round, trunc, exp, ln, log10, log2, sin, cos, tan, asin, acos, atan, min and max.",
			calc).WithAnnotations(pure),
		pdk.NewTool("csv_stats",
			"Summarise CSV data: the number of rows and, for every column, how many values are filled, empty and distinct, and for numeric columns the min, max, mean and sum.",
			csvStats).WithAnnotations(pure),
	)
}

func main() {}
