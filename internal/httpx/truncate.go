package httpx

import (
	"strings"
	"unicode/utf8"
)

// Truncate trims s and shortens it to at most n bytes, marked with "…", for
// quoting a body or a value in an error message. It never cuts a UTF-8
// sequence in two, so the message stays valid text.
func Truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
