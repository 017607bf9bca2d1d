package loop

import "testing"

func TestCanonicalJSON(t *testing.T) {
	same := [][2]string{
		{`{"b":1,"a":[1, 2]}`, `{"a":[1,2],"b":1}`},
		{` {"a":"x"} `, `{"a":"x"}`},
	}
	for _, c := range same {
		if canonicalJSON([]byte(c[0])) != canonicalJSON([]byte(c[1])) {
			t.Errorf("%s and %s differ canonically", c[0], c[1])
		}
	}
	differ := [][2]string{
		{`{"a":1}}`, `{"a":1}`}, // trailing data is not the same arguments
		{`{"a":1} 2`, `{"a":1}`},
		{`{"a":1}`, `{"a":2}`},
	}
	for _, c := range differ {
		if canonicalJSON([]byte(c[0])) == canonicalJSON([]byte(c[1])) {
			t.Errorf("%s and %s are canonically equal", c[0], c[1])
		}
	}
}
