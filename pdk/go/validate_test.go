package pdk

import (
	"reflect"
	"testing"
)

type vIn struct {
	Text  string            `json:"text"`
	N     int8              `json:"n,omitempty"`
	F     float64           `json:"f,omitempty"`
	Mode  string            `json:"mode,omitempty" enum:"fast,slow"`
	Tags  []string          `json:"tags,omitempty"`
	Opt   *address          `json:"opt,omitempty"`
	Extra map[string]int    `json:"extra,omitempty"`
	Any   any               `json:"any,omitempty"`
	Meta  map[string]string `json:"meta,omitempty"`
}

func TestValidate(t *testing.T) {
	s, err := deriveSchema(reflect.TypeFor[vIn]())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ args, want string }{
		{`{"text":"a"}`, ""},
		{` {"text":"a","n":-128,"f":1.5,"mode":"slow","tags":["x"],"opt":null,"extra":{"k":1},"any":[{"x":null}]} `, ""},
		{`{"text":"a","tags":null,"opt":{"city":"Oslo"}}`, ""},
		{`{"text":"a","n":3.0}`, ""},
		{`{"text":"a","f":3}`, ""},
		{`{}`, "invalid arguments: text: required property is missing"},
		{`[]`, "invalid arguments: want object, got array"},
		{`{"text":null}`, "invalid arguments: text: want string, got null"},
		{`{"text":"a","n":1.5}`, "invalid arguments: n: want integer, got number"},
		{`{"text":"a","n":128}`, "invalid arguments: n: must be at most 127"},
		{`{"text":"a","n":-129}`, "invalid arguments: n: must be at least -128"},
		{`{"text":"a","mode":"medium"}`, `invalid arguments: mode: must be one of "fast", "slow"`},
		{`{"text":"a","tags":["x",2]}`, "invalid arguments: tags[1]: want string, got number"},
		{`{"text":"a","opt":{"zip":"1"}}`, "invalid arguments: opt.city: required property is missing"},
		{`{"text":"a","opt":{"city":"x","street":"y"}}`, "invalid arguments: opt.street: unknown property (not in the schema)"},
		{`{"text":"a","extra":{"k":"v"}}`, "invalid arguments: extra.k: want integer, got string"},
		{`{"text":"a","bogus":1,"n":"x"}`, "invalid arguments: bogus: unknown property (not in the schema)"},
		{`{"n":"x","bogus":1}`, "invalid arguments: n: want integer, got string"},
		{`{"t\u0065xt":"a","meta":{"a\"b":"c"}}`, ""},
		{`{"text":"a"} {}`, "invalid arguments: more than one JSON value"},
	} {
		err := validate([]byte(c.args), s)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("validate(%s) = %q, want %q", c.args, got, c.want)
		}
	}
}
