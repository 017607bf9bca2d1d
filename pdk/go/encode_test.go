package pdk

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// encodingJSON is the result document as encoding/json writes it with HTML
// escaping off (through Content.MarshalJSON): what appendResult must
// write, byte for byte.
func encodingJSON(r Result) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// TestResultEncoding: the hand-written result document is encoding/json's
// for the shapes a tool returns, the hard strings and a structured content
// that is not compact or not JSON.
func TestResultEncoding(t *testing.T) {
	hard := "quote\" back\\ <&> \b\f\n\r\t \x00\x01\x1f \x7f é \u2028\u2029 \xff\xfe bad \xe2\x80 end 😀"
	for _, r := range []Result{
		{},
		{Content: []Content{}},
		Text(""),
		Text(hard),
		Errorf("%s", hard),
		{Content: []Content{{Type: "image", Data: "AAA=", MIMEType: "image/png"}, {Type: "text"}, {Type: hard, Text: hard}}},
		{Content: []Content{{Type: "text", Text: "x"}}, StructuredContent: json.RawMessage(" {\"a\" : [1, 2, {\"b\":\"<\\u2028>\"}] } ")},
		{Content: []Content{{Type: "text", Text: "x"}}, StructuredContent: json.RawMessage("null"), IsError: true},
		{StructuredContent: json.RawMessage(`{"q" : "say \"hi there\" \\ " , "n": [ ] }`)},
		{StructuredContent: json.RawMessage("{not json")},
	} {
		want, wantErr := encodingJSON(r)
		got, err := appendResult([]byte("prefix"), r)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%+v: error %v, encoding/json's %v", r, err, wantErr)
		}
		if err != nil {
			if err.Error() != wantErr.Error() {
				t.Errorf("error %q, encoding/json's %q", err, wantErr)
			}
			continue
		}
		if !bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(got[len("prefix"):], want) {
			t.Errorf("%+v:\n got %s\nwant prefix%s", r, got, want)
		}
	}
}

// FuzzResultEncoding compares appendResult with encoding/json on
// arbitrary strings and structured contents.
func FuzzResultEncoding(f *testing.F) {
	f.Add("text", "héllo \u2028 \xff", "", "", []byte(`{"a":1}`), false)
	f.Add("image", "", "AAA=", "image/png", []byte(" [1, 2] "), true)
	f.Add("", "\x00\"\\", "<>&", "\x7f", []byte("{bad"), false)
	f.Fuzz(func(t *testing.T, typ, text, data, mime string, structured []byte, isErr bool) {
		r := Result{Content: []Content{{Type: typ, Text: text, Data: data, MIMEType: mime}, Text(text).Content[0]}, StructuredContent: structured, IsError: isErr}
		want, wantErr := encodingJSON(r)
		got, err := appendResult(nil, r)
		if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("error %v, encoding/json's %v", err, wantErr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}

// FuzzJSONValid compares jsonValid with json.Valid.
func FuzzJSONValid(f *testing.F) {
	for _, s := range []string{
		``, ` `, `{}`, ` {"a" : [1, -0.5e+3, true, false, null, "x\u00e9\n"]} `, `[1,]`, `{"a":1,}`, `01`, `-`, `1.`, `1e`, `1e+`,
		`"\x"`, "\"\x01\"", "\"\xff\"", `"\u12g4"`, `tru`, `nul`, `[1 2]`, `{"a" 1}`, `{1:2}`, `"`, `[`, `{"a":`, `1 2`, `-01`, `2E-7`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
		strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if got, want := jsonValid(doc), json.Valid(doc); got != want {
			t.Fatalf("jsonValid(%q) = %v, json.Valid says %v", doc, got, want)
		}
	})
}

// parseCallMaps is parseCall as the PDK wrote it before the scan: the
// document decoded into maps of json.RawMessage. parseCall must agree.
func parseCallMaps(input []byte) (name string, args []byte, err error) {
	isKind := func(raw json.RawMessage, c byte) bool {
		raw = bytes.TrimLeft(raw, " \t\r\n")
		return len(raw) > 0 && raw[0] == c
	}
	if !json.Valid(input) {
		return "", nil, errNotObject
	}
	var env map[string]json.RawMessage
	if !isKind(input, '{') || json.Unmarshal(input, &env) != nil {
		return "", nil, errNotObject
	}
	var params map[string]json.RawMessage
	if !isKind(env["params"], '{') || json.Unmarshal(env["params"], &params) != nil {
		return "", nil, errNotObject
	}
	if !isKind(params["name"], '"') || json.Unmarshal(params["name"], &name) != nil {
		return "", nil, errNotObject
	}
	args = params["arguments"]
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	return name, args, nil
}

// FuzzParseCall compares parseCall with the map decoding it replaced:
// duplicate keys, escaped keys, whitespace, odd kinds.
func FuzzParseCall(f *testing.F) {
	for _, s := range []string{
		`{"params":{"name":"echo","arguments":{"text":"hi"}}}`,
		` { "params" : { "name" : "a\u00e9\"" , "arguments" : [ 1 ] } } `,
		`{"params":{"name":"a","name":"b","arguments":{"x":1},"arguments":null}}`,
		`{"par\u0061ms":{"n\u0061me":"x"},"params":{"name":"y","arguments":"s"}}`,
		`{"params":{"name":"x","arguments":{}},"params":[1]}`,
		"{\"params\":{\"name\":\"\xff\",\"\xff\":1}}",
		`{"params":{"name":1}}`, `{"params":{}}`, `{"params":null}`, `[]`, `"params"`, `{}`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		name, args, err := parseCall(input)
		wName, wArgs, wErr := parseCallMaps(input)
		if name != wName || !bytes.Equal(args, wArgs) || err != wErr {
			t.Fatalf("parseCall(%q) = %q, %q, %v; the map decoding gives %q, %q, %v", input, name, args, err, wName, wArgs, wErr)
		}
	})
}

// TestAppendStringMatchesEncodingJSON checks every single rune and every
// single byte, the cases a fuzzer may take long to find.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	check := func(s string) {
		t.Helper()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if got, want := string(appendString(nil, s)), strings.TrimSuffix(buf.String(), "\n"); got != want {
			t.Fatalf("appendString(%q) = %s, encoding/json: %s", s, got, want)
		}
	}
	for b := 0; b < 256; b++ {
		check("a" + string([]byte{byte(b)}) + "z")
	}
	for r := rune(0); r <= utf8.MaxRune; r += 7 {
		check(string(r) + "x")
	}
	check("\u2028\u2029")
}
