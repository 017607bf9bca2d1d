package main

import (
	"encoding/json"
	"testing"
)

// A request names the tool and carries the arguments as given, for every
// tool name JSON can quote, whatever the calls made before it (the buffer
// and the names' heads are reused).
func TestRequestsBuild(t *testing.T) {
	var r requests
	for _, c := range []struct{ name, args string }{
		{"get_order", `{"id":7}`},
		{"refund", `{}`},
		{"get_order", `{"id":8,"note":"a longer argument than the first"}`},
		{`odd "name" \ <&>`, `{"x":[1,2]}`},
		{"naïve\u2028tool", `{"y":null}`},
		{"get_order", `{"id":9}`},
	} {
		got, err := r.build(c.name, []byte(c.args))
		if err != nil {
			t.Fatal(err)
		}
		var req struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(got, &req); err != nil {
			t.Fatalf("request %s: %v", got, err)
		}
		if req.Name != c.name || string(req.Arguments) != c.args {
			t.Errorf("request %s: name %q arguments %s, want %q %s", got, req.Name, req.Arguments, c.name, c.args)
		}
	}
}
