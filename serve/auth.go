package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Role is what a token may do. Each role may do what the roles below it
// may.
type Role int

// The roles, weakest first.
const (
	// RoleViewer reads runs, events, sessions and the plugins directory.
	RoleViewer Role = iota + 1
	// RoleRunner also starts, continues and cancels runs.
	RoleRunner
	// RoleOperator also decides paused calls and approves or revokes
	// modules.
	RoleOperator
)

func (r Role) String() string {
	switch r {
	case RoleViewer:
		return "viewer"
	case RoleRunner:
		return "runner"
	case RoleOperator:
		return "operator"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// ParseRole reads "viewer", "runner" or "operator".
func ParseRole(s string) (Role, error) {
	for _, r := range []Role{RoleViewer, RoleRunner, RoleOperator} {
		if s == r.String() {
			return r, nil
		}
	}
	return 0, fmt.Errorf("%w: role %q: want viewer, runner or operator", ErrTokens, s)
}

// Token is one bearer token: who holds it (Name, recorded as `by` in the
// audit logs) and what it may do.
type Token struct {
	Name   string
	Role   Role
	Secret string
}

// MinSecretLen is the shortest token secret accepted: a short one can be
// guessed over the network.
const MinSecretLen = 16

// ErrTokens is wrapped by the errors of ParseTokens and New for tokens
// that cannot work.
var ErrTokens = errors.New("serve: invalid tokens")

// ParseTokens reads tokens written ROLE:NAME:SECRET, separated by commas
// or white space (the form of `autoagent serve --token-env`'s variable).
func ParseTokens(s string) ([]Token, error) {
	var out []Token
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' }) {
		role, rest, ok1 := strings.Cut(f, ":")
		name, secret, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%w: an entry is not ROLE:NAME:SECRET (entry %d)", ErrTokens, len(out)+1)
		}
		r, err := ParseRole(role)
		if err != nil {
			return nil, err
		}
		out = append(out, Token{Name: name, Role: r, Secret: secret})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no tokens (want ROLE:NAME:SECRET, ...)", ErrTokens)
	}
	return out, checkTokens(out)
}

func checkTokens(ts []Token) error {
	secrets := map[string]bool{}
	for i, t := range ts {
		if !validName(t.Name) {
			return fmt.Errorf("%w: token %d: name %q: want 1-64 letters, digits, '.', '_', '@' or '-'", ErrTokens, i+1, t.Name)
		}
		if t.Role < RoleViewer || t.Role > RoleOperator {
			return fmt.Errorf("%w: token %d (%s): no role", ErrTokens, i+1, t.Name)
		}
		if len(t.Secret) < MinSecretLen {
			return fmt.Errorf("%w: token %d (%s): a secret of %d bytes: want at least %d (e.g. openssl rand -hex 24)", ErrTokens, i+1, t.Name, len(t.Secret), MinSecretLen)
		}
		if secrets[t.Secret] {
			return fmt.Errorf("%w: token %d (%s): the same secret as an earlier token", ErrTokens, i+1, t.Name)
		}
		secrets[t.Secret] = true
	}
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '@', r == '-':
		default:
			return false
		}
	}
	return true
}

// principal is who made a request.
type principal struct {
	name string
	role Role
}

// hashedToken keeps a token's secret as its sha256: compared in constant
// time, whatever the lengths.
type hashedToken struct {
	sum  [32]byte
	name string
	role Role
}

// authenticate finds who made r. Without tokens only a loopback peer is
// served, as the local identity with every role.
func (s *Server) authenticate(r *http.Request) (principal, *apiError) {
	if len(s.tokens) == 0 {
		if !loopbackPeer(r.RemoteAddr) {
			return principal{}, &apiError{http.StatusUnauthorized, "unauthorized",
				"this server has no tokens and serves loopback clients only: start it with --token-env (Options.Tokens)"}
		}
		return principal{name: s.localName, role: RoleOperator}, nil
	}
	h := r.Header.Get("Authorization")
	scheme, secret, ok := strings.Cut(h, " ")
	if h == "" || !ok || !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return principal{}, &apiError{http.StatusUnauthorized, "unauthorized", "send the header Authorization: Bearer TOKEN"}
	}
	sum := sha256.Sum256([]byte(secret))
	var found *hashedToken
	// Every token is compared, so the time taken says nothing of which
	// one nearly matched.
	for i := range s.tokens {
		if subtle.ConstantTimeCompare(sum[:], s.tokens[i].sum[:]) == 1 {
			found = &s.tokens[i]
		}
	}
	if found == nil {
		return principal{}, &apiError{http.StatusUnauthorized, "unauthorized", "unknown token"}
	}
	return principal{name: found.name, role: found.role}, nil
}

// loopbackPeer reports whether addr (a RemoteAddr) is a loopback address.
func loopbackPeer(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether a listen address (host:port) binds loopback
// only: an IP literal of loopback, or localhost.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostAllowed refuses a Host header a DNS rebinding attack would send: a
// name of the attacker's that resolves to this server. An IP literal and
// localhost cannot be rebound; other names must be listed.
func (s *Server) hostAllowed(host string) bool {
	h := host
	if hp, _, err := net.SplitHostPort(host); err == nil {
		h = hp
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if h == "" {
		return false
	}
	if net.ParseIP(h) != nil || strings.EqualFold(h, "localhost") {
		return true
	}
	for _, a := range s.opts.AllowedHosts {
		if strings.EqualFold(h, a) {
			return true
		}
	}
	return false
}

// originAllowed accepts a request without Origin (not from a browser's
// page), one from the server's own origin, and listed origins.
func (s *Server) originAllowed(origin, host string) bool {
	if origin == "" {
		return true
	}
	for _, a := range s.opts.AllowedOrigins {
		if origin == a {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" {
		return false
	}
	return strings.EqualFold(u.Host, host)
}
