package manifest

import (
	"errors"
	"strings"
	"testing"
)

func TestParseGrantValid(t *testing.T) {
	tests := []struct {
		in   string
		want Grant
		str  string
	}{
		{"net:api.example.com", Grant{Kind: KindNet, Host: "api.example.com"}, ""},
		{"net:API.Example.com", Grant{Kind: KindNet, Host: "api.example.com"}, "net:api.example.com"},
		{"net:*.example.com", Grant{Kind: KindNet, Host: "*.example.com"}, ""},
		{"net:localhost:8080", Grant{Kind: KindNet, Host: "localhost", Port: 8080}, ""},
		{"net:127.0.0.1", Grant{Kind: KindNet, Host: "127.0.0.1"}, ""},
		{"net:127.0.0.1:9000", Grant{Kind: KindNet, Host: "127.0.0.1", Port: 9000}, ""},
		{"net:[::1]:9000", Grant{Kind: KindNet, Host: "::1", Port: 9000}, ""},
		{"net:::1", Grant{Kind: KindNet, Host: "::1"}, ""},
		{"net:*", Grant{Kind: KindNet, Host: "*"}, ""},
		{"net:*:8443", Grant{Kind: KindNet, Host: "*", Port: 8443}, ""},
		{"fs.read:/data/in/", Grant{Kind: KindFSRead, Path: "/data/in"}, "fs.read:/data/in"},
		{"fs.write:/tmp/out", Grant{Kind: KindFSWrite, Path: "/tmp/out"}, ""},
		{"fs.read:/data/in=/mnt", Grant{Kind: KindFSRead, Path: "/data/in", Guest: "/mnt"}, ""},
		{"fs.write:/data/a=b/=/mnt/x/", Grant{Kind: KindFSWrite, Path: "/data/a=b", Guest: "/mnt/x"}, "fs.write:/data/a=b=/mnt/x"},
		{"fs.read:/data=/", Grant{Kind: KindFSRead, Path: "/data", Guest: "/"}, ""},
		{"fs.workspace:/w/out/", Grant{Kind: KindFSWorkspace, Path: "/w/out"}, "fs.workspace:/w/out"},
		{"fs.workspace:/w/a/../out=/work/", Grant{Kind: KindFSWorkspace, Path: "/w/out", Guest: "/work"}, "fs.workspace:/w/out=/work"},
		{"env:HOME_DIR", Grant{Kind: KindEnv, Name: "HOME_DIR"}, ""},
		{"kv:notes.v1", Grant{Kind: KindKV, Name: "notes.v1"}, ""},
		{"tools:http_get", Grant{Kind: KindTools, Name: "http_get"}, ""},
		{"clock", Grant{Kind: KindClock}, ""},
		{"random", Grant{Kind: KindRandom}, ""},
		{"state", Grant{Kind: KindState}, ""},
		{"config:api-key=$API_KEY", Grant{Kind: KindConfig, Name: "api-key", Value: "$API_KEY"}, ""},
		{"config:region=eu-west-1", Grant{Kind: KindConfig, Name: "region", Value: "eu-west-1"}, ""},
		{"config:a b.c=x=y", Grant{Kind: KindConfig, Name: "a b.c", Value: "x=y"}, ""},
		{"config:price=$$5", Grant{Kind: KindConfig, Name: "price", Value: "$$5"}, ""},
		{"config:empty=", Grant{Kind: KindConfig, Name: "empty"}, ""},
		{"host:extism:host/user.mult", Grant{Kind: KindHost, Name: "extism:host/user.mult"}, ""},
		{"host:host.to_upper", Grant{Kind: KindHost, Name: "host.to_upper"}, ""},
		{"host:my.app.v1.lookup", Grant{Kind: KindHost, Name: "my.app.v1.lookup"}, ""},
	}
	for _, tt := range tests {
		got, err := ParseGrant(tt.in)
		if err != nil {
			t.Errorf("ParseGrant(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseGrant(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		str := tt.str
		if str == "" {
			str = tt.in
		}
		if got.String() != str {
			t.Errorf("ParseGrant(%q).String() = %q, want %q", tt.in, got.String(), str)
		}
		again, err := ParseGrant(got.String())
		if err != nil || again != got {
			t.Errorf("round trip of %q: %+v, %v", tt.in, again, err)
		}
	}
}

func TestParseGrantInvalid(t *testing.T) {
	tests := []struct{ in, wantInReason string }{
		{"", "empty"},
		{" net:a.com", "spaces"},
		{"net", "KIND:VALUE"},
		{"net:", "missing value"},
		{"net:a.com:", "empty port"},
		{"net:a.com:0", "1 to 65535"},
		{"net:a.com:65536", "1 to 65535"},
		{"net:a.com:http", "1 to 65535"},
		{"net:*.com", "two labels"},
		{"net:a.*.com", "leading"},
		{"net:exa_mple.com", "not a valid host name"},
		{"net:-a.com", "not a valid host name"},
		{"net:[::1", "unclosed"},
		{"net:[127.0.0.1]:80", "not an IPv6"},
		{"net:fe80::1:80:x", "[ADDR]:PORT"},
		{"config:nokey", "KEY=VALUE"},
		{"config:=v", "1-256 bytes"},
		{"config:k=$1ABC", "environment variable name"},
		{"config:k=$", "environment variable name"},
		{"config:k=a\u202eb", "invisible"},
		{"config:k\x00=v", "control"},
		{"fs.read:data", "absolute"},
		{"fs.write:/", "whole file system"},
		{"fs.read:data=/mnt", "absolute"},
		{"fs.read:/data=/m\nt", "guest path contains a control"},
		{"fs.read:/ /.", "ends with white space"},
		{"fs.read:/data\n/x", "control character"},
		{"fs.read:/a\x1b[2Jb", "control character"},
		{"fs.read:/tmp/\u202eehcac\u202c", "invisible formatting character"},
		{"fs.write:/a\u200bb", "invisible formatting character"},
		{"fs.workspace:/", "whole file system"},
		{"fs.workspace:out", "absolute"},
		{"fs.workspace:/w\u202eb", "invisible formatting character"},
		{"fs.workspace:/w=/g\x00", "guest path contains a control"},
		{"env:1ABC", "env name"},
		{"env:A-B", "env name"},
		{"kv:a/b", "kv namespace"},
		{"tools:a b", "tool name"},
		{"clock:x", "takes no value"},
		{"state:x", "takes no value"},
		{"host:mult", "NAMESPACE.NAME"},
		{"host:.mult", "NAMESPACE.NAME"},
		{"host:ns.", "NAMESPACE.NAME"},
		{"host:extism:host/env.alloc", "host's own namespace"},
		{"host:wasi_snapshot_preview1.fd_write", "host's own namespace"},
		{"host:autoagent:kernel.yield", "host's own namespace"},
		{"host:extism:host/user.kv_get", "a kv: grant"},
		{"host:extism:host/user.tool_call", "a tools: grant"},
		{"host:extism:host/user.notify_tool_list_changed", "needs no grant"},
		{"host:my ns.f", "space"},
		{"host:ns.f\u202e", "invisible"},
		{"disk:/x", "unknown kind"},
		{"NET:a.com", "unknown kind"},
	}
	for _, tt := range tests {
		_, err := ParseGrant(tt.in)
		var ge *GrantError
		if !errors.As(err, &ge) {
			t.Errorf("ParseGrant(%q) error = %v, want *GrantError", tt.in, err)
			continue
		}
		if ge.Grant != tt.in || !strings.Contains(ge.Reason, tt.wantInReason) {
			t.Errorf("ParseGrant(%q) = %q, want reason containing %q", tt.in, err, tt.wantInReason)
		}
	}
}

func TestMatchHost(t *testing.T) {
	tests := []struct {
		grant, host string
		port        int
		want        bool
	}{
		{"net:api.example.com", "api.example.com", 443, true},
		{"net:api.example.com", "API.example.com.", 80, true},
		{"net:api.example.com", "api.example.com", 8443, false},
		{"net:api.example.com", "evil.example.com", 443, false},
		{"net:api.example.com", "api.example.com.evil.net", 443, false},
		{"net:*.example.com", "a.b.example.com", 443, true},
		{"net:*.example.com", "example.com", 443, false},
		{"net:*.example.com", "badexample.com", 443, false},
		{"net:localhost:8080", "localhost", 8080, true},
		{"net:localhost:8080", "localhost", 80, false},
		{"net:127.0.0.1:9000", "127.0.0.1", 9000, true},
		{"net:[::1]:9000", "::1", 9000, true},
		{"net:127.0.0.1:9000", "localhost", 9000, false},
		// A zoned IPv6 literal ends like a name but is neither.
		{"net:*.example.com", "::1%.example.com", 443, false},
		{"net:[::1]:9000", "::1%lo", 9000, false},
		{"env:X", "x", 443, false},
	}
	for _, tt := range tests {
		g, err := ParseGrant(tt.grant)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.MatchHost(tt.host, tt.port); got != tt.want {
			t.Errorf("%s.MatchHost(%q, %d) = %v, want %v", tt.grant, tt.host, tt.port, got, tt.want)
		}
	}
}

func TestExceeding(t *testing.T) {
	must := func(ss ...string) []Grant {
		gs, err := ParseGrants(ss)
		if err != nil {
			t.Fatal(err)
		}
		return gs
	}
	tests := []struct {
		requested, granted []string
		want               []string
	}{
		{[]string{"net:api.example.com"}, []string{"net:api.example.com"}, nil},
		{[]string{"net:*.example.com"}, []string{"net:api.example.com", "net:*.x.example.com"}, nil},
		{[]string{"net:api.example.com"}, []string{"net:*.example.com"}, []string{"net:*.example.com"}},
		{[]string{"net:api.example.com"}, []string{"net:api.example.com:8080"}, []string{"net:api.example.com:8080"}},
		{[]string{"fs.write:/data"}, []string{"fs.read:/data/sub", "fs.write:/data"}, nil},
		{[]string{"fs.read:/data"}, []string{"fs.write:/data"}, []string{"fs.write:/data"}},
		{[]string{"fs.read:/data"}, []string{"fs.read:/database"}, []string{"fs.read:/database"}},
		// fs.write allows more than fs.workspace (the same changes, none
		// journaled), which allows more than fs.read.
		{[]string{"fs.write:/data"}, []string{"fs.workspace:/data", "fs.workspace:/data/sub"}, nil},
		{[]string{"fs.workspace:/data"}, []string{"fs.write:/data"}, []string{"fs.write:/data"}},
		{[]string{"fs.workspace:/data"}, []string{"fs.read:/data", "fs.workspace:/data/sub=/w"}, nil},
		{[]string{"fs.read:/data"}, []string{"fs.workspace:/data"}, []string{"fs.workspace:/data"}},
		{[]string{"fs.workspace:/data"}, []string{"fs.workspace:/database"}, []string{"fs.workspace:/database"}},
		{nil, []string{"clock"}, []string{"clock"}},
		{[]string{"env:A"}, []string{"env:B"}, []string{"env:B"}},
	}
	for _, tt := range tests {
		gotS := GrantStrings(Exceeding(must(tt.requested...), must(tt.granted...)))
		if strings.Join(gotS, " ") != strings.Join(tt.want, " ") {
			t.Errorf("Exceeding(%v, %v) = %v, want %v", tt.requested, tt.granted, gotS, tt.want)
		}
	}
}

func FuzzParseGrant(f *testing.F) {
	for _, s := range []string{"net:a.com", "net:*.a.com:8080", "net:[::1]:1", "fs.read:/x/../y", "fs.workspace:/w=/g", "env:A", "kv:n", "clock", "state", "tools:t", "net:1.2.3.4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGrant(s)
		if err != nil {
			var ge *GrantError
			if !errors.As(err, &ge) {
				t.Fatalf("error %v is not a *GrantError", err)
			}
			return
		}
		again, err := ParseGrant(g.String())
		if err != nil {
			t.Fatalf("String() of %q = %q does not parse: %v", s, g.String(), err)
		}
		if again != g {
			t.Fatalf("round trip of %q: %+v != %+v", s, again, g)
		}
	})
}

// A config grant's value: a literal, $$ for a literal $, $VAR from the
// environment (unset: no value).
func TestConfigValue(t *testing.T) {
	env := map[string]string{"API_KEY": "s3cret"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tt := range []struct {
		grant, want string
		ok          bool
	}{
		{"config:k=$API_KEY", "s3cret", true},
		{"config:k=$MISSING", "", false},
		{"config:k=plain", "plain", true},
		{"config:k=$$API_KEY", "$API_KEY", true},
		{"config:k=", "", true},
	} {
		g, err := ParseGrant(tt.grant)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := g.ConfigValue(lookup); v != tt.want || ok != tt.ok {
			t.Errorf("%s: %q %v, want %q %v", tt.grant, v, ok, tt.want, tt.ok)
		}
	}
	// A bare "config" request is met by any config grant; a config grant
	// covers only itself.
	req, _ := ParseRequest("config")
	g, _ := ParseGrant("config:k=$API_KEY")
	other, _ := ParseGrant("config:k=plain")
	if len(Missing([]Grant{req}, []Grant{g})) != 0 || g.Covers(other) || !g.Covers(g) {
		t.Error("config requests and coverage")
	}
}

func TestHostFunction(t *testing.T) {
	g, err := ParseGrant("host:my.app.lookup")
	if err != nil {
		t.Fatal(err)
	}
	if ns, name := g.HostFunction(); ns != "my.app" || name != "lookup" {
		t.Errorf("HostFunction() = %q, %q", ns, name)
	}
	if ns, name := (Grant{Kind: KindTools, Name: "a.b"}).HostFunction(); ns != "" || name != "" {
		t.Errorf("a tools grant's HostFunction() = %q, %q", ns, name)
	}
	other, _ := ParseGrant("host:my.app.other")
	if g.Covers(other) || !g.Covers(g) {
		t.Error("a host grant covers exactly its function")
	}
}

// net:* covers any host name's grant of its port, never what only an IP
// literal allows.
func TestCoversAnyHost(t *testing.T) {
	any, _ := ParseGrant("net:*")
	for s, want := range map[string]bool{"net:api.example.com": true, "net:*.example.com": true, "net:example.com:8080": false,
		"net:127.0.0.1": false, "net:10.0.0.1": false, "net:[::1]:9000": false} {
		g, err := ParseGrant(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := any.Covers(g); got != want {
			t.Errorf("net:* covers %s: %v", s, got)
		}
	}
	if !any.MatchHost("anything.example", 443) || any.MatchHost("anything.example", 8443) {
		t.Error("MatchHost of net:*")
	}
}
