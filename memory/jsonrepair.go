package memory

import (
	"bytes"
	"encoding/json"
	"strings"
)

// stripFences removes a Markdown code fence (```json ... ```) around a
// model's JSON answer, and any text before the first '{'.
func stripFences(s string) string {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		} else {
			rest = strings.TrimPrefix(rest, "json")
		}
		rest = strings.TrimSpace(rest)
		rest = strings.TrimSuffix(rest, "```")
		s = strings.TrimSpace(rest)
	}
	if i := strings.IndexByte(s, '{'); i > 0 {
		s = s[i:]
	}
	return s
}

// repairTruncatedJSON closes a JSON document cut short (an answer that hit
// the token cap), so the complete part can still be used. It returns false
// when s is not a cut-short document: complete JSON that fails to parse
// for another reason, or mismatched brackets, is never "repaired".
//
// It first closes the open string and brackets as they are; when that does
// not parse (the cut fell inside a string, or after a key or a comma), it
// cuts back to the last element that was complete, dropping the partial
// one. A partial operation is thus dropped, never half-applied.
func repairTruncatedJSON(s string) (string, bool) {
	var stack []byte
	inString, escaped := false, false
	lastEnd, lastDepth := -1, 0
	var lastStack []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) == 0 {
				return "", false
			}
			open := stack[len(stack)-1]
			if (c == '}') != (open == '{') {
				return "", false
			}
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				lastEnd, lastDepth = i+1, len(stack)
				lastStack = append(lastStack[:0], stack...)
			}
		}
	}
	if len(stack) == 0 && !inString {
		return "", false // complete: nothing to repair
	}
	if !inString {
		if fixed := s + closers(stack); json.Valid([]byte(fixed)) {
			return fixed, true
		}
	}
	if lastEnd < 0 || lastDepth == 0 {
		return "", false
	}
	fixed := strings.TrimRight(s[:lastEnd], " \t\r\n") + closers(lastStack)
	if !json.Valid([]byte(fixed)) {
		return "", false
	}
	return fixed, true
}

// closers returns the brackets that close stack, innermost first.
func closers(stack []byte) string {
	var b bytes.Buffer
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i] == '{' {
			b.WriteByte('}')
		} else {
			b.WriteByte(']')
		}
	}
	return b.String()
}
