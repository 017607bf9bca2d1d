package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRequest(t *testing.T) {
	for _, s := range []string{"net", "fs.read", "fs.write", "fs.workspace", "env", "kv", "tools"} {
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
		{"fs.write", "fs.workspace:/out", ""},
		{"fs.workspace", "fs.workspace:/out fs.read:/in", ""},
		{"fs.workspace", "fs.write:/out", "fs.write:/out"},
		{"fs.read", "fs.workspace:/data", "fs.workspace:/data"},
		{"kv", "kv:notes", ""},
		{"env", "env:HOME kv:x", "kv:x"},
		{"net", "clock", "clock"},
		{"tools", "tools:http_get", ""},
	}
	for _, tt := range tests {
		if got := compareGrants(t, Exceeding, tt.requested, tt.granted); got != tt.want {
			t.Errorf("requested %q, granted %q: exceeding = %q, want %q", tt.requested, tt.granted, got, tt.want)
		}
	}
}

// compareGrants parses space-separated requests and grants, applies f
// (Exceeding or Missing) and returns its result as space-separated grants.
func compareGrants(t *testing.T, f func(req, granted []Grant) []Grant, requested, granted string) string {
	t.Helper()
	req, err := ParseRequests(strings.Fields(requested))
	if err != nil {
		t.Fatal(err)
	}
	gs, err := ParseGrants(strings.Fields(granted))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(GrantStrings(f(req, gs)), " ")
}

func TestMissing(t *testing.T) {
	tests := []struct{ requested, granted, want string }{
		{"net", "net:api.example.com", ""},
		{"net kv", "net:api.example.com", "kv"},
		{"fs.read", "fs.write:/data", ""},
		{"fs.write", "fs.read:/data", "fs.write"},
		{"fs.workspace", "fs.write:/data", ""},
		{"fs.workspace", "fs.read:/data", "fs.workspace"},
		{"fs.read", "fs.workspace:/data", ""},
		{"fs.write", "fs.workspace:/data", "fs.write"},
		{"fs.workspace:/data", "fs.workspace:/data/sub", "fs.workspace:/data"},
		{"net:api.example.com", "net:*.example.com", ""},
		{"net:api.example.com", "net:other.example.com", "net:api.example.com"},
		{"clock random", "clock", "random"},
	}
	for _, tt := range tests {
		if got := compareGrants(t, Missing, tt.requested, tt.granted); got != tt.want {
			t.Errorf("requested %q, granted %q: missing = %q, want %q", tt.requested, tt.granted, got, tt.want)
		}
	}
}

// TestExceedingThroughPlantedLink: a grant under the requested directory
// that leads outside it through a symbolic link exceeds the request; the
// comparison is made on resolved paths.
func TestExceedingThroughPlantedLink(t *testing.T) {
	root := t.TempDir()
	data, outside := filepath.Join(root, "data"), filepath.Join(root, "outside")
	for _, d := range []string{data, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(data, "link")); err != nil {
		t.Fatal(err)
	}
	req := []Grant{{Kind: KindFSRead, Path: data}}
	for _, c := range []struct {
		path    string
		exceeds bool
	}{
		{filepath.Join(data, "sub"), false},
		{filepath.Join(data, "link"), true},
		{filepath.Join(data, "link", "secret.txt"), true},
		{filepath.Join(data, "sub", "..", "link"), true},
	} {
		got := Exceeding(req, []Grant{{Kind: KindFSRead, Path: c.path}})
		if (len(got) > 0) != c.exceeds {
			t.Errorf("granting %s for a request of %s: exceeding = %v, want exceeds %v", c.path, data, got, c.exceeds)
		}
	}
}
