package pdk

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzCall feeds arbitrary call documents to a registered tool: Call must
// never panic and must always answer with a result document.
func FuzzCall(f *testing.F) {
	for _, seed := range []string{
		`{"params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"params":{"name":"echo","arguments":{"text":"hi","n":[1,{"a":null}]}}}`,
		`{"params":{"name":"echo","arguments":{"text":"\ud800","tags":["a",2]}}}`,
		`{"params":{"name":"echo"}}`,
		`[`, `{"params":`, `null`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		type in struct {
			Text string   `json:"text"`
			N    int8     `json:"n,omitempty"`
			Tags []string `json:"tags,omitempty" enum:"a,b"`
		}
		withTools(t, nil, NewTool("echo", "Echoes.", func(_ context.Context, v in) (string, error) { return v.Text, nil }))
		out := Call(input)
		var r Result
		if err := json.Unmarshal(out, &r); err != nil || len(r.Content) != 1 {
			t.Fatalf("Call(%q) = %q: not a result document (%v)", input, out, err)
		}
	})
}
