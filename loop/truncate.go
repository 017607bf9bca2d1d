package loop

import (
	"fmt"
	"unicode/utf8"
)

// truncateMiddle bounds s to max characters (code points), keeping about
// two thirds of the budget from the head and one third from the tail
// around a marker that says how much was dropped. The marker counts against
// max: the result is never longer than max. When max cannot even hold the
// marker, s is cut hard to max characters. It reports whether s was cut.
func truncateMiddle(s string, max int) (string, bool) {
	if max <= 0 {
		return s, false
	}
	total := utf8.RuneCountInString(s)
	if total <= max {
		return s, false
	}
	// The omitted count appears in the marker, and the marker's width
	// changes how much is omitted: settle on a count whose marker fits.
	omitted := total - max
	for {
		marker := truncationMarker(omitted, total)
		budget := max - utf8.RuneCountInString(marker)
		if budget <= 0 {
			return prefixRunes(s, max), true
		}
		actual := total - budget
		if actual != omitted {
			m := truncationMarker(actual, total)
			if utf8.RuneCountInString(m) > utf8.RuneCountInString(marker) {
				omitted = actual // one more digit: try again with it
				continue
			}
			marker = m
		}
		head := budget * 2 / 3
		return prefixRunes(s, head) + marker + suffixRunes(s, budget-head), true
	}
}

func truncationMarker(omitted, total int) string {
	return fmt.Sprintf("\n[TRUNCATED — %d of %d characters omitted in the middle. Narrow your query, filter, or request one portion at a time.]\n", omitted, total)
}

func prefixRunes(s string, n int) string {
	i := 0
	for ; n > 0 && i < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

func suffixRunes(s string, n int) string {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}
