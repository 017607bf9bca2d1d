package manifest

import (
	"errors"
	"fmt"
	"net"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Kind is the capability a [Grant] gives.
type Kind string

// The grant kinds of docs/ARCHITECTURE.md §4.
const (
	KindNet     Kind = "net"      // outbound HTTP(S) to a host
	KindFSRead  Kind = "fs.read"  // a host directory, read-only
	KindFSWrite Kind = "fs.write" // a host directory, read-write
	// KindFSWorkspace is a host directory, read-write, whose every change
	// the host journals first (see host.Journal): what the module wrote
	// can be listed and undone.
	KindFSWorkspace Kind = "fs.workspace"
	KindEnv         Kind = "env"    // one environment variable
	KindKV          Kind = "kv"     // a persistent key-value namespace
	KindClock       Kind = "clock"  // the clock to the microsecond (a millisecond without)
	KindRandom      Kind = "random" // randomness, recorded as used (always cryptographic)
	KindTools       Kind = "tools"  // calling one host tool (code mode)
	KindConfig      Kind = "config" // one config value, literal or from the environment
	KindHost        Kind = "host"   // one host function the embedding application registered
	// KindState lets a module keep its instance: one serves every call,
	// in turn, so what one caller gives it the next may read.
	KindState Kind = "state"
)

// Grant is one parsed capability grant. Its String form is the grant string
// of the manifest and the CLI's --grant flag.
type Grant struct {
	Kind Kind
	// Host is the lower-case host name of a net grant, "*.example.com" for
	// every subdomain of example.com, "*" for any public host (loopback,
	// private, link-local and metadata addresses stay refused), or an IP
	// literal (IPv6 without brackets).
	Host string
	// Port is the port of a net grant; 0 means the HTTP and HTTPS defaults
	// (80 and 443).
	Port int
	// Path is the absolute, cleaned host directory of an fs grant
	// (fs.read, fs.write, fs.workspace).
	Path string
	// Guest is where an fs grant's directory appears to the module, an
	// absolute, cleaned guest path ("/mnt", as Extism's allowed_paths
	// map host:guest); "" means at Path itself.
	Guest string
	// Name is the variable of an env grant, the namespace of a kv grant,
	// the tool of a tools grant, the key of a config grant, or the
	// function of a host grant as NAMESPACE.NAME (see [Grant.HostFunction]).
	Name string
	// Value is a config grant's value as written: a literal, or $VAR for
	// the host environment variable VAR (read when the module loads, so a
	// secret stays in the environment and the manifest holds its name).
	Value string
}

// GrantError reports a grant string outside the grammar.
type GrantError struct {
	Grant  string // the string as given
	Reason string // what is wrong and what is expected
}

func (e *GrantError) Error() string {
	return fmt.Sprintf("manifest: invalid grant %q: %s", e.Grant, e.Reason)
}

var (
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	kvNameRE   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	labelRE    = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
)

// ParseGrant parses one grant string:
//
//	net:HOST  net:*.HOST  net:HOST:PORT  net:[IPv6]:PORT  net:* (any public host)
//	fs.read:/ABS/PATH  fs.write:/ABS/PATH  fs.workspace:/ABS/PATH
//	fs.read:/ABS/PATH=/GUEST  (and fs.write:, fs.workspace:; seen by the module at /GUEST)
//	env:NAME  kv:NAMESPACE  tools:NAME
//	config:KEY=VALUE  config:KEY=$VAR  (VALUE starting with $$ is a literal $)
//	host:NAMESPACE.NAME  (e.g. host:extism:host/user.mult)
//	clock  random  state
//
// The error is a *GrantError saying what is wrong.
func ParseGrant(s string) (Grant, error) {
	bad := func(format string, args ...any) (Grant, error) {
		return Grant{}, &GrantError{Grant: s, Reason: fmt.Sprintf(format, args...)}
	}
	if s != strings.TrimSpace(s) || s == "" {
		return bad("empty or surrounded by spaces")
	}
	switch s {
	case string(KindClock):
		return Grant{Kind: KindClock}, nil
	case string(KindRandom):
		return Grant{Kind: KindRandom}, nil
	case string(KindState):
		return Grant{Kind: KindState}, nil
	}
	kind, value, ok := strings.Cut(s, ":")
	if !ok {
		return bad("want KIND:VALUE (net, fs.read, fs.write, fs.workspace, env, kv, tools, config, host) or clock, random or state")
	}
	if value == "" {
		return bad("%s: missing value after ':'", kind)
	}
	switch Kind(kind) {
	case KindNet:
		host, port, err := parseNetValue(value)
		if err != nil {
			return bad("%v", err)
		}
		return Grant{Kind: KindNet, Host: host, Port: port}, nil
	case KindFSRead, KindFSWrite, KindFSWorkspace:
		guest := ""
		if i := strings.LastIndex(value, "=/"); i > 0 {
			value, guest = value[:i], value[i+1:]
			if strings.IndexFunc(guest, func(r rune) bool { return unicode.IsControl(r) || invisible(r) }) >= 0 {
				return bad("%s guest path contains a control or invisible formatting character", kind)
			}
			guest = path.Clean(guest)
		}
		if !filepath.IsAbs(value) {
			return bad("%s path must be absolute", kind)
		}
		if strings.IndexFunc(value, unicode.IsControl) >= 0 {
			return bad("%s path contains a control character", kind)
		}
		if strings.IndexFunc(value, invisible) >= 0 {
			// A right-to-left override made fs.write:/x look like
			// fs.read:... in an approval prompt (found by attacking our
			// own sandbox).
			return bad("%s path contains an invisible formatting character (such as a direction override)", kind)
		}
		clean := filepath.Clean(value)
		if clean != strings.TrimRightFunc(clean, unicode.IsSpace) {
			return bad("%s path ends with white space", kind)
		}
		if clean == string(filepath.Separator) {
			return bad("%s of the whole file system is not allowed; grant a directory", kind)
		}
		return Grant{Kind: Kind(kind), Path: clean, Guest: guest}, nil
	case KindEnv:
		if !envNameRE.MatchString(value) {
			return bad("env name must match [A-Za-z_][A-Za-z0-9_]*")
		}
		return Grant{Kind: KindEnv, Name: value}, nil
	case KindKV:
		if !kvNameRE.MatchString(value) {
			return bad("kv namespace must be 1-64 of [A-Za-z0-9_.-]")
		}
		return Grant{Kind: KindKV, Name: value}, nil
	case KindTools:
		if !toolNameRE.MatchString(value) {
			return bad("tool name must be 1-64 of [A-Za-z0-9_-]")
		}
		return Grant{Kind: KindTools, Name: value}, nil
	case KindConfig:
		key, val, ok := strings.Cut(value, "=")
		switch {
		case !ok:
			return bad("config wants KEY=VALUE, or KEY=$VAR for an environment variable")
		case key == "" || len(key) > 256:
			return bad("config key must be 1-256 bytes")
		case strings.IndexFunc(value, unicode.IsControl) >= 0 || strings.IndexFunc(value, invisible) >= 0:
			return bad("config key or value contains a control or invisible formatting character")
		case strings.HasPrefix(val, "$") && !strings.HasPrefix(val, "$$") && !envNameRE.MatchString(val[1:]):
			return bad("config value %q: after $ an environment variable name ([A-Za-z_][A-Za-z0-9_]*), or $$ for a literal $", val)
		}
		return Grant{Kind: KindConfig, Name: key, Value: val}, nil
	case KindHost:
		ns, name, err := splitHostFunction(value)
		if err != nil {
			return bad("%v", err)
		}
		return Grant{Kind: KindHost, Name: ns + "." + name}, nil
	case KindClock, KindRandom, KindState:
		return bad("%s takes no value", kind)
	}
	return bad("unknown kind %q (want net, fs.read, fs.write, fs.workspace, env, kv, tools, config, host, clock, random or state)", kind)
}

// The namespaces a host grant cannot name: the host's own, whose functions
// are the kernel's or need grants of their own kinds.
var reservedNamespaces = []string{"extism:host/env", "wasi_snapshot_preview1", "autoagent:kernel"}

// ownUserFunctions are the host's own functions in extism:host/user, with
// the kind of grant that gives them.
var ownUserFunctions = map[string]Kind{"kv_get": KindKV, "kv_set": KindKV, "kv_delete": KindKV, "kv_keys": KindKV, "tool_call": KindTools,
	// hyper-mcp's notifications, which need no grant.
	"notify_tool_list_changed": "", "notify_prompt_list_changed": "", "notify_resource_list_changed": "",
	"notify_logging_message": "", "notify_progress": "", "notify_resource_updated": ""}

// splitHostFunction splits a host function's NAMESPACE.NAME at the last dot
// and checks both parts: 1-256 bytes each, no spaces, control or invisible
// characters, and not a namespace the host reserves.
func splitHostFunction(v string) (namespace, name string, err error) {
	i := strings.LastIndexByte(v, '.')
	if i <= 0 || i == len(v)-1 {
		return "", "", errors.New("host wants NAMESPACE.NAME, the import module and the function's name (e.g. host:extism:host/user.mult)")
	}
	namespace, name = v[:i], v[i+1:]
	for _, part := range []string{namespace, name} {
		if len(part) > 256 {
			return "", "", errors.New("host: a namespace or name is at most 256 bytes")
		}
		if strings.IndexFunc(part, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || invisible(r) }) >= 0 {
			return "", "", errors.New("host: a namespace or name contains a space, control or invisible formatting character")
		}
	}
	if slices.Contains(reservedNamespaces, namespace) {
		return "", "", fmt.Errorf("host: %s is the host's own namespace, not one an application registers functions in", namespace)
	}
	if kind, ok := ownUserFunctions[name]; ok && namespace == "extism:host/user" {
		if kind == "" {
			return "", "", fmt.Errorf("host: %s.%s is the host's own function, which needs no grant", namespace, name)
		}
		return "", "", fmt.Errorf("host: %s.%s is the host's own function, which a %s: grant gives", namespace, name, kind)
	}
	return namespace, name, nil
}

// HostFunction returns a host grant's function: its namespace (the import
// module) and name. Both are "" for other kinds.
func (g Grant) HostFunction() (namespace, name string) {
	if g.Kind != KindHost {
		return "", ""
	}
	i := strings.LastIndexByte(g.Name, '.')
	if i < 0 {
		return "", ""
	}
	return g.Name[:i], g.Name[i+1:]
}

// parseNetValue parses HOST, *.HOST, HOST:PORT, IP, [IPv6]:PORT.
func parseNetValue(v string) (host string, port int, err error) {
	hostPart, portPart := v, ""
	switch {
	case strings.HasPrefix(v, "["):
		end := strings.Index(v, "]")
		if end < 0 {
			return "", 0, errors.New("net: unclosed '[' in IPv6 literal")
		}
		hostPart = v[1:end]
		rest := v[end+1:]
		if rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return "", 0, errors.New("net: want [IPv6]:PORT")
			}
			portPart = rest[1:]
			if portPart == "" {
				return "", 0, errors.New("net: empty port")
			}
		}
		if ip := net.ParseIP(hostPart); ip == nil || ip.To4() != nil {
			return "", 0, fmt.Errorf("net: %q is not an IPv6 address", hostPart)
		}
	case strings.Count(v, ":") > 1:
		if ip := net.ParseIP(v); ip != nil {
			return ip.String(), 0, nil
		}
		return "", 0, errors.New("net: an IPv6 address with a port must be written [ADDR]:PORT")
	case strings.Contains(v, ":"):
		hostPart, portPart, _ = strings.Cut(v, ":")
		if portPart == "" {
			return "", 0, errors.New("net: empty port")
		}
	}
	if portPart != "" {
		p, perr := strconv.Atoi(portPart)
		if perr != nil || p < 1 || p > 65535 || portPart[0] == '0' || portPart[0] == '+' {
			return "", 0, fmt.Errorf("net: port %q must be a number from 1 to 65535", portPart)
		}
		port = p
	}
	if ip := net.ParseIP(hostPart); ip != nil {
		return ip.String(), port, nil
	}
	if hostPart == "*" {
		// Any public host; loopback, private, link-local and metadata
		// addresses stay refused (only an IP-literal grant allows one).
		return "*", port, nil
	}
	h := strings.ToLower(hostPart)
	name := strings.TrimPrefix(h, "*.")
	if strings.Contains(name, "*") {
		return "", 0, errors.New("net: a wildcard is only allowed as a leading '*.' label")
	}
	if h != name && !strings.Contains(name, ".") {
		return "", 0, errors.New("net: '*.' must be followed by a domain with at least two labels (e.g. *.example.com)")
	}
	if len(name) > 253 {
		return "", 0, errors.New("net: host name longer than 253 characters")
	}
	for _, label := range strings.Split(name, ".") {
		if !labelRE.MatchString(label) {
			return "", 0, fmt.Errorf("net: %q is not a valid host name (label %q)", hostPart, label)
		}
	}
	return h, port, nil
}

// String returns the canonical grant string, which ParseGrant accepts.
func (g Grant) String() string {
	if g.IsAny() {
		return string(g.Kind)
	}
	switch g.Kind {
	case KindClock, KindRandom, KindState:
		return string(g.Kind)
	case KindNet:
		host := g.Host
		if strings.Contains(host, ":") {
			if g.Port == 0 {
				return "net:" + host
			}
			host = "[" + host + "]"
		}
		if g.Port != 0 {
			return "net:" + host + ":" + strconv.Itoa(g.Port)
		}
		return "net:" + host
	case KindFSRead, KindFSWrite, KindFSWorkspace:
		if g.Guest != "" {
			return string(g.Kind) + ":" + g.Path + "=" + g.Guest
		}
		return string(g.Kind) + ":" + g.Path
	case KindConfig:
		return "config:" + g.Name + "=" + g.Value
	default:
		return string(g.Kind) + ":" + g.Name
	}
}

// IsIPLiteral reports whether a net grant names an IP address rather than a
// host name. Only an IP-literal grant lets a module reach loopback, private,
// link-local or metadata addresses.
func (g Grant) IsIPLiteral() bool {
	return g.Kind == KindNet && net.ParseIP(g.Host) != nil
}

// MatchHost reports whether the net grant g allows host:port. host is
// compared case-insensitively; "*.example.com" matches every subdomain of
// example.com but not example.com itself. A grant without a port allows
// ports 80 and 443.
func (g Grant) MatchHost(host string, port int) bool {
	if g.Kind != KindNet {
		return false
	}
	if g.Port == 0 {
		if port != 80 && port != 443 {
			return false
		}
	} else if port != g.Port {
		return false
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if strings.Contains(h, "%") {
		// An IPv6 zone ([::1%.example.com]) is neither an address a grant
		// names nor a host name: it never matches.
		return false
	}
	if ip := net.ParseIP(strings.Trim(h, "[]")); ip != nil {
		return net.ParseIP(g.Host) != nil && net.ParseIP(g.Host).Equal(ip)
	}
	if g.Host == "*" {
		return true // any host: the address is checked when dialled
	}
	if suffix, ok := strings.CutPrefix(g.Host, "*."); ok {
		return strings.HasSuffix(h, "."+suffix)
	}
	return h == g.Host
}

// Covers reports whether g allows everything other allows, so granting
// other to a module that asked for g does not exceed its request. Where an
// fs grant's directory appears to the module (Guest) is not part of what
// it allows: the host directory is. Of the fs kinds fs.write allows the
// most (changes nobody records), then fs.workspace (the same changes,
// each journaled first, so they can be undone), then fs.read: each
// covers the ones after it, never one before.
func (g Grant) Covers(other Grant) bool {
	switch {
	case g == other:
		return true
	case g.IsAny():
		return other.Kind == g.Kind || fsRank(g.Kind) > 0 && fsRank(other.Kind) > 0 && fsRank(g.Kind) >= fsRank(other.Kind)
	case g.Kind == KindNet && other.Kind == KindNet:
		if g.Port != other.Port {
			return false
		}
		if g.Host == "*" {
			// Any public host, but not what only an IP literal allows.
			return !other.IsIPLiteral()
		}
		if suffix, ok := strings.CutPrefix(g.Host, "*."); ok {
			if o, ok := strings.CutPrefix(other.Host, "*."); ok {
				return o == suffix || strings.HasSuffix(o, "."+suffix)
			}
			return strings.HasSuffix(other.Host, "."+suffix)
		}
		return false
	case fsRank(g.Kind) > 0 && fsRank(other.Kind) > 0:
		if fsRank(g.Kind) < fsRank(other.Kind) {
			return false
		}
		// Compared where they lead, not as written: a link planted under
		// the requested directory must not pass for part of it.
		gp, op := resolvedGrantPath(g.Path), resolvedGrantPath(other.Path)
		return op == gp || strings.HasPrefix(op, gp+string(filepath.Separator)) || gp == string(filepath.Separator)
	}
	return false
}

// fsRank orders the fs kinds by what they allow (see [Grant.Covers]);
// 0 for the other kinds.
func fsRank(k Kind) int {
	switch k {
	case KindFSRead:
		return 1
	case KindFSWorkspace:
		return 2
	case KindFSWrite:
		return 3
	}
	return 0
}

// IsFS reports whether g is an fs grant (fs.read, fs.write or
// fs.workspace), which gives the module a host directory.
func (g Grant) IsFS() bool { return fsRank(g.Kind) > 0 }

// Writes reports whether g is an fs grant under which the module may
// change files: fs.write or fs.workspace.
func (g Grant) Writes() bool { return g.Kind == KindFSWrite || g.Kind == KindFSWorkspace }

// resolvedGrantPath returns p with every symbolic link in it resolved; the part
// that does not exist (yet) is kept as written after its longest existing
// ancestor.
func resolvedGrantPath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// GrantStrings returns each grant's string form, which ParseGrants reads
// back.
func GrantStrings(gs []Grant) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.String()
	}
	return out
}

// ParseGrants parses every string, returning the first error.
func ParseGrants(ss []string) ([]Grant, error) {
	out := make([]Grant, 0, len(ss))
	for _, s := range ss {
		g, err := ParseGrant(s)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// Exceeding returns the grants of granted that no grant of requested covers:
// what a person would give a module beyond what it asked for.
func Exceeding(requested, granted []Grant) []Grant {
	var out []Grant
	for _, g := range granted {
		covered := false
		for _, r := range requested {
			if r.Covers(g) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, g)
		}
	}
	return out
}

// MarshalText returns the grant string, so a Grant is a JSON string.
func (g Grant) MarshalText() ([]byte, error) {
	if _, err := ParseGrant(g.String()); err != nil {
		return nil, err
	}
	return []byte(g.String()), nil
}

// UnmarshalText parses a grant string with [ParseGrant].
func (g *Grant) UnmarshalText(b []byte) error {
	parsed, err := ParseGrant(string(b))
	if err != nil {
		return err
	}
	*g = parsed
	return nil
}

// invisible reports formatting characters that change how text around
// them displays without showing themselves: direction overrides and
// isolates, zero-width characters, line and paragraph separators.
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// ConfigValue returns what a config grant gives its module: the literal
// value, or the value of the environment variable it names ($VAR) as
// lookup finds it (ok false when the variable is unset).
func (g Grant) ConfigValue(lookup func(string) (string, bool)) (value string, ok bool) {
	if v, lit := strings.CutPrefix(g.Value, "$$"); lit {
		return "$" + v, true
	}
	if name, ref := strings.CutPrefix(g.Value, "$"); ref {
		return lookup(name)
	}
	return g.Value, true
}
