package synth

import (
	"encoding/json"
	"testing"
)

func TestJSONEqual(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{`1`, `1.0`, true},
		{`1`, `1e0`, true},
		{`0.1`, `1e-1`, true},
		{`12345678901234567890`, `12345678901234567891`, false},
		{`true`, `1`, false},
		{`null`, `null`, true},
		{`null`, `0`, false},
		{`"a"`, `"a"`, true},
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2.0],"a":1}`, true},
		{`{"a":1}`, `{"a":1,"b":null}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`[]`, `{}`, false},
		{`1e999999999`, `2e999999999`, true}, // both overflow to +Inf: compared as float64, not built exactly
		{`1e999999999`, `1`, false},
		{`{`, `{`, false},
		{`1 2`, `1`, false},
	}
	for _, c := range cases {
		if got := JSONEqual(json.RawMessage(c.a), json.RawMessage(c.b)); got != c.want {
			t.Errorf("JSONEqual(%s, %s) = %v", c.a, c.b, got)
		}
		if got := JSONEqual(json.RawMessage(c.b), json.RawMessage(c.a)); got != c.want {
			t.Errorf("JSONEqual(%s, %s) = %v (reversed)", c.b, c.a, got)
		}
	}
}

func FuzzJSONEqual(f *testing.F) {
	f.Add(`{"a":[1,2.5,"x",null,true]}`, `1e3`)
	f.Fuzz(func(t *testing.T, a, b string) {
		if !json.Valid([]byte(a)) {
			return
		}
		if !JSONEqual(json.RawMessage(a), json.RawMessage(a)) {
			t.Fatalf("%s is not equal to itself", a)
		}
		if JSONEqual(json.RawMessage(a), json.RawMessage(b)) != JSONEqual(json.RawMessage(b), json.RawMessage(a)) {
			t.Fatalf("not symmetric: %s %s", a, b)
		}
	})
}
