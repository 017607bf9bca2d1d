package host

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/jsonvalue"
	"github.com/autoagent-go/autoagent/tool"
)

// resultSeeds are result documents, well-formed and not, for the result
// decoder's fuzz test and the argument shortcut's.
var resultSeeds = []string{
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
	// Strings longer than the scanner's short-string reading.
	`{"content":[{"type":"text","text":"` + strings.Repeat("long ", 30) + `\"é\u00e9"}],"structuredContent":{"` + strings.Repeat("k", 90) + `":"` + strings.Repeat("v", 90) + `"}}`,
	`{"content":[{"type":"text","text":"` + strings.Repeat("bad ", 30) + "\xff\x01" + `"}]}`,
	`{"content":[{"type":"text","text":"` + strings.Repeat("x", 80) + "\xff" + `"}]}`,
	`{"` + strings.Repeat("c", 70) + `ontent":[],"content":[{"type":"text","text":"` + strings.Repeat("x", 80) + `"}]}`,
}

// FuzzParseResult: the one-pass decoder and encoding/json give the same
// result and the same error for any output.
func FuzzParseResult(f *testing.F) {
	for _, s := range resultSeeds {
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
	for _, args := range resultSeeds {
		if args == "" {
			continue
		}
		if fast, full := jsonvalue.IsObject([]byte(args)), s.Validate(json.RawMessage(args)) == nil; fast && !full {
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
