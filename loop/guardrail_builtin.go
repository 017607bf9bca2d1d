package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// SecretsGuardrail finds secrets with the trace redaction's patterns
// (bearer tokens, API keys of the usual vendors, URL passwords, private
// keys, secret-named JSON fields): it redacts them to [Redacted], or
// blocks when block is set.
func SecretsGuardrail(block bool) Guardrail {
	return GuardFunc("secrets", func(_ context.Context, in *GuardCheck) (GuardVerdict, error) {
		out := trace.Redact(in.Text)
		if out == in.Text {
			return GuardVerdict{}, nil
		}
		if block {
			return GuardVerdict{Action: GuardBlock, Reason: "the text holds a secret"}, nil
		}
		return GuardVerdict{Action: GuardRedact, Reason: "secrets redacted", Text: out}, nil
	})
}

var (
	emailRE = regexp.MustCompile(`(?i)\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b`)
	// phoneRE: a number written as a phone number: international (+CC,
	// an area code in parentheses allowed), an area code in parentheses,
	// or a national one starting with 0; 7 to 14 digits after the prefix,
	// with the usual separators. Dates and bare numbers do not match.
	phoneRE = regexp.MustCompile(`(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?|\(\d{2,4}\)[ .-]?|\b0)\d(?:[ .-]?\d){6,13}\b`)
	ibanRE  = regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b`)
	cardRE  = regexp.MustCompile(`\b\d(?:[ -]?\d){12,18}\b`)
)

// PIIGuardrail finds personal data: e-mail addresses, IBANs (checked with
// their mod-97 digits), payment card numbers (checked with Luhn) and phone
// numbers. It redacts them to [email], [iban], [card] and [phone], or
// blocks when block is set.
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
	var kinds []string
	found := func(kind string) {
		for _, k := range kinds {
			if k == kind {
				return
			}
		}
		kinds = append(kinds, kind)
	}
	s = emailRE.ReplaceAllStringFunc(s, func(string) string { found("email"); return "[email]" })
	s = ibanRE.ReplaceAllStringFunc(s, func(m string) string {
		if !ibanValid(m) {
			return m
		}
		found("iban")
		return "[iban]"
	})
	s = cardRE.ReplaceAllStringFunc(s, func(m string) string {
		if !luhn(m) {
			return m
		}
		found("card")
		return "[card]"
	})
	s = phoneRE.ReplaceAllStringFunc(s, func(m string) string { found("phone"); return "[phone]" })
	return s, kinds
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
// 13616: the rearranged number mod 97 is 1).
func ibanValid(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
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
