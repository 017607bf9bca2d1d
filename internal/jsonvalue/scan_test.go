package jsonvalue

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// jsonSeeds are JSON texts, valid and not, for the scanner's fuzz tests.
var jsonSeeds = []string{
	``, ` `, `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `01`, `1.`, `1.5e+3`, `-1E-2`, `1e`, `.5`,
	`"a"`, `"\u00e9\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`, `"\x"`, "\"a\x01\"", `"\/\b\f\n\r\t"`,
	"\"\xff\xfe\"", "\"caf\xc3\xa9\"", `{"a":1,"a":2}`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a":[{"b":null}]}`,
}

// FuzzValid: the scanner accepts exactly what encoding/json accepts.
func FuzzValid(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
		var v any
		isObj := json.Unmarshal(b, &v) == nil && reflect.TypeOf(v) == reflect.TypeFor[map[string]any]()
		if got := IsObject(b); got != isObj {
			t.Fatalf("IsObject(%q) = %v, want %v", b, got, isObj)
		}
	})
}

// FuzzUnquote: a string token decodes to what encoding/json decodes it to,
// escapes, surrogates and invalid UTF-8 included.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{``, `a`, `\"`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\ud83dx`, `\ude00`, `\ud83d\u0041`,
		"\xff", "a\xc3", "\xed\xa0\x80", `\\\/\b\f\n\r\t`, `\u0000`, strings.Repeat("long text ", 20) + `\n`,
		strings.Repeat("é", 40) + `\"` + strings.Repeat("x", 100) + "\x01", strings.Repeat(`x\"`, 50) + "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkStr(t, body)
		// Past longRun bytes a string is read by strRuns.
		checkStr(t, append([]byte(strings.Repeat("x", longRun+6)), body...))
	})
}

// checkStr checks the string token of body against encoding/json: Str
// accepts it exactly when encoding/json does, and Unquote decodes it to
// the same string.
func checkStr(t *testing.T, body []byte) {
	t.Helper()
	tok := append(append([]byte{'"'}, body...), '"')
	s := NewScanner(tok)
	raw, verbatim, ok := s.Str()
	var want string
	valid := json.Unmarshal(tok, &want) == nil
	if whole := ok && s.Pos() == len(tok); whole != valid {
		t.Fatalf("str(%q): ok %v (end %d of %d), encoding/json valid %v", tok, ok, s.Pos(), len(tok), valid)
	}
	if !valid {
		return
	}
	if got := Unquote(raw, verbatim); got != want {
		t.Fatalf("Unquote(%q, %v) = %q, encoding/json gives %q", raw, verbatim, got, want)
	}
}

// TestStrEveryOffset: a quote, an escape, a control character or a
// non-ASCII byte at every offset of strings around the lengths where Str
// changes how it reads (8-byte words, longRun, plainRun's 32-byte
// blocks and its tail) is read as encoding/json reads it.
func TestStrEveryOffset(t *testing.T) {
	inserts := []string{`"`, `\`, `\"`, `\\`, `\n`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\x`, `\u12`,
		"\x00", "\x01", "\x1f", "\x7f", "\x80", "é", "\xff", "\xed\xa0\x80"}
	for _, n := range []int{7, 8, 9, 31, 32, 33, longRun - 1, longRun, longRun + 1, longRun + 39, longRun + 40, 2*longRun + 7} {
		for k := 0; k <= n; k++ {
			for _, ins := range inserts {
				body := []byte(strings.Repeat("x", k) + ins + strings.Repeat("y", n-k))
				checkStr(t, body)
				doc := []byte(`{"` + string(body) + `":"` + string(body) + `"}`)
				// The whole document, and cut inside its last string.
				for _, d := range [][]byte{doc, doc[:len(doc)-2]} {
					if got, want := Valid(d), json.Valid(d); got != want {
						t.Fatalf("Valid(%q) = %v, encoding/json says %v", d, got, want)
					}
				}
			}
		}
	}
}
