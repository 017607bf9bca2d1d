package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/internal/textfold"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// SecretsGuardrail finds secrets with the trace redaction's rules
// (trace.Redact: secret-named headers, fields and parameters, bearer and
// Basic credentials, API keys of the usual vendors, long random runs, URL
// passwords, private keys), in the text as written and as a reader sees it
// (look-alike letters, invisible characters, escapes undone), and inside
// runs of base64, hex or percent-encoding (two layers deep): it redacts
// them to [Redacted] (a whole encoded run that holds one), or blocks when
// block is set.
func SecretsGuardrail(block bool) Guardrail {
	return GuardFunc("secrets", func(_ context.Context, in *GuardCheck) (GuardVerdict, error) {
		out := redactSecrets(in.Text, decodeDepth)
		if out == in.Text {
			return GuardVerdict{}, nil
		}
		if block {
			return GuardVerdict{Action: GuardBlock, Reason: "the text holds a secret"}, nil
		}
		return GuardVerdict{Action: GuardRedact, Reason: "secrets redacted", Text: out}, nil
	})
}

// decodeDepth is how many layers of encoding the built-in guardrails look
// through: base64 inside percent-encoding is found, a third layer is not.
const decodeDepth = 2

// redactSecrets redacts s and, depth layers deep, the encoded runs that
// hold a secret.
func redactSecrets(s string, depth int) string {
	out := trace.Redact(s)
	if depth == 0 {
		return out
	}
	f, m := textfold.Fold(out)
	var runs []span
	for r := range textfold.EncodedRuns(f) {
		if redactSecrets(r.Text, depth-1) != r.Text {
			runs = append(runs, foldSpan(m, r.Start, r.End, trace.Redacted))
		}
	}
	return replaceSpans(out, runs)
}

var (
	emailRE = regexp.MustCompile(`(?i)\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b`)
	// emailWrittenOutRE: an address with its @ and dots written out, in
	// brackets: ada [at] example [dot] org, ada(at)example.org.
	emailWrittenOutRE = regexp.MustCompile(`(?i)\b[a-z0-9._%+-]+\s*[\[({<]\s*(?:at|@)\s*[\])}>]\s*[a-z0-9-]+(?:\s*(?:[\[({<]\s*(?:dot|\.)\s*[\])}>]|\.)\s*[a-z0-9-]+)+`)
	// phoneRE: a number written as a phone number: international (+CC,
	// an area code in parentheses allowed), an area code in parentheses,
	// or a national one starting with 0; 7 to 14 digits after the prefix,
	// with the usual separators (space, dot, dash, slash, underscore).
	// Bare numbers do not match, and dates are set aside (looksLikeDate).
	phoneRE = regexp.MustCompile(`(?:\+ ?\d{1,3}[ ._/-]?(?:\(\d{1,4}\)[ ._/-]?)?|\(\d{2,4}\)[ ._/-]?|\(0\)[ ._/-]?|\b0)\d(?:[ ._/-]?\d){6,13}\b`)
	ibanRE  = regexp.MustCompile(`(?i)\b[A-Z]{2}\d{2}(?:[\s._/-]{0,3}[A-Z0-9]{4}){2,7}(?:[\s._/-]{0,3}[A-Z0-9]{1,3})?\b`)
	cardRE  = regexp.MustCompile(`\b\d(?:[\s._/-]{0,3}\d){12,18}\b`)
	dateRE  = regexp.MustCompile(`^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$`)
)

// PIIGuardrail finds personal data: e-mail addresses (also written out:
// ada [at] example [dot] org), IBANs (checked with their mod-97 digits),
// payment card numbers (checked with Luhn) and phone numbers, their digit
// groups separated by white space (a line break too), dots, dashes,
// slashes or underscores. It
// looks at the text as written and as a reader sees it (digits of any
// script, fullwidth forms, invisible characters, escapes undone), and
// inside runs of base64, hex or percent-encoding (two layers deep). It
// redacts them to [email], [iban], [card] and [phone] (a whole encoded run
// that holds one), or blocks when block is set.
func PIIGuardrail(block bool) Guardrail {
	return GuardFunc("pii", func(_ context.Context, in *GuardCheck) (GuardVerdict, error) {
		out, kinds := redactPII(in.Text)
		if len(kinds) == 0 {
			return GuardVerdict{}, nil
		}
		reason := "personal data: " + strings.Join(kinds, ", ")
		if block {
			return GuardVerdict{Action: GuardBlock, Reason: reason}, nil
		}
		return GuardVerdict{Action: GuardRedact, Reason: reason, Text: out}, nil
	})
}

func redactPII(s string) (string, []string) {
	spans := piiSpans(s, decodeDepth)
	var kinds []string
	for _, sp := range spans {
		if k := strings.Trim(sp.label, "[]"); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return replaceSpans(s, spans), kinds
}

// span is a part of a text to replace by label.
type span struct {
	start, end int
	label      string
}

// piiSpans finds the personal data of s: in s, in its fold, and depth
// layers deep in its encoded runs.
func piiSpans(s string, depth int) []span {
	spans := findPII(nil, s, nil)
	f, m := textfold.Fold(s)
	if m != nil {
		spans = findPII(spans, f, m)
	}
	if depth > 0 {
		for r := range textfold.EncodedRuns(f) {
			if inner := piiSpans(r.Text, depth-1); len(inner) > 0 {
				spans = append(spans, foldSpan(m, r.Start, r.End, inner[0].label))
			}
		}
	}
	return spans
}

// findPII appends the personal data the expressions find in text; m maps
// text (a fold) back to the original, or is nil when text is it.
func findPII(spans []span, text string, m *textfold.Map) []span {
	for _, k := range []struct {
		re    *regexp.Regexp
		label string
		valid func(string) bool
	}{
		{emailRE, "[email]", nil},
		{emailWrittenOutRE, "[email]", nil},
		{ibanRE, "[iban]", ibanValid},
		{cardRE, "[card]", luhn},
		{phoneRE, "[phone]", func(s string) bool { return !dateRE.MatchString(s) }},
	} {
		for _, loc := range k.re.FindAllStringIndex(text, -1) {
			if k.valid == nil || k.valid(text[loc[0]:loc[1]]) {
				spans = append(spans, foldSpan(m, loc[0], loc[1], k.label))
			}
		}
	}
	return spans
}

// foldSpan maps [i, j) of a fold back to its original (m nil: it is).
func foldSpan(m *textfold.Map, i, j int, label string) span {
	if m != nil {
		i, j = m.Span(i, j)
	}
	return span{i, j, label}
}

// replaceSpans replaces the spans of s, merged where they overlap (the
// first one's label stands for the merged span).
func replaceSpans(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	slices.SortStableFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	done := 0
	for i := 0; i < len(spans); {
		sp := spans[i]
		for i++; i < len(spans) && spans[i].start < sp.end; i++ {
			sp.end = max(sp.end, spans[i].end)
		}
		start := max(sp.start, done)
		if start >= sp.end {
			continue
		}
		b.WriteString(s[done:start])
		b.WriteString(sp.label)
		done = sp.end
	}
	b.WriteString(s[done:])
	return b.String()
}

// luhn reports whether the digits of s pass the Luhn check.
func luhn(s string) bool {
	sum, n, double := 0, 0, false
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c < '0' || c > '9' {
			continue
		}
		d := int(c - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
		n++
	}
	return n >= 13 && sum%10 == 0
}

// ibanValid reports whether s is an IBAN whose check digits hold (ISO
// 13616: the rearranged number mod 97 is 1), its separators left out.
func ibanValid(s string) bool {
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || strings.ContainsRune("._/-", r) {
			return -1
		}
		return unicode.ToUpper(r)
	}, s)
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	r := s[4:] + s[:4]
	mod := 0
	for _, c := range r {
		switch {
		case c >= '0' && c <= '9':
			mod = (mod*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			mod = (mod*100 + int(c-'A'+10)) % 97
		default:
			return false
		}
	}
	return mod == 1
}

// DenyGuardrail blocks a text that matches any of patterns (regular
// expressions, RE2 syntax). No pattern, or a bad one, is an error.
func DenyGuardrail(name string, patterns ...string) (Guardrail, error) {
	if len(patterns) == 0 {
		return nil, fmt.Errorf("loop: DenyGuardrail %s: no pattern", name)
	}
	res := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("loop: DenyGuardrail %s: pattern %d: %w", name, i+1, err)
		}
		res[i] = re
	}
	return GuardFunc(name, func(_ context.Context, in *GuardCheck) (GuardVerdict, error) {
		for i, re := range res {
			if re.MatchString(in.Text) {
				return GuardVerdict{Action: GuardBlock, Reason: fmt.Sprintf("matches denied pattern %d", i+1)}, nil
			}
		}
		return GuardVerdict{}, nil
	}), nil
}

// MaxLengthGuardrail bounds a text to max characters: an answer longer
// gets a correction (shorter, please), any other text is blocked.
func MaxLengthGuardrail(max int) Guardrail {
	return GuardFunc("max_length", func(_ context.Context, in *GuardCheck) (GuardVerdict, error) {
		n := utf8.RuneCountInString(in.Text)
		if n <= max {
			return GuardVerdict{}, nil
		}
		reason := fmt.Sprintf("%d characters, more than the %d allowed", n, max)
		if in.Stage == GuardOutput {
			return GuardVerdict{Action: GuardCorrect, Reason: reason, Text: fmt.Sprintf("Your answer is %d characters long; the limit is %d. Answer again, shorter.", n, max)}, nil
		}
		return GuardVerdict{Action: GuardBlock, Reason: reason}, nil
	})
}

// JSONSchemaGuardrail requires the text to be JSON valid against schema:
// an answer that is not gets a correction carrying the validator's message,
// any other text is blocked.
func JSONSchemaGuardrail(schema json.RawMessage) (Guardrail, error) {
	s, err := tool.CompileSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("loop: JSONSchemaGuardrail: %w", err)
	}
	return GuardFunc("json_schema", func(_ context.Context, in *GuardCheck) (GuardVerdict, error) {
		text := strings.TrimSpace(in.Text)
		var problem string
		if !json.Valid([]byte(text)) {
			problem = "the text is not JSON"
		} else if err := s.Validate(json.RawMessage(text)); err != nil {
			problem = err.Error()
		}
		if problem == "" {
			return GuardVerdict{}, nil
		}
		if in.Stage == GuardOutput {
			return GuardVerdict{Action: GuardCorrect, Reason: problem, Text: "Your answer must be only JSON matching the schema, and it is not: " + problem + ". Answer again with the JSON alone."}, nil
		}
		return GuardVerdict{Action: GuardBlock, Reason: problem}, nil
	}), nil
}
