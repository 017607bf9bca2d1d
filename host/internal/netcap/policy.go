package netcap

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/manifest"
)

// Policy is one module's view of the network: its net: grants, checked
// on every hop's URL and again on every address it dials. Its client keeps
// connections for this module alone.
type Policy struct {
	grants   []manifest.Grant
	resolver *net.Resolver
	client   *http.Client
}

const maxRedirects = 10

// NewPolicy returns the policy of a module granted grants (all of kind
// net), which resolves names with resolver (nil: the system's).
func NewPolicy(grants []manifest.Grant, resolver *net.Resolver) *Policy {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	p := &Policy{grants: grants, resolver: resolver}
	// One transport per module: a pooled connection must never serve a
	// module whose grants would not have allowed dialling it.
	tr := &http.Transport{
		Proxy:                  nil, // never route around the dial check
		DialContext:            p.dial,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	p.client = &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return &Refusal{Action: "redirect to " + req.URL.Redacted(),
					Reason: fmt.Sprintf("more than %d redirects", maxRedirects)}
			}
			g, err := p.CheckURL(req.URL)
			if err != nil {
				err.Action = fmt.Sprintf("redirect from %s to %s", via[len(via)-1].URL.Redacted(), req.URL.Redacted())
				return err
			}
			if c, ok := req.Context().Value(callKey{}).(Call); ok {
				c.Use(g.String())
			}
			return nil
		},
	}
	return p
}

// Close closes the policy's idle connections.
func (p *Policy) Close() { p.client.CloseIdleConnections() }

// Refusal is a request or connection the policy refused.
type Refusal struct {
	Action string // what was tried: "request to URL", "connection to HOST:PORT"
	Reason string // why, and which grant would allow it
}

func (r *Refusal) Error() string { return "net: " + r.Action + " refused: " + r.Reason }

// urlPort returns the URL's port, or the scheme's default.
func urlPort(u *url.URL) int {
	if s := u.Port(); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return -1
		}
		return n
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

// CheckURL returns the grant that allows a request to u, or the refusal.
// The addresses the host resolves to are checked again when it is dialled.
func (p *Policy) CheckURL(u *url.URL) (manifest.Grant, *Refusal) {
	deny := func(format string, args ...any) (manifest.Grant, *Refusal) {
		return manifest.Grant{}, &Refusal{Action: "request to " + u.Redacted(), Reason: fmt.Sprintf(format, args...)}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return deny("only http and https URLs are allowed")
	}
	host := u.Hostname()
	if host == "" {
		return deny("the URL has no host")
	}
	if strings.Contains(host, "%") {
		// An IPv6 zone ([::1%eth0]) picks an interface: no tool needs one,
		// and address checks do not see through it.
		return deny("IPv6 zones (%%) are not allowed in a host")
	}
	port := urlPort(u)
	if port < 1 || port > 65535 {
		return deny("invalid port %q", u.Port())
	}
	for _, g := range p.grants {
		if g.MatchHost(host, port) {
			return g, nil
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := SpecialAddr(ip); why != "" {
			return deny("%s is %s; only an explicit IP grant (%s) allows it", ip, why, ipGrant(ip, port))
		}
	}
	return deny("no net: grant covers %s (grant %s to allow it)", net.JoinHostPort(host, strconv.Itoa(port)), hostGrant(host, port))
}

func hostGrant(host string, port int) string {
	g := manifest.Grant{Kind: manifest.KindNet, Host: host}
	if port != 80 && port != 443 {
		g.Port = port
	}
	return g.String()
}

func ipGrant(ip netip.Addr, port int) string {
	return manifest.Grant{Kind: manifest.KindNet, Host: ip.Unmap().String(), Port: port}.String()
}

// ipGranted reports whether an IP-literal grant names ip:port.
func (p *Policy) ipGranted(ip netip.Addr, port int) bool {
	for _, g := range p.grants {
		if g.IsIPLiteral() && g.MatchHost(ip.Unmap().String(), port) {
			return true
		}
	}
	return false
}

// dial resolves the name itself and dials a checked IP, never the name,
// so DNS cannot answer differently between the check and the connection
// (rebinding).
func (p *Policy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("invalid port %q", portStr)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		ips, err = p.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
	}
	var refused *Refusal
	var lastErr error
	d := net.Dialer{}
	for _, ip := range ips {
		ip = ip.Unmap()
		if ip.Zone() != "" {
			if refused == nil {
				refused = &Refusal{Action: "connection to " + addr, Reason: fmt.Sprintf("%s has an IPv6 zone, which is never allowed", ip)}
			}
			continue
		}
		if why := SpecialAddr(ip); why != "" && !p.ipGranted(ip, port) {
			if refused == nil {
				reason := fmt.Sprintf("%s is %s; only an explicit IP grant (%s) allows it", ip, why, ipGrant(ip, port))
				if host != ip.String() {
					reason = fmt.Sprintf("%s resolves to %s, %s; only an explicit IP grant (%s) allows it", host, ip, why, ipGrant(ip, port))
				}
				refused = &Refusal{Action: "connection to " + addr, Reason: reason}
			}
			continue
		}
		c, err := d.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	if lastErr != nil {
		return nil, lastErr
	}
	if refused != nil {
		return nil, refused
	}
	return nil, fmt.Errorf("%s has no address", host)
}

// specialRanges are the addresses a name grant never reaches: loopback,
// private, link-local, shared (CGNAT), unspecified, multicast, reserved,
// documentation and cloud metadata addresses. Metadata entries come first
// so the refusal names them precisely.
var specialRanges = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("169.254.169.254/32"), "a cloud metadata address"},
	{netip.MustParsePrefix("169.254.170.2/32"), "a cloud metadata address"},
	{netip.MustParsePrefix("100.100.100.200/32"), "a cloud metadata address"},
	{netip.MustParsePrefix("192.0.0.192/32"), "a cloud metadata address"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "a cloud metadata address"},
	{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (CGNAT) address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a reserved address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a reserved address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("::/128"), "an unspecified address"},
	{netip.MustParsePrefix("::1/128"), "a loopback address"},
	{netip.MustParsePrefix("::/96"), "a reserved address"},           // IPv4-compatible (deprecated)
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "a reserved address"}, // IPv4-translated (SIIT)
	{netip.MustParsePrefix("100::/64"), "a reserved address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("fc00::/7"), "a private address"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "a reserved address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
}

// SpecialAddr says why ip is off limits for a name grant, or "" when it
// is an ordinary public address. IPv4 addresses embedded in IPv6 (mapped,
// NAT64, 6to4) are judged by the IPv4 address they reach.
func SpecialAddr(ip netip.Addr) string {
	// A zone hides the address from Prefix.Contains: judge the address.
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(ip):
			return SpecialAddr(netip.AddrFrom4([4]byte(b[12:16])))
		case netip.MustParsePrefix("2002::/16").Contains(ip):
			return SpecialAddr(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	for _, r := range specialRanges {
		if r.prefix.Contains(ip) {
			return r.why
		}
	}
	return ""
}
