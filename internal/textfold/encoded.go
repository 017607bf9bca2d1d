package textfold

import (
	"encoding/base64"
	"encoding/hex"
	"iter"
	"unicode"
	"unicode/utf8"
)

// An EncodedRun is a run of a text that decodes to text.
type EncodedRun struct {
	Start, End int    // the run's bytes in the text
	Text       string // what it decodes to
}

// MinEncoded is the shortest run EncodedRuns decodes: 16 characters, 12
// bytes of base64 or 8 of hex, as much as the shortest secret or personal
// datum it is looked at for.
const MinEncoded = 16

// EncodedRuns returns the runs of s that decode to text: base64 (standard
// or URL alphabet, padded or not), hex (an even number of digits), and
// percent-encoding (a run with no space that holds %HH). A run decodes
// to text when the result is UTF-8 of which at least nine characters in
// ten are printable; binary data, and hashes in hex or base64, do not.
// Each run is decoded once: a caller that looks through layers calls
// EncodedRuns again on what a run decodes to, to the depth it chooses.
// The work is linear in s; what all runs decode to is shorter than s.
func EncodedRuns(s string) iter.Seq[EncodedRun] {
	return func(yield func(EncodedRun) bool) {
		for i := 0; i < len(s); {
			start, end, kind := nextRun(s, i)
			if start < 0 {
				return
			}
			i = end
			if text, ok := decodeRun(s[start:end], kind); ok {
				if !yield(EncodedRun{start, end, text}) {
					return
				}
			}
		}
	}
}

const (
	runBase64 = iota
	runPercent
)

// nextRun finds the next candidate run at or after i: in a run of URL
// characters, the whole run when it holds a percent escape, otherwise a
// maximal run of base64 characters (its padding included) at least
// MinEncoded long.
func nextRun(s string, i int) (start, end, kind int) {
	for i < len(s) {
		if !isURLChar(s[i]) {
			i++
			continue
		}
		j, escaped := i, false
		for ; j < len(s) && isURLChar(s[j]); j++ {
			escaped = escaped || s[j] == '%' && j+2 < len(s) && isHex(s[j+1]) && isHex(s[j+2])
		}
		if escaped {
			return i, j, runPercent
		}
		for k := i; k < j; {
			if !isBase64Char(s[k]) {
				k++
				continue
			}
			m := k
			for m < j && isBase64Char(s[m]) {
				m++
			}
			pad := m
			for pad < j && pad-m < 2 && s[pad] == '=' {
				pad++
			}
			if m-k >= MinEncoded {
				return k, pad, runBase64
			}
			k = pad
		}
		i = j
	}
	return -1, -1, 0
}

// isURLChar: the characters of a URL or of an encoded run, but quotes,
// brackets and parentheses (which delimit one).
func isURLChar(c byte) bool {
	return isBase64Char(c) || c == '%' || c == '=' || c == '.' || c == '~' || c == '@' || c == ':' || c == '?' || c == '#' || c == '&' || c == '!' || c == '$' || c == '*' || c == ',' || c == ';'
}

func isBase64Char(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

func isHex(c byte) bool {
	_, ok := hexDigit(c)
	return ok
}

// decodeRun decodes a run, or says it is not text.
func decodeRun(run string, kind int) (string, bool) {
	var b []byte
	switch kind {
	case runPercent:
		b = make([]byte, 0, len(run))
		for i := 0; i < len(run); i++ {
			if run[i] == '%' && i+2 < len(run) && isHex(run[i+1]) && isHex(run[i+2]) {
				v, _ := hexValue(run, i+1, 2)
				b = append(b, byte(v))
				i += 2
				continue
			}
			b = append(b, run[i])
		}
	default:
		data := run
		for len(data) > 0 && data[len(data)-1] == '=' {
			data = data[:len(data)-1]
		}
		allHex := len(data)%2 == 0
		for i := 0; allHex && i < len(data); i++ {
			allHex = isHex(data[i])
		}
		var err error
		switch {
		case allHex:
			b, err = hex.DecodeString(data)
		case containsAny(data, "-_"):
			b, err = base64.RawURLEncoding.DecodeString(data)
		default:
			b, err = base64.RawStdEncoding.DecodeString(data)
		}
		if err != nil {
			return "", false
		}
	}
	if !isText(b) {
		return "", false
	}
	return string(b), true
}

func containsAny(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		for j := 0; j < len(chars); j++ {
			if s[i] == chars[j] {
				return true
			}
		}
	}
	return false
}

// isText reports whether b is UTF-8 of which at least nine characters in
// ten are printable or white space.
func isText(b []byte) bool {
	if len(b) == 0 || !utf8.Valid(b) {
		return false
	}
	n, bad := 0, 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		n++
		if !unicode.IsPrint(r) && !unicode.IsSpace(r) {
			bad++
		}
	}
	return bad*10 <= n
}
