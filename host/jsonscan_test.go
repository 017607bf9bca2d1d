package host

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/tool"
)

var jsonSeeds = []string{
	``, ` `, `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `01`, `1.`, `1.5e+3`, `-1E-2`, `1e`, `.5`,
	`"a"`, `"\u00e9\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`, `"\x"`, "\"a\x01\"", `"\/\b\f\n\r\t"`,
	"\"\xff\xfe\"", "\"caf\xc3\xa9\"", `{"a":1,"a":2}`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a":[{"b":null}]}`,
	`{"content":[{"type":"text","text":"hi"}]}`, `{"content":[{"type":"text","text":"hi"}]} `, `{"content":[]}}`,
	`{"content":[{"type":"text","text":"a\"b\\c\u0041"}],"structuredContent":{"x":[1,2,{"y":"z"}]},"isError":false}`,
	`{"Content":[{"type":"text","text":"case"}]}`, `{"content":[{"Type":"text","text":"case"}]}`,
	`{"content":[{"type":"text","text":"a","text":"b"}]}`, `{"content":null,"structuredContent":{"a":1}}`,
	`{"content":[{"type":"resource","resource":{"uri":"u","text":"t","mimeType":"m"}}]}`,
	`{"content":[{"type":"resource","resource":null}]}`, `{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
	`{"content":[{"type":"resource_link","uri":"file:///x"}]}`, `{"content":[null]}`, `{"content":[1]}`,
	`{"content":[{"type":"text","text":1}]}`, `{"content":[{"type":"text","text":null}]}`, `{"isError":"yes","content":[]}`,
	`{"isError":true,"content":[{"type":"text","text":"boom"}]}`, `{"structuredContent":[1]}`, `{"structuredContent":null}`,
	`{"content":[{"type":"text","text":"x"}],"extra":{"deep":[[[]]]},"more":"\u0000"}`, `{"cont\u0065nt":[]}`,
	`{"content":[{"type":"text","text":"x"}]} {"content":[]}`, `{"content":[{"type":"text","text":"x"}]}]`,
	`{"contenté":[]}`, `{"structuredcontent":{}}`, `{"content":[{"type":"text","text":"x","uri":"u","data":"d"}]}`,
}

// FuzzValidJSON: the scanner accepts exactly what encoding/json accepts.
func FuzzValidJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, encoding/json says %v", b, got, want)
		}
		var v any
		isObj := json.Unmarshal(b, &v) == nil && reflect.TypeOf(v) == reflect.TypeFor[map[string]any]()
		if got := isJSONObject(b); got != isObj {
			t.Fatalf("isJSONObject(%q) = %v, want %v", b, got, isObj)
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
		s := jsonScanner{b: tok}
		raw, escaped, ok := s.str()
		var want string
		valid := json.Unmarshal(tok, &want) == nil
		if whole := ok && s.p == len(tok); whole != valid {
			t.Fatalf("str(%q): ok %v (end %d of %d), encoding/json valid %v", tok, ok, s.p, len(tok), valid)
		}
		if !valid {
			return
		}
		if got := unquote(raw, escaped); got != want {
			t.Fatalf("unquote(%q) = %q, encoding/json gives %q", raw, got, want)
		}
	})
}

// FuzzParseResult: the one-pass decoder and encoding/json give the same
// result and the same error for any output.
func FuzzParseResult(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		got, gotErr := parseResult(out, nil)
		var want tool.Result
		d, wantErr := decodeResultSlow(out)
		if wantErr == nil {
			want, wantErr = d.result(nil)
		}
		if errString(gotErr) != errString(wantErr) {
			t.Fatalf("parseResult(%q): error %q, encoding/json path: %q", out, errString(gotErr), errString(wantErr))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("parseResult(%q) = %#v, encoding/json path: %#v", out, got, want)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestResultFastPathTaken: well-formed results are decoded by the fast
// path, not by encoding/json (the speed of every call depends on it).
func TestResultFastPathTaken(t *testing.T) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"text","text":"a\"b"}],"structuredContent":{"x":1},"isError":false}`,
		` {"isError":true,"content":[{"type":"text","text":"boom","annotations":{"a":1}}]} `,
	} {
		if _, ok := decodeResultFast([]byte(s)); !ok {
			t.Errorf("decodeResultFast declined %s", s)
		}
	}
}

// TestJSONDepthLimit: nesting is limited as encoding/json limits it.
func TestJSONDepthLimit(t *testing.T) {
	for _, depth := range []int{maxJSONDepth, maxJSONDepth + 1} {
		doc := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		if got, want := validJSON(doc), json.Valid(doc); got != want {
			t.Errorf("depth %d: validJSON %v, encoding/json %v", depth, got, want)
		}
	}
}

// TestAcceptsAnyObject: only schemas that accept every object take the
// scanner's shortcut, and the shortcut agrees with the schema validator.
func TestAcceptsAnyObject(t *testing.T) {
	for _, c := range []struct {
		schema string
		want   bool
	}{
		{`{"type":"object"}`, true},
		{`{"type":"object","properties":{},"required":[],"additionalProperties":true,"description":"d"}`, true},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, false},
		{`{"type":"object","required":["a"]}`, false},
		{`{"type":"object","additionalProperties":false}`, false},
		{`{"type":"object","maxProperties":1}`, false},
		{`{"type":["object","null"]}`, false},
		{`{}`, false},
		{`{"properties":{}}`, false},
	} {
		if got := acceptsAnyObject(json.RawMessage(c.schema)); got != c.want {
			t.Errorf("acceptsAnyObject(%s) = %v, want %v", c.schema, got, c.want)
		}
	}
	s, err := tool.CompileSchema(json.RawMessage(`{"type":"object","properties":{},"additionalProperties":true}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range jsonSeeds {
		if args == "" {
			continue
		}
		if fast, full := isJSONObject([]byte(args)), s.Validate(json.RawMessage(args)) == nil; fast && !full {
			t.Errorf("%s: the scanner accepts what the schema refuses", args)
		}
	}
}

// TestResultContentItemsBounded: a result holds at most maxContentItems
// content items, on the fast path (well-formed items) and the slow one
// (items it declines), which stops before decoding each item.
func TestResultContentItemsBounded(t *testing.T) {
	for _, item := range []string{`{"type":"text","text":"x"}`, `{}`} {
		doc := func(n int) []byte {
			return []byte(`{"content":[` + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + `]}`)
		}
		if item != `{}` {
			if _, err := parseResult(doc(maxContentItems), nil); err != nil {
				t.Errorf("%s x %d: %v", item, maxContentItems, err)
			}
		}
		_, err := parseResult(doc(maxContentItems+1), nil)
		if want := fmt.Sprintf("%d content items, more than the %d a result may hold", maxContentItems+1, maxContentItems); err == nil || err.Error() != want {
			t.Errorf("%s x %d: %v, want %q", item, maxContentItems+1, err, want)
		}
	}
}
