package httpx

import (
	"encoding/json"
	"testing"
)

func TestJSONObject(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"city":"Oslo"}`, `{"city":"Oslo"}`},
		{" \n{\"a\":1}\t", `{"a":1}`}, // trimmed
		{``, `{}`},
		{`{"city":`, `{}`},  // a model's truncated arguments
		{`["Oslo"]`, `{}`},  // valid JSON, not an object
		{`"Oslo"`, `{}`},    // a string
		{`{"a":1} x`, `{}`}, // trailing garbage
		{`null`, `{}`},
	} {
		if got := string(JSONObject(json.RawMessage(tt.in))); got != tt.want {
			t.Errorf("JSONObject(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
