package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/tool"
	"github.com/google/go-cmp/cmp"
)

type address struct {
	City string  `json:"city" jsonschema:"the city name"`
	Zip  *string `json:"zip,omitempty"`
}

type item struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

type order struct {
	ID    int            `json:"id"`
	Kind  string         `json:"kind" enum:"book,film"`
	Tags  []string       `json:"tags,omitempty" enum:"a,b"`
	Ship  address        `json:"ship"`
	Items []item         `json:"items"`
	Meta  map[string]int `json:"meta,omitempty"`
	Note  *string        `json:"note,omitempty" jsonschema:"free text"`
	Level int            `json:"level,omitempty" enum:"1,2,3"`
	Rate  float64        `json:"rate,omitempty" enum:"0.5,1.5"`
	//lint:ignore U1000 present to check that unexported fields stay out of the schema
	skip int
}

func orderTool(t *testing.T, got *order) tool.Tool {
	t.Helper()
	tl, err := tool.New("order", "Place an order.", func(_ context.Context, in order) (string, error) {
		*got = in
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// schemaAt decodes the input schema and walks a path of keys.
func schemaAt(t *testing.T, tl tool.Tool, path ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(tl.Spec().InputSchema, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("schema has no object at %v", path)
		}
		v = m[k]
	}
	return v
}

func TestSchemaFromGoTypes(t *testing.T) {
	var got order
	tl := orderTool(t, &got)
	cases := []struct {
		path []string
		want any
	}{
		{[]string{"type"}, "object"},
		{[]string{"additionalProperties"}, false},
		{[]string{"required"}, []any{"id", "kind", "ship", "items"}},
		{[]string{"properties", "id", "type"}, "integer"},
		// enums, on strings, on slice elements and on numbers
		{[]string{"properties", "kind", "enum"}, []any{"book", "film"}},
		{[]string{"properties", "tags", "items", "enum"}, []any{"a", "b"}},
		{[]string{"properties", "level", "enum"}, []any{1.0, 2.0, 3.0}},
		{[]string{"properties", "rate", "enum"}, []any{0.5, 1.5}},
		// nested struct: strict too, with descriptions and its own required
		{[]string{"properties", "ship", "additionalProperties"}, false},
		{[]string{"properties", "ship", "required"}, []any{"city"}},
		{[]string{"properties", "ship", "properties", "city", "description"}, "the city name"},
		// slice of structs
		{[]string{"properties", "items", "items", "required"}, []any{"sku", "qty"}},
		{[]string{"properties", "items", "items", "properties", "qty", "type"}, "integer"},
		// maps
		{[]string{"properties", "meta", "type"}, "object"},
		{[]string{"properties", "meta", "additionalProperties", "type"}, "integer"},
		// optional pointer with a description
		{[]string{"properties", "note", "description"}, "free text"},
		{[]string{"properties", "note", "type"}, []any{"null", "string"}},
		// unexported fields are not part of the schema
		{[]string{"properties", "skip"}, nil},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, schemaAt(t, tl, c.path...)); diff != "" {
			t.Errorf("%v (-want +got):\n%s", c.path, diff)
		}
	}
	if tl.Spec().Name != "order" || tl.Spec().Description != "Place an order." {
		t.Errorf("spec = %+v", tl.Spec())
	}
}

func TestInvalidArgumentsNameTheField(t *testing.T) {
	var got order
	tl := orderTool(t, &got)
	base := `"id":1,"kind":"book","ship":{"city":"Oslo"},"items":[]`
	cases := []struct{ args, field, reason string }{
		{`{"kind":"book","ship":{"city":"x"},"items":[]}`, "id", "required property is missing"},
		{`{"id":1,"kind":"cd","ship":{"city":"x"},"items":[]}`, "kind", "cd does not equal any of: [book film]"},
		{`{"id":1,"kind":"book","ship":{},"items":[]}`, "ship.city", "required property is missing"},
		{`{"id":1,"kind":"book","ship":{"city":"x"},"items":[{"sku":"a","qty":"two"}]}`, "items[].qty", `want "integer"`},
		{`{"id":1.5,"kind":"book","ship":{"city":"x"},"items":[]}`, "id", `want "integer"`},
		{`{` + base + `,"extra":1}`, "", `unknown properties ["extra"]`},
		{`{"id":1,"kind":"book","ship":{"city":"x","zzz":1},"items":[]}`, "ship", `unknown properties ["zzz"]`},
		{`{` + base + `,"meta":{"a":"b"}}`, "meta.*", `want "integer"`},
		{`{` + base + `,"tags":["c"]}`, "tags[]", "c does not equal any of: [a b]"},
		{`{` + base + `,"level":4}`, "level", "4 does not equal any of: [1 2 3]"},
		{`[1]`, "", `want "object"`},
		{`{bad`, "", "arguments are not valid JSON"},
		{`{"id":1} {"id":2}`, "", "more than one JSON value"},
	}
	for _, c := range cases {
		res, err := tl.Call(context.Background(), tool.Call{Name: "order", Arguments: json.RawMessage(c.args)})
		if err != nil {
			t.Fatalf("%s: Go error %v (invalid arguments are a result)", c.args, err)
		}
		msg := res.Text()
		wantPrefix := "invalid arguments: "
		if c.field != "" {
			wantPrefix += c.field + ": "
		}
		if !res.IsError || !strings.HasPrefix(msg, wantPrefix) || !strings.Contains(msg, c.reason) {
			t.Errorf("%s:\n got  %q\n want %q…%q", c.args, msg, wantPrefix, c.reason)
		}
	}
	// The schema validator's error is typed.
	var verr *tool.ValidationError
	s, _ := tool.CompileSchema(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`))
	if err := s.Validate(json.RawMessage(`{}`)); !errors.As(err, &verr) || verr.Field != "n" {
		t.Errorf("validation error = %#v", err)
	}
	// Valid arguments reach the handler decoded; optional fields may be absent.
	res, _ := tl.Call(context.Background(), tool.Call{Arguments: json.RawMessage(`{` + base + `,"note":"fragile","meta":{"x":2}}`)})
	if res.IsError || got.Ship.City != "Oslo" || got.Note == nil || *got.Note != "fragile" || got.Meta["x"] != 2 || got.Tags != nil {
		t.Fatalf("handler got %+v (%q)", got, res.Text())
	}
	// Empty arguments are the empty object: here, a missing required field.
	res, _ = tl.Call(context.Background(), tool.Call{})
	if !res.IsError || !strings.Contains(res.Text(), "id: required property is missing") {
		t.Errorf("empty arguments: %q", res.Text())
	}
}

func TestNewRefusesBadDefinitions(t *testing.T) {
	type badEnum struct {
		N int `json:"n" enum:"one"`
	}
	type enumOnStruct struct {
		A address `json:"a" enum:"x"`
	}
	cases := map[string]error{}
	_, cases["invalid name"] = tool.New("has space", "", func(context.Context, struct{}) (string, error) { return "", nil })
	_, cases["long name"] = tool.New(strings.Repeat("x", 65), "", func(context.Context, struct{}) (string, error) { return "", nil })
	_, cases["nil func"] = tool.New[struct{}, string]("ok", "", nil)
	_, cases["not a struct"] = tool.New("ok", "", func(context.Context, int) (string, error) { return "", nil })
	_, cases["bad enum"] = tool.New("ok", "", func(context.Context, badEnum) (string, error) { return "", nil })
	_, cases["enum on struct"] = tool.New("ok", "", func(context.Context, enumOnStruct) (string, error) { return "", nil })
	_, cases["spec name"] = tool.NewFromSpec(tool.Must(tool.New("x", "", func(context.Context, struct{}) (string, error) { return "", nil })).Spec(), nil)
	_, cases["bad schema"] = tool.NewFromSpec(specWith("bad", `{"type":"object","properties":{"a":{"pattern":"(("}}}`), func(context.Context, tool.Call) (tool.Result, error) { return tool.Text(""), nil })
	for name, err := range cases {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Must did not panic on an error")
		}
	}()
	tool.Must(nil, errors.New("boom"))
}

// TestCompileSchemaRefusesBombs: a schema nested thousands deep (resolving
// it is superlinear) or larger than MaxSchemaBytes is refused before it is
// decoded, with the bound named.
func TestCompileSchemaRefusesBombs(t *testing.T) {
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 4000) + `{}` + strings.Repeat(`}}`, 4000)
	if _, err := tool.CompileSchema(json.RawMessage(deep)); err == nil || !strings.Contains(err.Error(), "nested 8001 deep, more than the 64 allowed") {
		t.Errorf("deep schema: %v", err)
	}
	ok := strings.Repeat(`{"type":"object","properties":{"a":`, 31) + `{}` + strings.Repeat(`}}`, 31)
	if _, err := tool.CompileSchema(json.RawMessage(ok)); err != nil {
		t.Errorf("a schema nested 63 deep: %v", err)
	}
	// Brackets inside strings do not count.
	quoted := `{"type":"object","description":"` + strings.Repeat(`[{`, 1000) + `\"` + `"}`
	if _, err := tool.CompileSchema(json.RawMessage(quoted)); err != nil {
		t.Errorf("brackets in a string: %v", err)
	}
	many := `{"anyOf":[` + strings.Repeat(`{},`, 5000) + `{}]}`
	if _, err := tool.CompileSchema(json.RawMessage(many)); err == nil || !strings.Contains(err.Error(), "5002 objects, more than the 4096 allowed") {
		t.Errorf("a schema of 5 002 objects: %v", err)
	}
	big := `{"type":"object","description":"` + strings.Repeat("x", tool.MaxSchemaBytes) + `"}`
	if _, err := tool.CompileSchema(json.RawMessage(big)); err == nil || !strings.Contains(err.Error(), "more than the 262144 allowed") {
		t.Errorf("large schema: %v", err)
	}
}

// TestValidationNumbers: numeric bounds read as the JSON a model wrote,
// not as the validator's fractions and %f ("maximum: 9/1 is greater than
// 5.000000").
func TestValidationNumbers(t *testing.T) {
	s, err := tool.CompileSchema(json.RawMessage(`{"type":"object","properties":{
		"n":{"type":"number","maximum":5},"m":{"type":"number","minimum":0.25},
		"k":{"type":"integer","exclusiveMaximum":10},"q":{"type":"number","multipleOf":0.5}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		`{"n":9}`:     "invalid arguments: n: maximum: 9 is greater than 5",
		`{"n":7.5}`:   "invalid arguments: n: maximum: 7.5 is greater than 5",
		`{"m":0.125}`: "invalid arguments: m: minimum: 0.125 is less than 0.25",
		`{"k":10}`:    "invalid arguments: k: exclusiveMaximum: 10 is greater than or equal to 10",
		`{"q":0.3}`:   "invalid arguments: q: multipleOf: 0.3 is not a multiple of 0.5",
	} {
		if err := s.Validate(json.RawMessage(args)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}

// TestCompileSchemaRefusesRefBombs: references that apply a schema to the
// value it validates (validation would recurse until Go's stack overflows,
// a fatal error) and references whose expansion is exponential (2^40
// steps to validate {}) are refused; references used as schemas use them,
// recursion through properties and items included, still work.
func TestCompileSchemaRefusesRefBombs(t *testing.T) {
	t.Parallel()
	var chain strings.Builder
	chain.WriteString(`{"$defs":{`)
	for i := range 40 {
		fmt.Fprintf(&chain, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	chain.WriteString(`"d40":{"type":"object"}},"$ref":"#/$defs/d0"}`)
	for _, c := range []struct{ name, schema, want string }{
		{"the root refers to itself", `{"$ref":"#"}`, "applies itself to the value it validates"},
		{"a cycle through allOf", `{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"not":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"}`, "applies itself"},
		{"a cycle in a property's schema", `{"type":"object","properties":{"x":{"anyOf":[{"$ref":"#/properties/x"}]}}}`, "applies itself"},
		{"an exponential expansion", chain.String(), "expands, through $ref, to more than 4096 subschemas"},
		{"a dynamic reference", `{"$dynamicRef":"#node"}`, "uses $dynamicRef, which is not supported"},
		{"an anchor", `{"$defs":{"a":{"$anchor":"x"}},"$ref":"#x"}`, "only references into the document itself"},
		{"a remote reference", `{"$ref":"https://example.org/s.json"}`, "only references into the document itself"},
		{"a dangling reference", `{"$ref":"#/$defs/missing"}`, "which the document does not hold"},
		{"a nested $id", `{"properties":{"a":{"$id":"https://example.org/a","$ref":"#"}}}`, "has its own $id"},
	} {
		if _, err := tool.CompileSchema(json.RawMessage(c.schema)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}

	tree, err := tool.CompileSchema(json.RawMessage(`{"$defs":{"node":{"type":"object","properties":{
		"name":{"$ref":"#/$defs/name"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name"]},
		"name":{"type":"string","minLength":1}},"$ref":"#/$defs/node"}`))
	if err != nil {
		t.Fatalf("a recursive tree schema: %v", err)
	}
	if err := tree.Validate(json.RawMessage(`{"name":"a","kids":[{"name":"b","kids":[{"name":"c"}]}]}`)); err != nil {
		t.Errorf("a valid tree: %v", err)
	}
	if err := tree.Validate(json.RawMessage(`{"name":"a","kids":[{"name":"b","kids":[{"name":""}]}]}`)); err == nil || !strings.Contains(err.Error(), "minLength") {
		t.Errorf("a tree with an empty name three levels down: %v", err)
	}
	// A ref written as a property name is not a reference.
	if _, err := tool.CompileSchema(json.RawMessage(`{"type":"object","properties":{"$ref":{"type":"string"}}}`)); err != nil {
		t.Errorf("a property named $ref: %v", err)
	}
}
