package main

import (
	"errors"
	"strings"
)

// splitCommand splits a command line into words as a POSIX shell would,
// without expanding anything: white space separates words; '...' keeps
// everything literally; "..." keeps everything but \" \\ \$ \` (and a
// backslash-newline, dropped); a backslash outside quotes keeps the next
// character. An unterminated quote is an error.
func splitCommand(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // a word is open (possibly empty: "")
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case r == '\'':
			in = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, errors.New("unterminated ' in the command")
			}
			cur.WriteString(string(rs[i+1 : j]))
			i = j
		case r == '"':
			in = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`\n", rs[j+1]) {
					j++
					if rs[j] != '\n' {
						cur.WriteRune(rs[j])
					}
					continue
				}
				cur.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, errors.New(`unterminated " in the command`)
			}
			i = j
		case r == '\\':
			in = true
			if i+1 < len(rs) {
				i++
				if rs[i] != '\n' {
					cur.WriteRune(rs[i])
				}
			}
		default:
			in = true
			cur.WriteRune(r)
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
