package jsonschema

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// acceptCases: a schema Accepts decides, documents it accepts, and
// documents it leaves to Validate (invalid ones, and valid ones whose
// answer needs the decoded value).
var acceptCases = []struct {
	schema    string
	accepted  []string
	undecided []string
}{
	{`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		[]string{`{"text":"hi"}`, ` {"text":"a\"b","other":[1,{"x":null}]} `, `{"text":"` + strings.Repeat("é", 50) + `"}`},
		[]string{`{}`, `{"text":1}`, `{"t\u0065xt":"hi"}`, `{"text":"hi"} {}`, `{"text":"hi"`, `[]`, `{"text":"hi","text":2}`}},
	{`{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":10},"x":{"type":"number"}},"additionalProperties":false}`,
		[]string{`{"n":0}`, `{"n":10,"x":1.5e3}`, `{"n":-0}`, `{}`},
		[]string{`{"n":11}`, `{"n":-1}`, `{"n":1.0}`, `{"n":1.5}`, `{"n":1e1}`, `{"n":1234567890123456}`, `{"y":1}`, `{"x":"1"}`}},
	{`{"properties":{"mode":{"enum":["fast","slow"]},"tag":{"type":"string","minLength":2,"maxLength":3}},"required":["mode"]}`,
		[]string{`{"mode":"fast","tag":"ab"}`, `{"mode":"slow","tag":"abc"}`},
		[]string{`{"mode":"quick"}`, `{"mode":"f\u0061st"}`, `{"mode":1}`, `{"mode":"fast","tag":"a"}`, `{"mode":"fast","tag":"abcd"}`, `{"mode":"fast","tag":"\u0061b"}`, `{"mode":"fast","tag":"äb"}`}},
	{`{"type":"array","items":{"type":"object","properties":{"k":{"type":["string","null"]}},"required":["k"]},"minItems":1,"maxItems":2}`,
		[]string{`[{"k":"a"}]`, `[{"k":null},{"k":"b","z":true}]`},
		[]string{`[]`, `[{"k":1}]`, `[{}]`, `[{"k":"a"},{"k":"a"},{"k":"a"}]`, `[{"k":"a"},]`}},
	{`{"additionalProperties":{"type":"boolean"}}`,
		[]string{`{"a":true,"b":false}`, `{}`, `3`, `"s"`},
		[]string{`{"a":1}`, `{"a":null}`}},
	{`{"minLength":3}`, []string{`"abc"`, `1`}, []string{`"\u0061"`, `"äb"`, `"ab"`}},
	{`{"enum":["a\\u0062","b"]}`, []string{`"b"`}, []string{`"a\\u0062"`, `"a\u0062"`, `"ab"`}},
	{`true`, []string{`1`, `{"a":[]}`, `"\ud800"`}, []string{`{`, `1 2`, ``}},
}

// TestAccepts: Accepts takes the documents it should (the speed of a
// call's argument check depends on it) and leaves the others to Validate.
func TestAccepts(t *testing.T) {
	for _, c := range acceptCases {
		s := compile(t, c.schema)
		if !s.plain {
			t.Fatalf("%s: Accepts does not decide it", c.schema)
		}
		for _, d := range c.accepted {
			if !s.Accepts([]byte(d)) {
				t.Errorf("%s: Accepts(%s) = false, want true", c.schema, d)
			}
			checkAccepted(t, s, c.schema, []byte(d))
		}
		for _, d := range c.undecided {
			if s.Accepts([]byte(d)) {
				t.Errorf("%s: Accepts(%s) = true, want false", c.schema, d)
			}
		}
	}
}

// TestAcceptsLeavesTheRest: schemas with keywords Accepts does not check
// are left to Validate, whatever the document.
func TestAcceptsLeavesTheRest(t *testing.T) {
	for _, sc := range []string{`{"allOf":[{"type":"string"}]}`, `{"anyOf":[{"type":"string"}]}`, `{"not":{"type":"string"}}`,
		`{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s"}`, `{"pattern":"^a$"}`, `{"const":"a"}`, `{"enum":["a",1]}`,
		`{"multipleOf":2}`, `{"minProperties":1}`, `{"maxProperties":1}`, `{"uniqueItems":true}`, `{"contains":{"type":"string"}}`,
		`{"properties":{"a":{"allOf":[true]}}}`, `{"items":{"not":true}}`, `{"additionalProperties":{"pattern":"x"}}`,
		`{"patternProperties":{"^a":true}}`, `{"dependentRequired":{"a":["b"]}}`, `{"if":true,"then":true}`, `false`} {
		s := compile(t, sc)
		if s.plain || s.Accepts([]byte(`"a"`)) || s.Accepts([]byte(`{"a":"a"}`)) {
			t.Errorf("%s: Accepts decides it", sc)
		}
	}
}

// TestAcceptsBudget: a document past half of Validate's default budget is
// left to Validate, which refuses it as too costly.
func TestAcceptsBudget(t *testing.T) {
	s := compile(t, `{"type":"array","items":{"type":"string"}}`)
	small := []byte(`[` + strings.Repeat(`"",`, 1000) + `""]`)
	big := []byte(`[` + strings.Repeat(`"",`, DefaultSteps/2+1) + `""]`)
	if !s.Accepts(small) || s.Accepts(big) {
		t.Errorf("Accepts: %d items %v, %d items %v; want true, false", 1001, s.Accepts(small), DefaultSteps/2+2, s.Accepts(big))
	}
}

// checkAccepted fails the test unless Validate accepts doc too.
func checkAccepted(t *testing.T, s *Schema, schema string, doc []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		t.Fatalf("%s: Accepts(%q) is true, but it is not one JSON value (%v)", schema, doc, err)
	}
	if err := s.Validate(Normalize(v), 0); err != nil {
		t.Fatalf("%s: Accepts(%q) is true, Validate says %v", schema, doc, err)
	}
}

// FuzzAccepts: whatever Accepts accepts, Validate accepts.
func FuzzAccepts(f *testing.F) {
	for _, c := range acceptCases {
		for _, d := range append(c.accepted, c.undecided...) {
			f.Add(c.schema, []byte(d))
		}
	}
	for _, c := range cases {
		for _, v := range c.valid {
			f.Add(c.schema, []byte(v))
		}
		for v := range c.invalid {
			f.Add(c.schema, []byte(v))
		}
	}
	f.Fuzz(func(t *testing.T, schema string, doc []byte) {
		var sd any
		dec := json.NewDecoder(strings.NewReader(schema))
		dec.UseNumber()
		if dec.Decode(&sd) != nil || len(schema) > 4096 {
			return
		}
		s, err := Compile(Normalize(sd))
		if err != nil || !s.Accepts(doc) {
			return
		}
		checkAccepted(t, s, schema, doc)
	})
}
