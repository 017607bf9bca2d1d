package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// jsonCases are texts decodeJSON must read as goja's JSON.parse does (or
// refuse as it does).
var jsonCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `7`, `-12.5e3`, `1E-7`, `0.1`, `""`,
	`"plain"`, `"é ü 日本"`, `"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00"`, `"lone \ud800 surrogate"`,
	"\"bad utf8 \xff\xfe\"", ` {"a" : [1, 2, {"b": null}], "c": "d"} `,
	`{"id":7,"refund":70,"items":["a","b"]}`, `{"a":1,"a":2}`, `{"0":"zero","length":3}`,
	`[[[[[[]]]]]]`, `{"__proto__": {"polluted": true}, "x": 1}`, `{"constructor": 1, "toString": 2}`,
	// Invalid: each must be refused.
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{a:1}`, `{'a':1}`, `01`, `+1`, `.5`, `1.`, `1e`, `-`,
	`tru`, `nul`, `"abc`, `"\x"`, `"\u12"`, "\"tab\there\"", `[1 2]`, `{"a" 1}`, `{} {}`, `1 2`,
	`NaN`, `Infinity`, `[1]x`, `{"a":1}}`,
}

func goParse(t testing.TB, vm *goja.Runtime, text string) (string, bool) {
	t.Helper()
	v, err := vm.RunString(`(function (s) { try { return JSON.stringify(JSON.parse(s)) } catch (e) { return null } })`)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := goja.AssertFunction(v)
	r, err := f(goja.Undefined(), vm.ToValue(text))
	if err != nil {
		t.Fatal(err)
	}
	if goja.IsNull(r) {
		return "", false
	}
	return r.String(), true
}

func ourParse(t testing.TB, vm *goja.Runtime, text string) (string, bool) {
	t.Helper()
	return ourParseNames(t, vm, nil, text)
}

// ourParseNames is ourParse through decodeJSONNames with names.
func ourParseNames(t testing.TB, vm *goja.Runtime, names memberNames, text string) (string, bool) {
	t.Helper()
	v, err := decodeJSONNames(vm, names, []byte(text))
	if err != nil {
		return "", false
	}
	stringify, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	s, err := stringify(goja.Undefined(), v)
	if err != nil {
		t.Fatal(err)
	}
	return s.String(), true
}

func checkSameAsJSONParse(t *testing.T, text string) {
	vm := goja.New()
	want, wantOK := goParse(t, vm, text)
	got, gotOK := ourParse(t, vm, text)
	switch {
	case wantOK && gotOK && got != want:
		t.Errorf("%q: decodeJSON gives %s, JSON.parse %s", text, got, want)
	case wantOK && !gotOK:
		t.Errorf("%q: decodeJSON refuses what JSON.parse reads as %s", text, want)
	case !wantOK && gotOK && !json.Valid([]byte(text)):
		t.Errorf("%q: decodeJSON reads invalid JSON as %s", text, got)
	}
	// With member names kept: made the first time, taken the second.
	names := memberNames{}
	for range 2 {
		if again, ok := ourParseNames(t, vm, names, text); again != got || ok != gotOK {
			t.Errorf("%q: with member names kept, decodeJSON gives %s %v, without %s %v", text, again, ok, got, gotOK)
		}
	}
}

// decodeJSON reads what JSON.parse reads, the same way, and refuses what
// it refuses (it reads more only where goja is stricter than JSON: a
// number out of float64's range is Infinity, as in every browser).
func TestDecodeJSONIsJSONParse(t *testing.T) {
	for _, c := range jsonCases {
		checkSameAsJSONParse(t, c)
	}
	vm := goja.New()
	if got, ok := ourParse(t, vm, `[1e999, -1e999]`); !ok || got != `[null,null]` {
		t.Errorf("1e999: %s %v; want Infinity (null once stringified)", got, ok)
	}
	v, err := decodeJSON(vm, []byte(`[1e999]`))
	if err != nil || !strings.Contains(v.String(), "Infinity") {
		t.Errorf("1e999: %v %v; want Infinity", v, err)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, c := range jsonCases {
		f.Add(c)
	}
	f.Fuzz(checkSameAsJSONParse)
}

// The member names kept are bounded in number and length; a name past
// the bounds is still read, only not kept.
func TestDecodeJSONNamesBounded(t *testing.T) {
	vm := goja.New()
	names := memberNames{}
	long := strings.Repeat("n", maxMemberName+1)
	var b strings.Builder
	b.WriteString(`{"` + long + `":1`)
	for i := range 2 * maxMemberNames {
		fmt.Fprintf(&b, `,"k%d":%d`, i, i)
	}
	b.WriteString("}")
	v, err := decodeJSONNames(vm, names, []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*goja.Object)
	if got := o.Get(long); got == nil || got.ToInteger() != 1 {
		t.Errorf("the long name reads %v", got)
	}
	if got := o.Get(fmt.Sprintf("k%d", 2*maxMemberNames-1)); got == nil || got.ToInteger() != 2*maxMemberNames-1 {
		t.Errorf("the last name reads %v", got)
	}
	if _, kept := names[long]; kept || len(names) != maxMemberNames {
		t.Errorf("%d names kept (the long one: %v); want %d, not the long one", len(names), kept, maxMemberNames)
	}
}

// A result's "__proto__" member is an own property, as JSON.parse makes
// it: the object's prototype stays Object.prototype, and a setter a
// program put on Object.prototype does not see the result's members.
func TestDecodeJSONDefinesOwnProperties(t *testing.T) {
	vm := goja.New()
	if _, err := vm.RunString(`globalThis.seen = []; Object.defineProperty(Object.prototype, "id", {set(v) { seen.push(v) }, configurable: true})`); err != nil {
		t.Fatal(err)
	}
	v, err := decodeJSON(vm, []byte(`{"__proto__": {"polluted": true}, "id": 7}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := vm.Set("v", v); err != nil {
		t.Fatal(err)
	}
	got, err := vm.RunString(`[Object.getPrototypeOf(v) === Object.prototype, Object.getOwnPropertyNames(v).join(), v.polluted === undefined, v.id, seen.length, ({}).polluted === undefined].join()`)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "true,__proto__,id,true,7,0,true" {
		t.Errorf("got %s", got)
	}
}

// A value nested past maxJSONDepth is refused, not recursed into.
func TestDecodeJSONBoundsNesting(t *testing.T) {
	vm := goja.New()
	for _, open := range []string{"[", `{"a":`} {
		deep := strings.Repeat(open, maxJSONDepth+1)
		if _, err := decodeJSON(vm, []byte(deep)); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
			t.Errorf("%s×%d: %v; want nested too deeply", open, maxJSONDepth+1, err)
		}
		if _, err := scanResult([]byte(`{"content":` + deep + `}`)); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
			t.Errorf("scanResult %s×%d: %v; want nested too deeply", open, maxJSONDepth+1, err)
		}
	}
	ok := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if _, err := decodeJSON(vm, []byte(ok)); err != nil {
		t.Errorf("100 deep: %v", err)
	}
}

// scanResult and contentText read an MCP result as encoding/json does,
// and refuse what is not JSON.
func TestScanResultIsUnmarshal(t *testing.T) {
	results := []string{
		`{}`, `{"content":null}`, `{"content":[]}`, `{"isError":null}`,
		`{"content":[{"type":"text","text":"ok"}]}`,
		`{"content":[{"type":"text","text":"a"},{"type":"image","data":"x","text":"no"},{"text":"b","type":"text","_meta":{"k":[1,{"x":"\u00e9"}]}}],"isError":true}`,
		`{"content":[{"type":"text","text":"{\"id\":7}"}],"structuredContent":{"id":7,"s":"\ud83d\ude00"},"isError":false}`,
		`{"structuredContent":null,"content":[{"type":"text","text":"esc \" \\ \n \u00e9"}]}`,
		` { "content" : [ { "type" : "text" , "text" : "spaced" } ] } `,
		`{"content":[{"type":"text","text":"x"}],"unknown":[1,2,{"a":"b"}],"n":-1.5e3}`,
		`{"\u0063ontent":[{"type":"text","text":"escaped names"}],"is\u0045rror":true,"structured\u0043ontent":{"a":1}}`,
		`{"content":[{"type":"text","text":"x"}],"isError":false,"isError":true}`,
		`{"content":[{"type":"image","type":"text","text":"dup"},{"type":"t\u0065xt","text":" escaped type"},{"type":"text","type":"image","text":"no"}]}`,
		`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"},{"type":"text","text":"d"}]}`,
		`{"content":[{"type":"text","text":"one","text":"last"}]}`,
		"{\"content\xff\":[{\"type\":\"text\",\"text\":\"not the content\"}]}",
		// Invalid.
		`[]`, `{"content":[}`, `{"content":[{"type":"text","text":"x"}]`, `{"content":[{"type":"text","text":"x"}]} x`,
		`{"content":"\q"}`, `{"content":[{"type":"text","text":"\u12g4"}]}`, `{"isError":"yes"}`, `{"isError":1}`, `{"isError":[true]}`, `{"content":[1]}`,
		`{"content":{"type":"text"}}`, `{"a":01}`, `{"content":[{"type":"text","text":"ctl` + "\x01" + `"}]}`,
	}
	for _, raw := range results {
		var want struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		}
		wantErr := json.Unmarshal([]byte(raw), &want)
		res, err := scanResult([]byte(raw))
		var text string
		if err == nil {
			text, err = contentText(res.content)
		}
		if wantErr != nil {
			if err == nil {
				t.Errorf("%s: read, want an error like %v", raw, wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		var wantText string
		for _, c := range want.Content {
			if c.Type == "text" {
				wantText += c.Text
			}
		}
		if text != wantText || res.isError != want.IsError || string(res.structured) != string(want.StructuredContent) {
			t.Errorf("%s: text %q error %v structured %s; want %q %v %s", raw, text, res.isError, res.structured, wantText, want.IsError, want.StructuredContent)
		}
	}
}

// Numbers are the values JSON.parse makes, down to the sign of zero and
// at the edges of the integers read without ParseFloat.
func TestDecodeJSONNumbersAreJSONParse(t *testing.T) {
	vm := goja.New()
	same, err := vm.RunString(`(function (v, s) { return Object.is(v, JSON.parse(s)) })`)
	if err != nil {
		t.Fatal(err)
	}
	is, _ := goja.AssertFunction(same)
	for _, text := range []string{"0", "-0", "7", "-7", "255", "256", "-256", "123456789012345", "-123456789012345",
		"1234567890123456", "9007199254740993", "-9007199254740993", "12345678901234567890", "0.0", "-0.0", "7.0", "7e0", "1e2"} {
		v, err := decodeJSON(vm, []byte(text))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		ok, err := is(goja.Undefined(), v, vm.ToValue(text))
		if err != nil {
			t.Fatal(err)
		}
		if !ok.ToBoolean() {
			t.Errorf("%s: decodeJSON gives %v, not what JSON.parse gives", text, v)
		}
	}
}
