package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	upstream "github.com/google/jsonschema-go/jsonschema"
)

func decode(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return Normalize(v)
}

func compile(t testing.TB, s string) *Schema {
	t.Helper()
	c, err := Compile(decode(t, s))
	if err != nil {
		t.Fatalf("compile %s: %v", s, err)
	}
	return c
}

// cases: a schema, values it accepts and values it refuses (with a part of
// the error). Every keyword the package implements appears.
var cases = []struct {
	schema  string
	valid   []string
	invalid map[string]string
}{
	{`{"type":"integer"}`, []string{`1`, `1.0`, `-3`}, map[string]string{`1.5`: `want "integer"`, `"1"`: `has type "string"`}},
	{`{"type":["string","null"]}`, []string{`"a"`, `null`}, map[string]string{`1`: `want one of "string, null"`}},
	{`{"type":"number","minimum":1,"maximum":3}`, []string{`1`, `3`, `2.5`}, map[string]string{`0.5`: "minimum: 0.5 is less than 1", `4`: "maximum: 4 is greater than 3"}},
	{`{"exclusiveMinimum":1,"exclusiveMaximum":3}`, []string{`2`, `"x"`}, map[string]string{`1`: "exclusiveMinimum", `3`: "exclusiveMaximum: 3 is greater than or equal to 3"}},
	{`{"multipleOf":0.1}`, []string{`0.3`, `7`}, map[string]string{`0.35`: "multipleOf"}},
	{`{"minLength":2,"maxLength":3}`, []string{`"ab"`, `"äöü"`, `5`}, map[string]string{`"a"`: "minLength", `"abcd"`: "maxLength"}},
	{`{"pattern":"^a+$"}`, []string{`"aaa"`, `1`}, map[string]string{`"ab"`: "pattern"}},
	{`{"enum":["a",1,null,{"k":[1]}]}`, []string{`"a"`, `1.0`, `null`, `{"k":[1]}`}, map[string]string{`"b"`: "does not equal any of: [a 1 null an object of 1 properties]", `{"k":[2]}`: "enum"}},
	{`{"const":{"a":[1,"x"]}}`, []string{`{"a":[1,"x"]}`}, map[string]string{`{"a":[1]}`: "const"}},
	{`{"prefixItems":[{"type":"string"}],"items":{"type":"integer"},"minItems":1,"maxItems":3}`, []string{`["a"]`, `["a",1,2]`}, map[string]string{`[]`: "minItems", `[1]`: `[]: type`, `["a","b"]`: `[]: type`, `["a",1,2,3]`: "maxItems"}},
	{`{"items":[{"type":"string"}],"additionalItems":false}`, []string{`["a"]`}, map[string]string{`["a",1]`: "more than the 1 the schema allows"}},
	{`{"uniqueItems":true}`, []string{`[1,2,{"a":1,"b":2},{"b":2,"a":2}]`}, map[string]string{`[1,{"a":1,"b":2},{"b":2,"a":1}]`: "items 1 and 2 are equal"}},
	{`{"contains":{"const":1},"minContains":2,"maxContains":3}`, []string{`[1,1]`, `[1,2,1,1]`}, map[string]string{`[1]`: "contains: 1 items match, fewer than 2", `[1,1,1,1]`: "maxContains"}},
	{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, []string{`{"a":"x"}`}, map[string]string{`{}`: "a: required property is missing", `{"a":"x","b":1,"c":2}`: `unknown properties ["b" "c"] (not in the schema)`, `{"a":1}`: "a: type"}},
	{`{"patternProperties":{"^x-":{"type":"integer"}},"additionalProperties":{"type":"string"}}`, []string{`{"x-a":1,"b":"s"}`}, map[string]string{`{"x-a":"s"}`: ".*: type", `{"b":1}`: ".*: type"}},
	{`{"minProperties":1,"maxProperties":2,"propertyNames":{"maxLength":2}}`, []string{`{"a":1}`}, map[string]string{`{}`: "minProperties", `{"a":1,"b":2,"c":3}`: "maxProperties", `{"abc":1}`: "propertyNames"}},
	{`{"dependentRequired":{"a":["b"]},"dependentSchemas":{"c":{"required":["d"]}}}`, []string{`{}`, `{"a":1,"b":2}`, `{"c":1,"d":2}`}, map[string]string{`{"a":1}`: "b: required property is missing", `{"c":1}`: "d: required"}},
	{`{"dependencies":{"a":["b"],"c":{"required":["d"]}}}`, []string{`{"a":1,"b":2}`}, map[string]string{`{"a":1}`: "b: required", `{"c":1}`: "d: required"}},
	{`{"allOf":[{"minimum":1},{"maximum":2}]}`, []string{`1.5`}, map[string]string{`3`: "maximum"}},
	{`{"anyOf":[{"type":"string"},{"minimum":5}]}`, []string{`"a"`, `6`}, map[string]string{`1`: "anyOf: matches none of the 2 alternatives; the first: type"}},
	{`{"oneOf":[{"type":"integer"},{"minimum":5}]}`, []string{`1`, `5.5`}, map[string]string{`6`: "matches alternatives 1 and 2", `1.5`: "oneOf: matches none"}},
	{`{"not":{"type":"string"}}`, []string{`1`}, map[string]string{`"a"`: "not:"}},
	{`{"if":{"type":"string"},"then":{"minLength":2},"else":{"minimum":5}}`, []string{`"ab"`, `6`}, map[string]string{`"a"`: "minLength", `1`: "minimum"}},
	{`{"$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"$ref":"#/$defs/n"}`, []string{`{"kids":[{"kids":[]}]}`}, map[string]string{`{"kids":[{"kids":[1]}]}`: "kids[].kids[]: type"}},
	{`{"properties":{"a":{"type":"integer"}},"unevaluatedProperties":false,"allOf":[{"properties":{"b":true}}]}`, []string{`{"a":1,"b":"x"}`}, map[string]string{`{"a":1,"c":1}`: `unknown properties ["c"]`}},
	{`{"anyOf":[{"properties":{"a":true},"required":["a"]},{"properties":{"b":true},"required":["b"]}],"unevaluatedProperties":false}`, []string{`{"a":1}`, `{"a":1,"b":2}`}, map[string]string{`{"a":1,"c":2}`: `unknown properties ["c"]`}},
	{`{"prefixItems":[true],"contains":{"type":"string"},"unevaluatedItems":false}`, []string{`[1,"a"]`, `[1,"a","b"]`}, map[string]string{`[1,"a",2]`: "unevaluatedItems: item 2"}},
	{`false`, nil, map[string]string{`1`: "the schema is false"}},
	{`true`, []string{`1`, `null`}, nil},
}

func TestKeywords(t *testing.T) {
	for _, c := range cases {
		s := compile(t, c.schema)
		for _, v := range c.valid {
			if err := s.Validate(decode(t, v), 0); err != nil {
				t.Errorf("%s: %s refused: %v", c.schema, v, err)
			}
		}
		for v, want := range c.invalid {
			err := s.Validate(decode(t, v), 0)
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Error(), want) {
				t.Errorf("%s: %s: %v, want an *Error containing %q", c.schema, v, err, want)
			}
		}
	}
}

// TestAgreesWithUpstream: on every case above, jsonschema-go (the
// validator the project used before) accepts and refuses the same values,
// but where we differ on purpose: draft-07's tuple items with
// additionalItems, and dependencies, which jsonschema-go ignores unless
// the schema names draft-07 and we honour as their author meant; and
// multipleOf of a decimal, which jsonschema-go decides in binary (0.3 is
// not a multiple of 0.1 there).
func TestAgreesWithUpstream(t *testing.T) {
	differ := map[string]bool{
		`{"items":[{"type":"string"}],"additionalItems":false}`: true,
		`{"dependencies":{"a":["b"],"c":{"required":["d"]}}}`:   true,
		`{"multipleOf":0.1}`: true,
	}
	for _, c := range cases {
		if differ[c.schema] {
			continue
		}
		var us upstream.Schema
		if err := json.Unmarshal([]byte(c.schema), &us); err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		rs, err := us.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		ours := compile(t, c.schema)
		values := append([]string(nil), c.valid...)
		for v := range c.invalid {
			values = append(values, v)
		}
		for _, v := range values {
			var x any
			if err := json.Unmarshal([]byte(v), &x); err != nil {
				t.Fatal(err)
			}
			theirs := rs.Validate(x) == nil
			mine := ours.Validate(decode(t, v), 0) == nil
			if theirs != mine {
				t.Errorf("%s: %s: jsonschema-go says valid=%v, we say %v", c.schema, v, theirs, mine)
			}
		}
	}
}

// TestCompileRefuses: schemas that are not schemas, and patterns past
// their bounds, with the place named.
func TestCompileRefuses(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type":"objekt"}`:      `#/type: unknown type "objekt"`,
		`{"properties":{"a":5}}`: "#/properties/a: a schema must be an object or a boolean",
		`{"minLength":-1}`:       "want a non-negative integer",
		`{"required":"a"}`:       "want an array of strings",
		`{"multipleOf":0}`:       "greater than 0",
		`{"anyOf":[]}`:           "an empty array",
		`{"pattern":"(("}`:       "missing closing )",
		`{"$ref":"#/$defs/x"}`:   "the document does not hold it",
		`{"$ref":"other.json"}`:  "only references into the document itself",
		`{"$dynamicRef":"#x"}`:   "not supported",
		`{"pattern":"` + strings.Repeat("a", 5000) + `"}`:           "a pattern of 5000 bytes",
		`{"pattern":"` + strings.Repeat(`(?:a?){1000}`, 10) + `b"}`: "compiles to",
		// \pL is some 1 300 character ranges: 60 of them pass the schema's
		// bound on ranges (found by attacking our own sandbox: patterns of
		// \pL held 1.3 GB per load of a module).
		`{"properties":{` + strings.Repeat(`"`, 1) + `a":{"pattern":"` + strings.Repeat(`\\pL`, 30) + `"},"b":{"pattern":"` + strings.Repeat(`\\pL`, 30) + `"}}}`: "character ranges",
	} {
		if _, err := Compile(decode(t, schema)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.80s: %v, want %q", schema, err, want)
		}
	}
}

// TestBombsEndWithinTheBudget: the schemas and values an attack on our own
// sandbox used to take the process down (validation exponential in the
// value's depth, errors holding the value once per failed branch, a
// pattern matched in time of its length times the string's) end with a
// CostError or a short Error, in bounded time.
func TestBombsEndWithinTheBudget(t *testing.T) {
	t.Parallel()
	nested := func(d int) string { return strings.Repeat("[", d) + "1" + strings.Repeat("]", d) }
	branches := make([]string, 4000)
	for i := range branches {
		branches[i] = fmt.Sprintf(`{"const":%d}`, i+1)
	}
	bigArray := "[" + strings.TrimSuffix(strings.Repeat("0,", 200000), ",") + "]"
	for _, c := range []struct {
		name, schema, value string
	}{
		{"recursive anyOf, both branches descending", `{"$defs":{"n":{"anyOf":[{"type":"array","items":{"$ref":"#/$defs/n"}},{"type":"array","minItems":1,"items":{"$ref":"#/$defs/n"}}]}},"$ref":"#/$defs/n"}`, nested(40)},
		{"4 000 failing branches per item", `{"type":"array","items":{"anyOf":[` + strings.Join(branches, ",") + `]}}`, bigArray},
		{"4 000 failing branches on a large value", `{"anyOf":[` + strings.Join(branches, ",") + `]}`, `{"a":` + bigArray + `}`},
		{"a costly pattern on a long string", `{"pattern":"` + strings.Repeat(`(?:a?){100}`, 15) + `b"}`, `"` + strings.Repeat("a", 100000) + `"`},
		{"a value nested past MaxDepth", `{"$defs":{"n":{"items":{"$ref":"#/$defs/n"}}},"$ref":"#/$defs/n"}`, nested(5000)},
	} {
		s := compile(t, c.schema)
		v := decode(t, c.value)
		start := time.Now()
		err := s.Validate(v, 0)
		took := time.Since(start)
		var cost *CostError
		var e *Error
		switch {
		case errors.As(err, &cost):
		case errors.As(err, &e) && len(e.Error()) <= 2*maxReason:
		default:
			t.Errorf("%s: %v, want a CostError or a short Error", c.name, err)
		}
		t.Logf("%s: %v in %v", c.name, err, took)
	}
}

// TestBudgetIsCounted: a validation that needs more steps than it is
// given ends with a CostError; the same with room passes.
func TestBudgetIsCounted(t *testing.T) {
	s := compile(t, `{"type":"array","items":{"type":"integer"}}`)
	v := decode(t, "["+strings.TrimSuffix(strings.Repeat("1,", 1000), ",")+"]")
	var cost *CostError
	if err := s.Validate(v, 500); !errors.As(err, &cost) || cost.Steps != 500 {
		t.Errorf("1 000 items on 500 steps: %v", err)
	}
	if err := s.Validate(v, 2000); err != nil {
		t.Errorf("1 000 items on 2 000 steps: %v", err)
	}
}

func FuzzValidate(f *testing.F) {
	for _, c := range cases {
		for _, v := range c.valid {
			f.Add(c.schema, v)
		}
		for v := range c.invalid {
			f.Add(c.schema, v)
		}
	}
	f.Fuzz(func(t *testing.T, schema, value string) {
		var sd, vd any
		dec := json.NewDecoder(strings.NewReader(schema))
		dec.UseNumber()
		if dec.Decode(&sd) != nil || len(schema) > 4096 {
			return
		}
		dec = json.NewDecoder(strings.NewReader(value))
		dec.UseNumber()
		if dec.Decode(&vd) != nil {
			return
		}
		s, err := Compile(Normalize(sd))
		if err != nil {
			return
		}
		err = s.Validate(Normalize(vd), 1<<16)
		var e *Error
		if err != nil && errors.As(err, &e) && len(e.Reason) > maxReason+len("…") {
			t.Fatalf("a reason of %d bytes", len(e.Reason))
		}
	})
}
