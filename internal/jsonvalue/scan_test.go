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
		"\xff", "a\xc3", "\xed\xa0\x80", `\\\/\b\f\n\r\t`, `\u0000`, strings.Repeat("long text ", 20) + `\n`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		tok := append(append([]byte{'"'}, body...), '"')
		s := NewScanner(tok)
		raw, escaped, ok := s.Str()
		var want string
		valid := json.Unmarshal(tok, &want) == nil
		if whole := ok && s.Pos() == len(tok); whole != valid {
			t.Fatalf("str(%q): ok %v (end %d of %d), encoding/json valid %v", tok, ok, s.Pos(), len(tok), valid)
		}
		if !valid {
			return
		}
		if got := Unquote(raw, escaped); got != want {
			t.Fatalf("Unquote(%q) = %q, encoding/json gives %q", raw, got, want)
		}
	})
}

// TestDepthLimit: nesting is limited as encoding/json limits it.
func TestDepthLimit(t *testing.T) {
	for _, depth := range []int{MaxDepth, MaxDepth + 1} {
		doc := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		if got, want := Valid(doc), json.Valid(doc); got != want {
			t.Errorf("depth %d: Valid %v, encoding/json %v", depth, got, want)
		}
	}
}
