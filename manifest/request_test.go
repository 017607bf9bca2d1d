package manifest

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRequest(t *testing.T) {
	for _, s := range []string{"net", "fs.read", "fs.write", "env", "kv", "tools"} {
		g, err := ParseRequest(s)
		if err != nil {
			t.Fatalf("ParseRequest(%q): %v", s, err)
		}
		if !g.IsAny() || g.String() != s {
			t.Errorf("ParseRequest(%q) = %+v (String %q), want a bare-kind request", s, g, g.String())
		}
		// A bare kind is a request, never a grant.
		if _, err := ParseGrant(s); err == nil {
			t.Errorf("ParseGrant(%q) accepted a bare kind", s)
		}
	}
	for _, s := range []string{"net:api.example.com", "clock", "fs.read:/data"} {
		g, err := ParseRequest(s)
		if err != nil || g.IsAny() || g.String() != s {
			t.Errorf("ParseRequest(%q) = %+v, %v; want the grant itself", s, g, err)
		}
	}
	var ge *GrantError
	if _, err := ParseRequest("disk"); !errors.As(err, &ge) {
		t.Errorf("ParseRequest(disk) error = %v, want *GrantError", err)
	}
}

func TestExceedingWithBareKindRequests(t *testing.T) {
	tests := []struct {
		requested, granted, want string
	}{
		{"net", "net:api.example.com net:*.example.org:8443", ""},
		{"fs.read", "fs.read:/data", ""},
		{"fs.read", "fs.write:/data", "fs.write:/data"},
		{"fs.write", "fs.read:/data fs.write:/out", ""},
		{"kv", "kv:notes", ""},
		{"env", "env:HOME kv:x", "kv:x"},
		{"net", "clock", "clock"},
		{"tools", "tools:http_get", ""},
	}
	for _, tt := range tests {
		req, err := ParseRequests(strings.Fields(tt.requested))
		if err != nil {
			t.Fatal(err)
		}
		granted, err := ParseGrants(strings.Fields(tt.granted))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range Exceeding(req, granted) {
			got = append(got, g.String())
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("requested %q, granted %q: exceeding = %v, want %q", tt.requested, tt.granted, got, tt.want)
		}
	}
}

func TestMissing(t *testing.T) {
	tests := []struct{ requested, granted, want string }{
		{"net", "net:api.example.com", ""},
		{"net kv", "net:api.example.com", "kv"},
		{"fs.read", "fs.write:/data", ""},
		{"fs.write", "fs.read:/data", "fs.write"},
		{"net:api.example.com", "net:*.example.com", ""},
		{"net:api.example.com", "net:other.example.com", "net:api.example.com"},
		{"clock random", "clock", "random"},
	}
	for _, tt := range tests {
		req, err := ParseRequests(strings.Fields(tt.requested))
		if err != nil {
			t.Fatal(err)
		}
		granted, err := ParseGrants(strings.Fields(tt.granted))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range Missing(req, granted) {
			got = append(got, g.String())
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("requested %q, granted %q: missing = %v, want %q", tt.requested, tt.granted, got, tt.want)
		}
	}
}
