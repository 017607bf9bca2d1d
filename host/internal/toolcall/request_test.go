package toolcall

import (
	"encoding/json"
	"testing"
)

// toolCallRequests are requests parseRequest must read as
// json.Unmarshal reads them: the form engines write, and near misses of it
// that its fast path must leave to json.Unmarshal.
var toolCallRequests = []string{
	`{"name":"get_order","arguments":{"id":7}}`,
	`{"name":"get_order","arguments":{}}`,
	`{"name":"a","arguments":null}`,
	`{"name":"a","arguments":[1,"x",{"y":true}]}`,
	`{"name":"a","arguments":"text"}`,
	`{"name":"a","arguments":{"x":1},"name":"b"}`,
	`{"name":"a","arguments":{"x":1},"arguments":{"x":2}}`,
	`{"name":"a","arguments":{"x":1}}}`,
	`{"name":"a","arguments":{"x":1}} `,
	`{"name":"a","arguments": {"x":1}}`,
	`{"name":"a","arguments":{"x":1} }`,
	`{"name":"a","arguments":{"x":}}`,
	`{"name":"a","arguments":}`,
	`{"name":"a","arguments":{"s":"\u00e9 \" }"}}`,
	`{"name":"a\"b","arguments":{}}`,
	`{"name":"a\\","arguments":{}}`,
	`{"name":"a\u0062","arguments":{}}`,
	"{\"name\":\"na\xefve\",\"arguments\":{}}",
	"{\"name\":\"bad\xff\",\"arguments\":{}}",
	"{\"name\":\"tab\there\",\"arguments\":{}}",
	`{"name":"","arguments":{}}`,
	`{"NAME":"a","Arguments":{"x":1}}`,
	`{"arguments":{"x":1},"name":"a"}`,
	`{"name":"a"}`,
	`{"name":7,"arguments":{}}`,
	`{"name":"a","arguments":{}`,
	`{"name":"a","arguments":{}}x`,
	`[]`, `{}`, ``, `null`,
}

func checkToolCallRequest(t *testing.T, raw string) {
	got, gotErr := parseRequest([]byte(raw))
	var want request
	wantErr := json.Unmarshal([]byte(raw), &want)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, json.Unmarshal's %v", raw, gotErr, wantErr)
	}
	if gotErr == nil && (got.Name != want.Name || string(got.Arguments) != string(want.Arguments)) {
		t.Fatalf("%q: %q %s, json.Unmarshal reads %q %s", raw, got.Name, got.Arguments, want.Name, want.Arguments)
	}
}

func TestParseToolCallRequestIsUnmarshal(t *testing.T) {
	for _, raw := range toolCallRequests {
		checkToolCallRequest(t, raw)
	}
}

func FuzzParseToolCallRequest(f *testing.F) {
	for _, raw := range toolCallRequests {
		f.Add(raw)
	}
	f.Fuzz(checkToolCallRequest)
}

// The arguments read are the request's own copy: the guest's memory, which
// the request was read from, may change once tool_call returns.
func TestParseToolCallRequestCopiesArguments(t *testing.T) {
	raw := []byte(`{"name":"a","arguments":{"x":1}}`)
	c, err := parseRequest(raw)
	if err != nil {
		t.Fatal(err)
	}
	copy(raw, "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX")
	if c.Name != "a" || string(c.Arguments) != `{"x":1}` {
		t.Fatalf("after the buffer changed: %q %s", c.Name, c.Arguments)
	}
}
