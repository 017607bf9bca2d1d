package trace

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/internal/textfold"
)

// Redacted replaces every secret [Redact] finds.
const Redacted = "***REDACTED***"

// A secret rule finds secrets: re's group g (0 for the whole match) is
// the secret; check, when set, must accept the match. The rules
// deliberately over-redact: a trace is shared far more widely than the
// process that wrote it.
type secretRule struct {
	re    *regexp.Regexp
	g     int
	check func(s string, m []int) bool
	wrap  func(s string, m []int) bool // the secret is a JSON literal: it becomes a string
	// value, when set, finds the secrets after the match instead (the
	// match is a name and its separator): it yields each one.
	value func(s string, m []int, yield func(start, end int, wrap bool))
}

var secretRules = []secretRule{
	// PEM private keys: what lies between the lines (to the end of a cut
	// preview).
	{re: regexp.MustCompile(`(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)((?s:[^"]*?))(-----END [A-Z0-9 ]*PRIVATE KEY-----|"|$)`), g: 2},
	// JSON fields whose name says secret (see isSecretName): the value,
	// a number or literal made a string so the JSON stays valid.
	{re: regexp.MustCompile(`"((?:[^"\\]|\\.){1,64})"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null)`), g: 2,
		check: nameIsSecret(1), wrap: func(s string, m []int) bool { return s[m[4]] != '"' }},
	// The same inside JSON that was itself encoded as a JSON string: \"password\": \"…\".
	{re: regexp.MustCompile(`\\"((?:[^"\\]|\\[^"]){1,64}?)\\"\s*:\s*(\\"(?:[^\\]|\\[^"])*\\")`), g: 2, check: nameIsSecret(1)},
	// name: value, name=value and name := value (headers, query
	// parameters, env files, YAML, Go's %v of a header map) whose name
	// says secret, an Authorization scheme included: the expression finds
	// the name, valueAfter the value.
	{re: regexp.MustCompile(`(?i)[a-z0-9][a-z0-9_.\-]{0,63}["']?[ \t]*(?::=|[:=])`), value: valueAfter},
	// Command-line flags: --password VALUE, -token VALUE.
	{re: regexp.MustCompile(`(?i)(?:^|\s)--?([a-z][a-z0-9_.\-]{0,63})[ \t]+`), value: flagValue},
	// XML elements: <password>…</password>.
	{re: regexp.MustCompile(`<([A-Za-z][\w.:-]{0,63})(?:\s[^<>]{0,256})?>([^<]{1,1000})</([A-Za-z][\w.:-]{0,63})>`), g: 2,
		check: func(s string, m []int) bool { return s[m[2]:m[3]] == s[m[6]:m[7]] && isSecretName(s[m[2]:m[3]]) }},
	// Bearer tokens anywhere.
	{re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{8,})`), g: 1},
	// Basic credentials anywhere: base64 of user:password.
	{re: regexp.MustCompile(`(?i)\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})`), g: 1, check: isBasicCredential},
	// Passwords in URLs: scheme://user:password@host.
	{re: regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@"\\]+:([^@\s/"\\]+)@`), g: 1},
	// Well-known token shapes, wherever they appear.
	{re: regexp.MustCompile(`\b(?:` +
		`sk-[A-Za-z0-9_-]{16,}` + // OpenAI, Anthropic (sk-ant-…), DeepSeek
		`|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}` + // Stripe
		`|gsk_[A-Za-z0-9]{20,}` + // Groq
		`|AIza[0-9A-Za-z_-]{30,}|ya29\.[A-Za-z0-9_-]{20,}` + // Google
		`|(?:AKIA|ASIA)[0-9A-Z]{16}` + // AWS access key ids
		`|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,}` + // GitHub
		`|glpat-[A-Za-z0-9_-]{20,}` + // GitLab
		`|xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}` + // Slack
		`|hf_[A-Za-z0-9]{30,}` + // Hugging Face
		`|npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_-]{50,}` + // package registries
		`|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}` + // SendGrid
		`|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}` + // Shopify
		`|dop_v1_[a-f0-9]{64}` + // DigitalOcean
		`|sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}` + // Square
		`|AGE-SECRET-KEY-1[0-9A-Z]{58}` + // age
		`|r8_[A-Za-z0-9]{30,}|pplx-[A-Za-z0-9]{40,}|tvly-[A-Za-z0-9-]{20,}|xai-[A-Za-z0-9]{40,}|nvapi-[A-Za-z0-9_-]{40,}` + // model hosts
		`|lin_api_[A-Za-z0-9]{30,}|ATATT[A-Za-z0-9_=-]{20,}|dapi[a-f0-9]{32}` + // Linear, Atlassian, Databricks
		`|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}` + // JWTs
		`)`)},
	// Long high-entropy runs: random keys of no known shape.
	{re: regexp.MustCompile(`[A-Za-z0-9+/_=-]{32,256}`), check: isHighEntropy},
}

// valueAfter yields the value that follows a name and its separator when
// the name says secret: what a pair of quotes holds, an Authorization
// scheme and its token, each item of a list in brackets, or a run to a
// space, quote, bracket or separator of pairs.
func valueAfter(s string, m []int, yield func(int, int, bool)) {
	name := strings.TrimRight(s[m[0]:m[1]-1], "\"' \t:")
	if !isSecretName(name) {
		return
	}
	// After a quoted name, a number or literal in a list is JSON's: it
	// becomes a string.
	inJSON := m[0] > 0 && s[m[0]-1] == '"'

	i := m[1]
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i < len(s) && s[i] == '[' {
		// A list: ["a", "b"], or [a b] as Go prints a header map.
		for i++; i < len(s) && i < m[1]+4096; {
			switch c := s[i]; {
			case c == ']' || c == '\n':
				return
			case c == ' ' || c == '\t' || c == ',':
				i++
			default:
				a, b := valueAt(s, i, 1)
				if b <= i {
					return
				}
				quoted := s[i] == '"' || s[i] == '\''
				if quoted {
					if a != i+1 || b >= len(s) || s[b] != s[i] {
						return // an unclosed string: no list to read
					}
					a, b = i, b+1 // the quotes go with the string, so JSON stays valid
				}
				yield(a, b, inJSON && !quoted)
				i = b
			}
		}
		return
	}
	if a, b := valueAt(s, i, 3); b > a {
		yield(a, b, false)
	}
}

// flagValue yields the value of a command-line flag whose name says
// secret, unless it is another flag.
func flagValue(s string, m []int, yield func(int, int, bool)) {
	if !isSecretName(s[m[2]:m[3]]) || m[1] >= len(s) || s[m[1]] == '-' {
		return
	}
	if a, b := valueAt(s, m[1], 3); b > a {
		yield(a, b, false)
	}
}

// valueAt returns the value at s[i:]: what a pair of quotes there holds
// (on one line), or an Authorization scheme and its token, or a run to a
// space, quote, bracket or separator of pairs at least minLen long.
func valueAt(s string, i, minLen int) (int, int) {
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		q := s[i]
		for j := i + 1; j < len(s) && j < i+4096 && s[j] != '\n'; j++ {
			if s[j] == q && !oddBackslashesBefore(s, j) {
				if j > i+1 {
					return i + 1, j
				}
				return 0, 0
			}
		}
		i++
	}
	start := i
	if loc := authScheme.FindStringIndex(s[i:]); loc != nil {
		i += loc[1]
	}
	end := i
	for end < len(s) && s[end] > ' ' && s[end] != 0x7f && !strings.ContainsRune(`"'&,;{}[]\`, rune(s[end])) {
		end++
	}
	if end-i < minLen {
		return 0, 0
	}
	return start, end
}

var authScheme = regexp.MustCompile(`^(?i)(?:bearer|basic|token|digest|bot|apikey|key|hmac|negotiate|ntlm|dpop|sharedkey|sharedaccesssignature)[ \t]+`)

var (
	hashLabel  = regexp.MustCompile(`(?i)(?:h1|sha\d{1,3}|md5|blake\w*|digest|hash|checksum|integrity)\s*[:=]\s*["']?$`)
	hashPrefix = regexp.MustCompile(`(?i)^(?:sha\d{1,3}|md5|blake2[bs]?)-`)
)

// nameIsSecret checks that group g of a match, a field's name, says secret.
func nameIsSecret(g int) func(string, []int) bool {
	return func(s string, m []int) bool { return isSecretName(s[m[2*g]:m[2*g+1]]) }
}

// isBasicCredential reports whether the Basic value of a match decodes to
// user:password.
func isBasicCredential(s string, m []int) bool {
	b, err := base64.StdEncoding.DecodeString(s[m[2]:m[3]])
	return err == nil && bytes.IndexByte(b, ':') > 0 && utf8.Valid(b)
}

// isHighEntropy reports whether a run looks random: upper- and lower-case
// letters and digits, no words (more than 40% of it in runs of four
// letters of one case reads as identifiers, paths and names), and at least
// 3.9 bits of entropy per character. Hex (hashes) and UUIDs have no
// upper case and pass; so does a digest labelled as one (sha384-…,
// h1:…, sha256=…), the form base64 digests take in lock files and
// integrity attributes.
func isHighEntropy(s string, m []int) bool {
	run := s[m[0]:m[1]]
	if hashLabel.MatchString(s[max(0, m[0]-12):m[0]]) || hashPrefix.MatchString(run) {
		return false // a digest says what it is: sha384-…, h1:…, sha256=…
	}
	var upper, lower, digit, wordy, same int
	var prevCase byte
	var counts [256]int
	for i := 0; i < len(run); i++ {
		c := run[i]
		counts[c]++
		var kind byte
		switch {
		case c >= 'A' && c <= 'Z':
			upper, kind = upper+1, 'A'
		case c >= 'a' && c <= 'z':
			lower, kind = lower+1, 'a'
		case c >= '0' && c <= '9':
			digit++
		}
		if kind != 0 && kind == prevCase {
			same++
		} else {
			same = 1
		}
		prevCase = kind
		if kind != 0 && same == 4 {
			wordy += 4
		} else if kind != 0 && same > 4 {
			wordy++
		}
	}
	if upper == 0 || lower == 0 || digit == 0 || wordy*10 > len(run)*4 {
		return false
	}
	var h float64
	n := float64(len(run))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h >= 3.9
}

// isSecretName reports whether a field, header or parameter named name
// holds a secret. The name is folded (package textfold: look-alikes,
// invisible characters, widths and escapes undone), lower-cased and split
// into words at anything that is not a letter or digit and where case
// changes (clientSecret, XAuthKey, APIKey); trailing qualifiers (id,
// value, header, b64, …) are set aside. The name is secret when its last
// word is a secret word (key, token, secret, password, passwd, pwd, pass,
// passphrase, auth, authorization, credential(s), signature, sig, session,
// cookie, jwt, bearer, otp, hmac, csrf, private key, …) or ends with a
// compound (apikey, accesstoken, clientsecret, password, …: githubtoken,
// dbpassword). The counts and settings stay visible: input_tokens,
// max_tokens, token_budget, keyboard, monkey, author, auth_type,
// auth_url, key_name, cookie_policy.
func isSecretName(name string) bool {
	if f, m := textfold.Fold(name); m != nil {
		name = f
	}
	var buf [16]string
	words := splitWords(name, buf[:0])
	for len(words) > 1 && qualifiers[words[len(words)-1]] {
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	if secretWords[last] {
		return true
	}
	for _, c := range secretCompounds {
		if strings.HasSuffix(last, c) {
			return true
		}
	}
	return false
}

// splitWords appends the lower-cased words of name to dst.
func splitWords(name string, dst []string) []string {
	start := -1
	flush := func(end int) {
		if start >= 0 && len(dst) < cap(dst) {
			dst = append(dst, strings.ToLower(name[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		isUpper, isLower, isDigit := c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9'
		switch {
		case !isUpper && !isLower && !isDigit:
			flush(i)
			continue
		case start < 0:
			start = i
			continue
		}
		prev := name[i-1]
		switch {
		case isUpper && prev >= 'a' && prev <= 'z': // clientSecret
			flush(i)
			start = i
		case isLower && prev >= 'A' && prev <= 'Z' && i-1 > start: // APIKey: API, Key
			flush(i - 1)
			start = i - 1
		}
	}
	flush(len(name))
	return dst
}

var (
	secretWords = setOf("key keys apikey apikeys token secret secrets password passwords passwd pwd pass passphrase passcode " +
		"auth authorization authentication credential credentials cred creds signature signatures sig " +
		"session sessionid cookie cookies jwt bearer otp totp hmac csrf xsrf privatekey accesskey secretkey")
	qualifiers      = setOf("id value val str string b64 base64 hex enc encoded raw data header hdr env var v1 v2 1 2")
	secretCompounds = strings.Fields("apikey accesskey secretkey privatekey authkey signingkey masterkey encryptionkey subscriptionkey " +
		"accountkey sharedaccesskey token secret password passwd passphrase passcode credential credentials signature cookie " +
		"authorization sessionid sessionkey")
)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// Redact returns s with secrets replaced by [Redacted]: bearer tokens and
// Basic credentials, the values of headers, query parameters, JSON fields
// and name=value pairs whose name says secret (see isSecretName: X-Api-Key,
// X-Auth-Key, Ocp-Apim-Subscription-Key, api_key, clientSecret, session_id,
// …), API keys of known shapes (sk-…, AIza…, gsk_…, AKIA…, GitHub, GitLab,
// Slack, Hugging Face, npm, … tokens, JWTs), long high-entropy runs, URL
// passwords and PEM private keys. It sees through disguises: the rules
// also run on the fold of s (package textfold: look-alike letters,
// invisible characters, fullwidth forms, escapes and character
// references), and a secret found there is redacted where it stands in s.
// Redacting JSON text keeps it valid JSON. It is idempotent and safe for
// concurrent use.
func Redact(s string) string {
	// A secret redacted in the fold can leave the original's rules a
	// different view of what surrounds it (an invisible character the
	// fold dropped): redact again until nothing changes.
	for range 4 {
		r := redactOnce(s)
		if r == s {
			break
		}
		s = r
	}
	return s
}

// redactOnce is one pass of Redact's rules over s and its fold.
func redactOnce(s string) string {
	if clean(s) {
		return s
	}
	f, m := textfold.Fold(s)
	raw := mayHoldSecret(s)
	var spans []secretSpan
	if raw {
		spans = appendSecretSpans(spans, s, nil)
	}
	if m != nil && mayHoldSecret(f) {
		spans = appendSecretSpans(spans, f, m)
	}
	if len(spans) == 0 {
		return s
	}
	return replaceSpans(s, spans)
}

// A secretSpan is a secret's bytes in the text being redacted; wrap says
// it is a JSON literal to replace with a string.
type secretSpan struct {
	start, end int
	wrap       bool
}

// appendSecretSpans appends the secrets the rules find in text; m maps
// text (a fold) back to the original, or is nil when text is it.
func appendSecretSpans(spans []secretSpan, text string, m *textfold.Map) []secretSpan {
	for _, r := range secretRules {
		for _, loc := range r.re.FindAllStringSubmatchIndex(text, -1) {
			add := func(a, b int, wrap bool) {
				if a < 0 || a >= b {
					return
				}
				if m != nil {
					a, b = m.Span(a, b)
				}
				spans = append(spans, secretSpan{a, b, wrap})
			}
			switch {
			case r.value != nil:
				r.value(text, loc, add)
			case r.check == nil || r.check(text, loc):
				add(loc[2*r.g], loc[2*r.g+1], r.wrap != nil && r.wrap(text, loc))
			}
		}
	}
	return spans
}

// replaceSpans replaces the spans of s, merged where they overlap. What
// holds JSON together stays: a quote that opens or closes a string, a
// backslash that escapes what follows the span, and the whole of an
// escape the span starts inside.
func replaceSpans(s string, spans []secretSpan) string {
	slices.SortFunc(spans, func(x, y secretSpan) int { return x.start - y.start })
	var b strings.Builder
	b.Grow(len(s))
	done := 0
	for i := 0; i < len(spans); {
		sp := spans[i]
		for i++; i < len(spans) && spans[i].start < sp.end; i++ {
			sp.end = max(sp.end, spans[i].end)
			sp.wrap = sp.wrap || spans[i].wrap
		}
		start := max(sp.start, done)
		// A span that starts on an escaped character leaves the escape whole.
		if start > 0 && start < sp.end && oddBackslashesBefore(s, start) {
			if s[start] == 'u' && start+5 <= sp.end {
				start += 5
			} else {
				start++
			}
		}
		end := sp.end
		if start >= end {
			continue
		}
		b.WriteString(s[done:start])
		b.WriteString(replacement(s[start:end], sp.wrap))
		done = end
	}
	b.WriteString(s[done:])
	return b.String()
}

// replacement returns what replaces the secret t: [Redacted], keeping the
// quotes that delimit JSON strings and the backslash of an escape that t
// ends with, so JSON stays JSON.
func replacement(t string, wrap bool) string {
	switch {
	case len(t) >= 4 && strings.HasPrefix(t, `\"`) && strings.HasSuffix(t, `\"`) && !oddBackslashesBefore(t, len(t)-2):
		return `\"` + Redacted + `\"`
	case !strings.ContainsRune(t, '"'):
		if wrap {
			return `"` + Redacted + `"`
		}
		if oddBackslashesBefore(t, len(t)) {
			return Redacted + `\`
		}
		return Redacted
	}
	// Keep every quote that is not escaped; replace what lies between.
	var b strings.Builder
	seg := 0
	for i := 0; i <= len(t); i++ {
		if i < len(t) && (t[i] != '"' || oddBackslashesBefore(t, i)) {
			continue
		}
		if i > seg {
			b.WriteString(Redacted)
			if oddBackslashesBefore(t, i) {
				b.WriteByte('\\')
			}
		}
		if i < len(t) {
			b.WriteByte('"')
		}
		seg = i + 1
	}
	return b.String()
}

// oddBackslashesBefore reports whether s[i] is escaped: an odd run of
// backslashes ends at i.
func oddBackslashesBefore(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// clean reports whether s surely holds no secret, as written or folded:
// the filter of the common case, one pass over s (a second, that folds
// as it goes without building the fold, when s is not its own fold).
func clean(s string) bool {
	run, plain := 0, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		k := byteClass[c]
		if k&classBase64 != 0 {
			if run++; run >= 32 {
				return false
			}
		} else {
			run = 0
		}
		if k&classFolds != 0 {
			plain = false
		}
		if i+1 == len(s) || secondChars[c]&charBit(s[i+1]) == 0 {
			continue
		}
		for _, n := range needles[c|0x20] {
			if hasPrefixLower(s, i, n) {
				return false
			}
		}
	}
	return plain || !foldMayHoldSecret(s)
}

// The classes of a byte for clean.
const (
	classBase64 = 1 << iota // a character of the high-entropy rule's runs
	classFolds              // a byte the fold may change: not ASCII, a control, an escape's start
)

var byteClass = func() (t [256]uint8) {
	for c := range t {
		if base64Char[c] {
			t[c] |= classBase64
		}
		if c >= 0x80 || (c < ' ' && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r') || c == 0x7f || c == '&' || c == '%' || c == '\\' {
			t[c] |= classFolds
		}
	}
	return t
}()

// foldMayHoldSecret is mayHoldSecret of the fold of s, folding as it
// goes: a window of the last folded bytes is matched against the needles
// that end with each new one.
func foldMayHoldSecret(s string) bool {
	var window [maxNeedle]byte // lower case, the newest at n-1 (mod maxNeedle)
	n, run := 0, 0
	var buf [64]byte
	for i := 0; i < len(s); {
		r, w := textfold.Next(s[i:])
		i += w
		for _, c := range textfold.AppendRune(buf[:0], r) {
			if base64Char[c] {
				if run++; run >= 32 {
					return true
				}
			} else {
				run = 0
			}
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			window[n%maxNeedle] = c
			n++
			for _, nd := range needlesByLast[c] {
				if len(nd) <= n && windowEndsWith(&window, n, nd) {
					return true
				}
			}
		}
	}
	return false
}

func windowEndsWith(w *[maxNeedle]byte, n int, nd string) bool {
	for j := 0; j < len(nd); j++ {
		if w[(n-len(nd)+j)%maxNeedle] != nd[j] {
			return false
		}
	}
	return true
}

// maxNeedle bounds the length of a needle.
const maxNeedle = 16

// needlesByLast are the needles by their last character.
var needlesByLast = func() (t [256][]string) {
	for _, list := range needles {
		for _, n := range list {
			if len(n) > maxNeedle {
				panic("trace: a needle longer than maxNeedle")
			}
			t[n[len(n)-1]] = append(t[n[len(n)-1]], n)
		}
	}
	return t
}()

// mayHoldSecret is a one-pass filter that lets the common case (no secret
// in sight) skip the regular expressions. It must return true whenever any
// rule could match: every rule needs one of these needles, or a run of 32
// characters of the high-entropy rule.
func mayHoldSecret(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; base64Char[c] {
			if run++; run >= 32 {
				return true
			}
		} else {
			run = 0
		}
		if i+1 == len(s) || secondChars[s[i]]&charBit(s[i+1]) == 0 {
			// Most positions are ruled out by their first two characters.
			continue
		}
		for _, n := range needles[s[i]|0x20] { // ASCII lower case (also maps some punctuation, harmlessly)
			if hasPrefixLower(s, i, n) {
				return true
			}
		}
	}
	return false
}

var base64Char = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_=-" {
		t[c] = true
	}
	return t
}()

// needles, by their first character (lower case): every secret word and
// compound of isSecretName holds one, and so does every shape.
var needles = func() (t [256][]string) {
	for _, n := range strings.Fields(`-----begin :// ` +
		`key token secret pass pwd auth cred sig session cookie jwt bearer basic otp hmac csrf xsrf ` +
		`aiza akia asia ghp_ gho_ ghu_ ghs_ ghr_ github_pat_ glpat- gsk_ hf_ sk- sk_ rk_ whsec_ ya29. xox xapp- ` +
		`npm_ pypi- sg. shp dop_ sq0 age-secret r8_ pplx- tvly- xai- nvapi- lin_api_ atatt dapi eyj`) {
		t[n[0]] = append(t[n[0]], n)
	}
	return t
}()

// secondChars[c] is the set (see charBit) of characters that follow c at
// the start of some needle, in either case.
var secondChars = func() (t [256]uint64) {
	for first, list := range needles {
		for _, n := range list {
			for _, c := range []byte{byte(first), upper(byte(first))} {
				t[c] |= charBit(n[1])
			}
		}
	}
	return t
}()

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// charBit maps a character, case-folded for ASCII letters, to one of 64
// bits (collisions only make the filter less selective, never wrong).
func charBit(c byte) uint64 {
	if c >= 'A' && c <= 'Z' {
		c += 'a' - 'A'
	}
	return 1 << (c & 63)
}

// hasPrefixLower reports whether s[i:] starts with needle (lower case
// ASCII), ignoring ASCII case.
func hasPrefixLower(s string, i int, needle string) bool {
	if len(s)-i < len(needle) {
		return false
	}
	for j := 0; j < len(needle); j++ {
		c := s[i+j]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != needle[j] {
			return false
		}
	}
	return true
}

// Preview returns s redacted and cut to at most limit runes, with "..."
// appended when it was cut. Redaction happens before the cut, so a secret
// is never half-kept.
func Preview(s string, limit int) string {
	s = Redact(s)
	if limit <= 0 || len(s) <= limit {
		return s
	}
	n := 0
	for i := range s {
		if n == limit {
			return s[:i] + "..."
		}
		n++
	}
	return s
}

// PreviewLimit is the length, in runes, of the previews the agent loop
// puts in events.
const PreviewLimit = 200

// RedactJSON returns raw with the same redaction applied to every string
// of the JSON document, and the values of secret-named fields replaced
// whole: under an object or array, each string, number and boolean it
// holds. A document with nothing to redact is returned as is (same bytes);
// one that is not valid JSON is redacted as text.
func RedactJSON(raw []byte) []byte {
	if clean(string(raw)) {
		return raw
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		return []byte(Redact(string(raw)))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(redactValue(v, false)); err != nil {
		return []byte(Redact(string(raw)))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func redactValue(v any, secret bool) any {
	switch x := v.(type) {
	case string:
		if secret {
			return Redacted
		}
		return Redact(x)
	case json.Number, bool:
		if secret {
			return Redacted
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[Redact(k)] = redactValue(e, secret || isSecretName(k))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e, secret)
		}
		return out
	}
	return v
}

// redactStrings redacts each string in place and reports whether any
// changed.
func redactStrings(ss ...*string) bool {
	changed := false
	for _, s := range ss {
		if r := Redact(*s); r != *s {
			*s, changed = r, true
		}
	}
	return changed
}

// redactList returns list redacted: list itself when nothing changed, a
// copy otherwise (the caller's slice is never modified).
func redactList(list []string) ([]string, bool) {
	for i, s := range list {
		if r := Redact(s); r != s {
			out := slices.Clone(list)
			out[i] = r
			for j := i + 1; j < len(out); j++ {
				out[j] = Redact(out[j])
			}
			return out, true
		}
	}
	return list, false
}

func (p Run) redacted() Payload {
	if !redactStrings(&p.Status, &p.Model, &p.Output, &p.Error) {
		return nil
	}
	return p
}

func (p ModelCall) redacted() Payload {
	if !redactStrings(&p.Status, &p.Content, &p.Error, &p.FinishReason) {
		return nil
	}
	return p
}

func (p ToolCall) redacted() Payload {
	if !redactStrings(&p.Status, &p.Name, &p.CallID, &p.Arguments, &p.Content, &p.Error, &p.Reason) {
		return nil
	}
	return p
}

func (p Guard) redacted() Payload {
	changed := redactStrings(&p.Status, &p.Name, &p.CallID, &p.Reason, &p.Verdict, &p.Stage, &p.Tool)
	var names bool
	if p.Names, names = redactList(p.Names); !changed && !names {
		return nil
	}
	return p
}

func (p Hook) redacted() Payload {
	if !redactStrings(&p.Status, &p.Name, &p.CallID, &p.Content, &p.Error, &p.Reason) {
		return nil
	}
	return p
}

func (p Memory) redacted() Payload {
	changed := redactStrings(&p.Status, &p.Error, &p.Query)
	var sources bool
	if p.Sources, sources = redactList(p.Sources); !changed && !sources {
		return nil
	}
	return p
}

func (p Sandbox) redacted() Payload {
	changed := redactStrings(&p.Name, &p.CallID, &p.Error, &p.Module, &p.SHA256, &p.ABI, &p.Outcome)
	var g, u, d bool
	p.Grants, g = redactList(p.Grants)
	p.GrantsUsed, u = redactList(p.GrantsUsed)
	p.Denied, d = redactList(p.Denied)
	if !changed && !g && !u && !d {
		return nil
	}
	return p
}

func (p Synth) redacted() Payload {
	if !redactStrings(&p.Status, &p.Name, &p.Detail, &p.Error, &p.Language, &p.SHA256) {
		return nil
	}
	return p
}

// redacted returns a redacted copy of the fields, always (the caller's
// map and what it holds are never modified): every key and string
// redacted, the value of a secret-named key replaced whole (under an
// object or array, each string, number and boolean it holds: a header
// map's list of values, a "secrets" object), and any value that
// is not a string, number, boolean, null, Fields, map[string]any or []any
// first replaced by its JSON form read back, so no string inside it
// escapes.
func (p Fields) redacted() Payload {
	if p == nil {
		return nil
	}
	return redactFields(p, false)
}

func redactFields(m map[string]any, secret bool) Fields {
	out := make(Fields, len(m))
	for k, v := range m {
		out[Redact(k)] = redactField(secret || isSecretName(k), v)
	}
	return out
}

func redactField(secret bool, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string, bool, json.Number, float64, int, int64:
		if secret {
			return Redacted
		}
		if s, ok := x.(string); ok {
			return Redact(s)
		}
		return x
	case Fields:
		return redactFields(x, secret)
	case map[string]any:
		return map[string]any(redactFields(x, secret))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactField(secret, e)
		}
		return out
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var generic any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&generic) != nil {
		return nil
	}
	return redactField(secret, generic)
}
