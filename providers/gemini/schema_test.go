package gemini

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSanitizeSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{{
		name: "draft keywords and additionalProperties removed, types upper-cased",
		in:   `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","type":"object","additionalProperties":false,"properties":{"q":{"type":"string","description":"query","$comment":"c","examples":["a"]}},"required":["q"]}`,
		want: `{"type":"OBJECT","properties":{"q":{"type":"STRING","description":"query"}},"required":["q"]}`,
	}, {
		name: "nullable union type",
		in:   `{"type":"object","properties":{"n":{"type":["null","string"],"description":"maybe"}}}`,
		want: `{"type":"OBJECT","properties":{"n":{"type":"STRING","nullable":true,"description":"maybe"}}}`,
	}, {
		name: "anyOf with null and one member is inlined",
		in:   `{"type":"object","properties":{"n":{"anyOf":[{"type":"integer","minimum":1},{"type":"null"}]}}}`,
		want: `{"type":"OBJECT","properties":{"n":{"type":"INTEGER","minimum":1,"nullable":true}}}`,
	}, {
		name: "several alternatives stay anyOf (oneOf too)",
		in:   `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`,
		want: `{"type":"OBJECT","properties":{"v":{"anyOf":[{"type":"STRING"},{"type":"NUMBER"}]}}}`,
	}, {
		name: "refs to $defs are inlined, recursion is cut",
		in: `{"type":"object","$defs":{"Node":{"type":"object","properties":{"name":{"type":"string"},"child":{"$ref":"#/$defs/Node"}}}},
			"properties":{"root":{"$ref":"#/$defs/Node","description":"the tree"}}}`,
		want: `{"type":"OBJECT","properties":{"root":{"type":"OBJECT","description":"the tree","properties":{"name":{"type":"STRING"},"child":{"type":"OBJECT"}}}}}`,
	}, {
		name: "definitions and JSON-pointer escapes",
		in:   `{"type":"object","definitions":{"a/b":{"type":"boolean"}},"properties":{"f":{"$ref":"#/definitions/a~1b"}}}`,
		want: `{"type":"OBJECT","properties":{"f":{"type":"BOOLEAN"}}}`,
	}, {
		name: "arrays without items get string items",
		in:   `{"type":"object","properties":{"tags":{"type":"array","maxItems":3},"grid":{"type":"array","items":{"type":"array"}}}}`,
		want: `{"type":"OBJECT","properties":{"tags":{"type":"ARRAY","maxItems":3,"items":{"type":"STRING"}},"grid":{"type":"ARRAY","items":{"type":"ARRAY","items":{"type":"STRING"}}}}}`,
	}, {
		name: "string enums kept, numeric enums described, const becomes enum",
		in:   `{"type":"object","properties":{"unit":{"type":"string","enum":["c","f"]},"level":{"type":"integer","enum":[1,2,3],"description":"How loud."},"kind":{"const":"fixed"},"opt":{"enum":["a",null]}}}`,
		want: `{"type":"OBJECT","properties":{"unit":{"type":"STRING","enum":["c","f"]},"level":{"type":"INTEGER","description":"How loud. One of: 1, 2, 3."},"kind":{"type":"STRING","enum":["fixed"]},"opt":{"type":"STRING","enum":["a"],"nullable":true}}}`,
	}, {
		name: "formats Gemini refuses are dropped",
		in:   `{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"mail":{"type":"string","format":"email"},"n":{"type":"integer","format":"int64"},"x":{"type":"number","format":"int32"}}}`,
		want: `{"type":"OBJECT","properties":{"when":{"type":"STRING","format":"date-time"},"mail":{"type":"STRING"},"n":{"type":"INTEGER","format":"int64"},"x":{"type":"NUMBER"}}}`,
	}, {
		name: "allOf merged",
		in:   `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"boolean"}},"required":["b"]}]}`,
		want: `{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"BOOLEAN"}},"required":["a","b"]}`,
	}, {
		name: "required names that are not properties are dropped",
		in:   `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","ghost"]}`,
		want: `{"type":"OBJECT","properties":{"a":{"type":"STRING"}},"required":["a"]}`,
	}, {
		name: "an object with no properties means no parameters",
		in:   `{"type":"object","additionalProperties":false}`,
		want: `null`,
	}, {
		name: "empty schema means no parameters",
		in:   ``,
		want: `null`,
	}, {
		name: "a schema true accepts anything: no constraint",
		in:   `{"type":"object","properties":{"any":true}}`,
		want: `{"type":"OBJECT","properties":{"any":{}}}`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sanitizeSchema(json.RawMessage(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			if canonical(t, b) != canonical(t, json.RawMessage(tc.want)) {
				t.Errorf("\n got %s\nwant %s", canonical(t, b), canonical(t, json.RawMessage(tc.want)))
			}
		})
	}
}

func TestSanitizeSchemaErrors(t *testing.T) {
	for _, in := range []string{`{"type":`, `["object"]`, `"object"`} {
		if _, err := sanitizeSchema(json.RawMessage(in)); err == nil {
			t.Errorf("sanitizeSchema(%s) succeeded", in)
		}
	}
}

func TestSanitizeSchemaDeepRecursion(t *testing.T) {
	// A schema nested far beyond any real tool is cut off, not followed
	// until the stack runs out.
	in := strings.Repeat(`{"type":"object","properties":{"x":`, 1000) + `{"type":"string"}` + strings.Repeat(`}}`, 1000)
	got, err := sanitizeSchema(json.RawMessage(in))
	if err != nil || got == nil {
		t.Fatalf("got %v, %v", got, err)
	}
}
