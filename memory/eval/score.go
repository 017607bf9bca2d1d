package eval

import (
	"strings"
	"unicode"
)

// Score reports whether answer is correct for s: it contains at least one
// expected phrase and no forbidden phrase. Phrases match whole words,
// ignoring case, accents and punctuation, so "no" does not match "know"
// and "01 45 67 89 10" matches "01.45.67.89.10".
func Score(s Scenario, answer string) bool {
	a := " " + normalize(answer) + " "
	has := func(p string) bool {
		n := normalize(p)
		return n != "" && strings.Contains(a, " "+n+" ")
	}
	ok := false
	for _, p := range s.Expected {
		if has(p) {
			ok = true
			break
		}
	}
	for _, p := range s.Forbidden {
		if has(p) {
			return false
		}
	}
	return ok
}

// normalize lower-cases s, strips accents and keeps only words (letters
// and digits) separated by single spaces.
func normalize(s string) string {
	var b strings.Builder
	space := true
	for _, r := range strings.ToLower(s) {
		if f, ok := accentFold[r]; ok {
			r = f
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			space = false
			continue
		}
		if unicode.Is(unicode.Mn, r) {
			continue // a combining accent
		}
		if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}

// accentFold maps accented Latin letters to their base letter. A small
// table is enough for the scenarios and for the answers models give.
var accentFold = func() map[rune]rune {
	m := make(map[rune]rune)
	for base, variants := range map[rune]string{
		'a': "àáâãäåāăą", 'c': "çćĉċč", 'd': "ďđ", 'e': "èéêëēĕėęě", 'g': "ĝğġģ",
		'h': "ĥħ", 'i': "ìíîïĩīĭįı", 'j': "ĵ", 'k': "ķ", 'l': "ĺļľŀł", 'n': "ñńņňŉ",
		'o': "òóôõöøōŏő", 'r': "ŕŗř", 's': "śŝşšș", 't': "ţťŧț", 'u': "ùúûüũūŭůűų",
		'w': "ŵ", 'y': "ýÿŷ", 'z': "źżž",
	} {
		for _, v := range variants {
			m[v] = base
		}
	}
	return m
}()
