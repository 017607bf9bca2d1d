// Package termtext makes text the CLI did not write itself safe to print
// on a terminal: a module's file name or tool description, a manifest's
// note, a config's plugin name, a model's answer, an error quoting any of
// them.
//
//	fmt.Fprintf(w, "file: %s\n", termtext.Name(p.File))   // one line, exactly as it is
//	fmt.Fprint(w, termtext.Text(answer))                     // prose: lines and tabs kept
//	out := termtext.NewWriter(os.Stdout)                    // what was missed, escaped on the way out
//
// A terminal obeys the control characters in what it prints: an escape
// sequence in a module's file name cleared the screen, set the window
// title or rewrote a reviewer's "status: pending" line (the red team of
// issue 38), and a right-to-left override makes "fs.write:" display as
// something else. Each is shown escaped, in Go's notation (\x1b,
// \u202e), so a person sees that it is there.
package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name returns s with every character that could change how a line
// displays escaped: control characters (C0, DEL, C1: escape sequences,
// carriage returns, line breaks), and format characters (direction
// overrides and isolates, zero-width characters, line and paragraph
// separators). For names, paths, grants and one-line fields.
func Name(s string) string { return escape(s, unsafeInName) }

// Text is Name for prose (a model's answer, a tool's result, a note):
// line breaks, tabs and the joiners that compose emoji and scripts
// (U+200C, U+200D) are kept.
func Text(s string) string { return escape(s, unsafeInText) }

func escape(s string, unsafe func(rune) bool) string {
	if strings.IndexFunc(s, unsafe) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r):
			q := fmt.Sprintf("%+q", string(r))
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func unsafeInName(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

func unsafeInText(r rune) bool {
	switch r {
	case '\n', '\t', '\u200c', '\u200d':
		return false
	}
	return unsafeInName(r)
}
