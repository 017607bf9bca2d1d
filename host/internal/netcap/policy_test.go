package netcap

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/manifest"
)

// grants parses grant strings.
func grants(t *testing.T, specs ...string) []manifest.Grant {
	t.Helper()
	var gs []manifest.Grant
	for _, s := range specs {
		g, err := manifest.ParseGrant(s)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	return gs
}

func TestSpecialAddr(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"127.0.0.1":          "a loopback address",
		"10.1.2.3":           "a private address",
		"172.31.0.1":         "a private address",
		"192.168.1.1":        "a private address",
		"100.64.0.1":         "a shared (CGNAT) address",
		"100.100.100.200":    "a cloud metadata address",
		"169.254.169.254":    "a cloud metadata address",
		"169.254.1.1":        "a link-local address",
		"0.0.0.0":            "an unspecified address",
		"224.0.0.1":          "a multicast address",
		"::1":                "a loopback address",
		"::":                 "an unspecified address",
		"fe80::1":            "a link-local address",
		"fd12::1":            "a private address",
		"fd00:ec2::254":      "a cloud metadata address",
		"::ffff:127.0.0.1":   "a loopback address",
		"64:ff9b::a9fe:a9fe": "a cloud metadata address",
		"2002:7f00:1::1":     "a loopback address",
		// Zones hid these from the ranges (found by attacking our own
		// sandbox: a wildcard grant reached [::1%.example.com]).
		"::1%lo":               "a loopback address",
		"fe80::1%eth0":         "a link-local address",
		"64:ff9b::a9fe:a9fe%x": "a cloud metadata address",
		"::127.0.0.1":          "a reserved address",
		"::ffff:0:127.0.0.1":   "a reserved address",
		"93.184.215.14":        "",
		"2606:4700::1111":      "",
		"8.8.8.8":              "",
	} {
		if got := SpecialAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("SpecialAddr(%s) = %q, want %q", addr, got, want)
		}
	}
}

// TestDialRefusesZones: the dial check refuses an address with an IPv6
// zone even where an IP grant names the address, should one ever get past
// the URL check (a resolver's answer, a redirect).
func TestDialRefusesZones(t *testing.T) {
	t.Parallel()
	p := NewPolicy(grants(t, "net:[::1]:9", "net:*.example.com:9"), net.DefaultResolver)
	defer p.Close()
	for _, addr := range []string{"[::1%lo]:9", "[::1%.example.com]:9", "[fe80::1%eth0]:9"} {
		_, err := p.dial(t.Context(), "tcp", addr)
		var de *Refusal
		if !errors.As(err, &de) || !strings.Contains(de.Reason, "has an IPv6 zone, which is never allowed") {
			t.Errorf("dial %s: %v, want the zone refused", addr, err)
		}
	}
}

// TestAnyPublicHostPolicy: net:* (hyper-mcp's allowed_hosts "*") allows
// any host on ports 80 and 443, and no other port (the host's
// TestNetAnyPublicHost checks the refusals of special addresses through a
// module).
func TestAnyPublicHostPolicy(t *testing.T) {
	t.Parallel()
	p := NewPolicy(grants(t, "net:*"), net.DefaultResolver)
	for _, u := range []string{"https://example.com/", "http://api.example.org/x"} {
		pu, _ := url.Parse(u)
		if _, denied := p.CheckURL(pu); denied != nil {
			t.Errorf("%s: %v", u, denied)
		}
	}
	pu, _ := url.Parse("https://example.com:8443/")
	if _, denied := p.CheckURL(pu); denied == nil {
		t.Error("net:* allowed port 8443")
	}
}
