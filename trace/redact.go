package trace

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
)

// Redacted replaces every secret [Redact] finds.
const Redacted = "***REDACTED***"

// secretPatterns are applied in order. Each keeps its first group (the
// context that says "this is a secret": a header name, a JSON key, a URL
// scheme) and replaces what follows, so a reader still sees which secret
// was removed. No pattern consumes a double quote or a backslash it did
// not also match the opening of, so redacting JSON text keeps it valid
// JSON. The rules deliberately over-redact: a trace is shared far more
// widely than the process that wrote it.
var secretPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// PEM private keys, whole block (or to the end of a cut preview).
	{regexp.MustCompile(`(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)(?s:[^"]*?)(-----END [A-Z0-9 ]*PRIVATE KEY-----|"|$)`), "${1}" + Redacted + "${2}"},
	// JSON fields whose name says secret: "password": "…", "access_token": "…"
	// (a number or literal becomes a string, so the JSON stays valid).
	{regexp.MustCompile(`(?i)("[^"\\]{0,64}?` + secretKeyNames + `"\s*:\s*)(?:"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null)`), `${1}"` + Redacted + `"`},
	// The same inside JSON that was itself encoded as a JSON string: \"password\": \"…\".
	{regexp.MustCompile(`(?i)(\\"[^"\\]{0,64}?` + secretKeyNames + `\\"\s*:\s*)\\"(?:[^\\]|\\[^"])*\\"`), `${1}\"` + Redacted + `\"`},
	// Authorization header values, whatever the scheme.
	{regexp.MustCompile(`(?i)(\bauthorization["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|token|digest|bot)\s+)?[^\s"',;{}\[\]\\]+`), "${1}" + Redacted},
	// Bearer tokens anywhere.
	{regexp.MustCompile(`(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}`), "${1}" + Redacted},
	// key: value and key=value forms (headers, query strings, env files).
	{regexp.MustCompile(`(?i)((?:x-api-key|x-goog-api-key|api[_-]?key|access[_-]?token|refresh[_-]?token|auth[_-]?token|id[_-]?token|client[_-]?secret|secret[_-]?key|access[_-]?key|private[_-]?key|password|passwd|passphrase|secret|token)["']?\s*[:=]\s*["']?)[^\s"'&,;{}\[\]\\]{3,}`), "${1}" + Redacted},
	// Query parameters that carry credentials: ?key=…, &sig=….
	{regexp.MustCompile(`(?i)(\b(?:key|sig|signature)=)[^&\s"'#\\]{6,}`), "${1}" + Redacted},
	// Passwords in URLs: scheme://user:password@host.
	{regexp.MustCompile(`(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@"\\]+:)[^@\s/"\\]+(@)`), "${1}" + Redacted + "${2}"},
	// Well-known token shapes, wherever they appear.
	{regexp.MustCompile(`\b(?:` +
		`sk-[A-Za-z0-9_-]{16,}` + // OpenAI, Anthropic (sk-ant-…), DeepSeek
		`|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}` + // Stripe
		`|gsk_[A-Za-z0-9]{20,}` + // Groq
		`|AIza[0-9A-Za-z_-]{30,}` + // Google
		`|(?:AKIA|ASIA)[0-9A-Z]{16}` + // AWS access key ids
		`|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,}` + // GitHub
		`|glpat-[A-Za-z0-9_-]{20,}` + // GitLab
		`|xox[abposr]-[A-Za-z0-9-]{10,}` + // Slack
		`|hf_[A-Za-z0-9]{30,}` + // Hugging Face
		`|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}` + // JWTs
		`)`), Redacted},
}

// secretKeyNames matches the end of a field name that holds a secret. It
// matches "access_token" but not "input_tokens" or "token_budget".
const secretKeyNames = `(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|authorization|credentials?|cookie|session[_-]?id)`

var secretNameRE = regexp.MustCompile(`(?i)` + secretKeyNames + `$`)

// isSecretName reports whether a field named name holds a secret.
func isSecretName(name string) bool { return secretNameRE.MatchString(name) }

// Redact returns s with secrets replaced by [Redacted]: bearer tokens and
// Authorization values, API keys (sk-…, AIza…, gsk_…, AKIA…, GitHub, GitLab,
// Slack, Hugging Face tokens, JWTs), x-api-key / x-goog-api-key / api_key=
// values, key= and sig= query parameters, URL passwords, PEM private keys,
// and the values of secret-named fields (password, token, secret, api_key,
// authorization, …) in JSON. It is idempotent and safe for concurrent use.
func Redact(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// mayHoldSecret is a one-pass filter that lets the common case (no secret
// in sight) skip the regular expressions. It must return true whenever any
// pattern could match: every pattern needs one of these needles.
func mayHoldSecret(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		// Most positions are ruled out by their first two characters.
		if secondChars[s[i]]&charBit(s[i+1]) == 0 {
			continue
		}
		var needles []string
		switch s[i] | 0x20 { // ASCII lower case (also maps some punctuation, harmlessly)
		case '-' | 0x20: // '-' is 0x2d, unchanged
			needles = needlesDash
		case ':' | 0x20:
			needles = needlesColon
		case 'a':
			needles = needlesA
		case 'b':
			needles = needlesB
		case 'c':
			needles = needlesC
		case 'e':
			needles = needlesE
		case 'g':
			needles = needlesG
		case 'h':
			needles = needlesH
		case 'i':
			needles = needlesI
		case 'k':
			needles = needlesK
		case 'p':
			needles = needlesP
		case 'r':
			needles = needlesR
		case 's':
			needles = needlesS
		case 't':
			needles = needlesT
		case 'x':
			needles = needlesX
		default:
			continue
		}
		for _, n := range needles {
			if hasPrefixLower(s, i, n) {
				return true
			}
		}
	}
	return false
}

var (
	needlesDash  = []string{"-----begin"}
	needlesColon = []string{"://"}
	needlesA     = []string{"authorization", "api", "access", "aiza", "akia", "asia", "auth"}
	needlesB     = []string{"bearer"}
	needlesC     = []string{"client", "credential", "cookie"}
	needlesE     = []string{"eyj"}
	needlesG     = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gsk_"}
	needlesH     = []string{"hf_"}
	needlesI     = []string{"id_token", "id-token", "idtoken"}
	needlesK     = []string{"key"}
	needlesP     = []string{"passw", "passp", "private"}
	needlesR     = []string{"refresh", "rk_"}
	needlesS     = []string{"secret", "session", "sk-", "sk_", "sig"}
	needlesT     = []string{"token"}
	needlesX     = []string{"x-api", "x-goog", "xox"}
)

// secondChars[c] is the set (see charBit) of characters that follow c at
// the start of some needle, in either case.
var secondChars = func() (t [256]uint64) {
	for _, list := range [][]string{needlesDash, needlesColon, needlesA, needlesB, needlesC, needlesE, needlesG, needlesH,
		needlesI, needlesK, needlesP, needlesR, needlesS, needlesT, needlesX} {
		for _, n := range list {
			for _, first := range []byte{n[0], upper(n[0])} {
				t[first] |= charBit(n[1])
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
// whole. A document with nothing to redact is returned as is (same bytes);
// one that is not valid JSON is redacted as text.
func RedactJSON(raw []byte) []byte {
	if !mayHoldSecret(string(raw)) {
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
	if err := enc.Encode(redactValue(v)); err != nil {
		return []byte(Redact(string(raw)))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return Redact(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			switch e.(type) {
			case string, json.Number, bool:
				if isSecretName(k) {
					out[Redact(k)] = Redacted
					continue
				}
			}
			out[Redact(k)] = redactValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e)
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
	if !redactStrings(&p.Status, &p.Error) {
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
// redacted, the value of a secret-named key replaced whole unless it is an
// object or array (whose own keys are then looked at), and any value that
// is not a string, number, boolean, null, Fields, map[string]any or []any
// first replaced by its JSON form read back, so no string inside it
// escapes.
func (p Fields) redacted() Payload {
	if p == nil {
		return nil
	}
	return redactFields(p)
}

func redactFields(m map[string]any) Fields {
	out := make(Fields, len(m))
	for k, v := range m {
		out[Redact(k)] = redactField(isSecretName(k), v)
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
		return redactFields(x)
	case map[string]any:
		return map[string]any(redactFields(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactField(false, e)
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
