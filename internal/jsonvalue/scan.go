package jsonvalue

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// MaxDepth is encoding/json's nesting limit, which Scanner keeps too.
const MaxDepth = 10000

// Scanner is a single-pass JSON scanner, for the two documents every
// sandboxed call handles: the arguments (checked to be a JSON object when
// the tool's schema asks for nothing more) and the module's result.
// encoding/json scans a document two or three times before decoding it,
// which for a 64 KiB result costs more than running the tool; this
// scanner validates while it reads, 8 bytes at a time inside strings. It
// accepts exactly what encoding/json accepts (fuzz tests compare the two),
// and the host's result decoder hands anything unusual (an error, a
// duplicate or differently-cased key) to encoding/json, so errors and edge
// cases read the same as before.
//
// A Scanner reads b from the start (NewScanner); each method reads what it
// names at the current position, reports whether it was valid JSON, and
// moves past it.
type Scanner struct {
	b     []byte
	p     int
	depth int
}

// NewScanner returns a Scanner at the start of b.
func NewScanner(b []byte) Scanner { return Scanner{b: b} }

// Pos returns the offset of the next byte to read.
func (s *Scanner) Pos() int { return s.p }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// WS skips white space.
func (s *Scanner) WS() {
	for s.p < len(s.b) && isSpace(s.b[s.p]) {
		s.p++
	}
}

// Peek returns the next byte after white space, 0 at the end.
func (s *Scanner) Peek() byte {
	s.WS()
	if s.p >= len(s.b) {
		return 0
	}
	return s.b[s.p]
}

// Value skips one JSON value, reporting whether it is valid.
func (s *Scanner) Value() bool {
	switch s.Peek() {
	case '{':
		return s.Object(nil)
	case '[':
		return s.Array(nil)
	case '"':
		_, _, ok := s.Str()
		return ok
	case 't':
		return s.Lit("true")
	case 'f':
		return s.Lit("false")
	case 'n':
		return s.Lit("null")
	default:
		return s.Num()
	}
}

// Object skips an object, calling field (when not nil) for each key with
// the scanner at the key's value; field must consume the value.
func (s *Scanner) Object(field func(key []byte, escaped bool) bool) bool {
	if s.depth++; s.depth > MaxDepth {
		return false
	}
	s.p++ // {
	if s.Peek() == '}' {
		s.p++
		s.depth--
		return true
	}
	for {
		if s.Peek() != '"' {
			return false
		}
		key, escaped, ok := s.Str()
		if !ok || s.Peek() != ':' {
			return false
		}
		s.p++
		if field != nil {
			if !field(key, escaped) {
				return false
			}
		} else if !s.Value() {
			return false
		}
		switch s.Peek() {
		case ',':
			s.p++
		case '}':
			s.p++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// Array skips an array, calling elem (when not nil) with the scanner at
// each element; elem must consume it.
func (s *Scanner) Array(elem func(i int) bool) bool {
	if s.depth++; s.depth > MaxDepth {
		return false
	}
	s.p++ // [
	if s.Peek() == ']' {
		s.p++
		s.depth--
		return true
	}
	for i := 0; ; i++ {
		if elem != nil {
			if !elem(i) {
				return false
			}
		} else if !s.Value() {
			return false
		}
		switch s.Peek() {
		case ',':
			s.p++
		case ']':
			s.p++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// Lit reads the literal word (true, false, null) at the current position.
func (s *Scanner) Lit(word string) bool {
	if len(s.b)-s.p < len(word) || string(s.b[s.p:s.p+len(word)]) != word {
		return false
	}
	s.p += len(word)
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Num skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *Scanner) Num() bool {
	b, p := s.b, s.p
	if p < len(b) && b[p] == '-' {
		p++
	}
	switch {
	case p < len(b) && b[p] == '0':
		p++
	case p < len(b) && b[p] >= '1' && b[p] <= '9':
		for p < len(b) && isDigit(b[p]) {
			p++
		}
	default:
		return false
	}
	if p < len(b) && b[p] == '.' {
		p++
		if p >= len(b) || !isDigit(b[p]) {
			return false
		}
		for p < len(b) && isDigit(b[p]) {
			p++
		}
	}
	if p < len(b) && (b[p] == 'e' || b[p] == 'E') {
		p++
		if p < len(b) && (b[p] == '+' || b[p] == '-') {
			p++
		}
		if p >= len(b) || !isDigit(b[p]) {
			return false
		}
		for p < len(b) && isDigit(b[p]) {
			p++
		}
	}
	s.p = p
	return true
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plain reports whether none of the 8 bytes of x needs a look: no quote,
// no backslash, no control character.
func plain(x uint64) bool {
	quote := x ^ (ones * '"')
	backslash := x ^ (ones * '\\')
	zeroQuote := (quote - ones) &^ quote
	zeroBackslash := (backslash - ones) &^ backslash
	control := (x - ones*0x20) &^ x
	return (zeroQuote|zeroBackslash|control)&highs == 0
}

func isHex(c byte) bool { return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'f' }

// Str reads a string token, returning its raw contents (between the
// quotes) and whether it holds escapes.
func (s *Scanner) Str() (raw []byte, escaped, ok bool) {
	b := s.b
	start := s.p + 1
	p := start
	for {
		for len(b)-p >= 8 && plain(binary.LittleEndian.Uint64(b[p:])) {
			p += 8
		}
		if p >= len(b) {
			return nil, false, false
		}
		switch c := b[p]; {
		case c == '"':
			s.p = p + 1
			return b[start:p], escaped, true
		case c == '\\':
			escaped = true
			if p+1 >= len(b) {
				return nil, false, false
			}
			switch b[p+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p += 2
			case 'u':
				if len(b)-p < 6 || !isHex(b[p+2]) || !isHex(b[p+3]) || !isHex(b[p+4]) || !isHex(b[p+5]) {
					return nil, false, false
				}
				p += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		default:
			p++
		}
	}
}

// Unquote returns the Go string a string token's raw contents decode to, as
// encoding/json decodes it: escapes resolved, unpaired surrogates and
// invalid UTF-8 replaced by U+FFFD.
func Unquote(raw []byte, escaped bool) string {
	if !escaped && utf8.Valid(raw) {
		return string(raw)
	}
	out := make([]byte, 0, len(raw))
	for len(raw) > 0 {
		// Copy up to the next escape in one go when it is valid UTF-8.
		run := bytes.IndexByte(raw, '\\')
		if run < 0 {
			run = len(raw)
		}
		out = appendUTF8(out, raw[:run])
		raw = raw[run:]
		if len(raw) == 0 {
			break
		}
		switch e := raw[1]; e {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[2:])
			raw = raw[6:]
			if utf16.IsSurrogate(r) {
				var r2 rune = -1
				if len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u' {
					r2 = hex4(raw[2:])
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					out = utf8.AppendRune(out, d)
					raw = raw[6:]
					continue
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // " \ /
			out = append(out, e)
		}
		raw = raw[2:]
	}
	// out is never written again: the string can share it.
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// appendUTF8 appends s, replacing each byte that is not part of valid
// UTF-8 with U+FFFD.
func appendUTF8(out, s []byte) []byte {
	if utf8.Valid(s) {
		return append(out, s...)
	}
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, s[:size]...)
		}
		s = s[size:]
	}
	return out
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// Valid reports whether b holds exactly one JSON value.
func Valid(b []byte) bool {
	s := Scanner{b: b}
	if !s.Value() {
		return false
	}
	s.WS()
	return s.p == len(b)
}

// IsObject reports whether b holds exactly one JSON object.
func IsObject(b []byte) bool {
	s := Scanner{b: b}
	return s.Peek() == '{' && Valid(b)
}
