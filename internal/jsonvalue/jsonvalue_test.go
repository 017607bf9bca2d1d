package jsonvalue

import (
	"encoding/json"
	"fmt"
	"testing"
)

func ExampleEqualRaw() {
	fmt.Println(EqualRaw([]byte(`{"a":1,"b":[2]}`), []byte(`{"b":[2.0],"a":1e0}`)))
	fmt.Println(EqualRaw([]byte(`9007199254740993`), []byte(`9007199254740992`)))
	fmt.Println(EqualRaw([]byte(`true`), []byte(`1`)))
	// Output:
	// true
	// false
	// false
}

func TestEqualRaw(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{`1`, `1.0`, true},
		{`1`, `1e0`, true},
		{`0.1`, `1e-1`, true},
		{`12345678901234567890`, `12345678901234567891`, false},
		{`9007199254740993`, `9007199254740992`, false}, // equal as float64
		{`true`, `1`, false},
		{`null`, `null`, true},
		{`null`, `0`, false},
		{`"a"`, `"a"`, true},
		{`"1"`, `1`, false},
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2.0],"a":1}`, true},
		{`{"a":1}`, `{"a":1,"b":null}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`[]`, `{}`, false},
		{`1e999999999`, `2e999999999`, true}, // both overflow to +Inf: compared as float64, not built exactly
		{`1e999999999`, `1`, false},
		{`{`, `{`, false},
		{`1 2`, `1`, false},
		{`1]`, `1`, false}, // a closing delimiter is trailing data too
		{`{"a":1}}`, `{"a":1}`, false},
		{`[1]]`, `[1]`, false},
		{`1 `, `1`, true}, // trailing space is not data
	}
	for _, c := range cases {
		if got := EqualRaw([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("EqualRaw(%s, %s) = %v", c.a, c.b, got)
		}
		if got := EqualRaw([]byte(c.b), []byte(c.a)); got != c.want {
			t.Errorf("EqualRaw(%s, %s) = %v (reversed)", c.b, c.a, got)
		}
	}
}

func FuzzEqualRaw(f *testing.F) {
	f.Add(`{"a":[1,2.5,"x",null,true]}`, `1e3`)
	f.Fuzz(func(t *testing.T, a, b string) {
		if !json.Valid([]byte(a)) {
			return
		}
		if !EqualRaw([]byte(a), []byte(a)) {
			t.Fatalf("%s is not equal to itself", a)
		}
		if EqualRaw([]byte(a), []byte(b)) != EqualRaw([]byte(b), []byte(a)) {
			t.Fatalf("not symmetric: %s %s", a, b)
		}
	})
}
