package jsonvalue

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is encoding/json's nesting limit, which Scanner keeps too.
const MaxDepth = 10000

// Scanner is a single-pass JSON scanner, for the two documents every
// sandboxed call handles: the arguments (checked to be a JSON object when
// the tool's schema asks for nothing more) and the module's result.
// encoding/json scans a document two or three times before decoding it,
// which for a 64 KiB result costs more than running the tool; this
// scanner validates while it reads, 8 bytes at a time inside short
// strings and with bytes.IndexByte inside long ones (see Str). It
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

// Object skips an object, calling field (when not nil) for each key (its
// raw contents and whether they are verbatim, as Str reports them) with
// the scanner at the key's value; field must consume the value.
func (s *Scanner) Object(field func(key []byte, verbatim bool) bool) bool {
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
		key, verbatim, ok := s.Str()
		if !ok || s.Peek() != ':' {
			return false
		}
		s.p++
		if field != nil {
			if !field(key, verbatim) {
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

// special reports whether any of the 8 bytes of x needs a look: a quote,
// a backslash or a control character.
func special(x uint64) bool {
	quote := x ^ (ones * '"')
	backslash := x ^ (ones * '\\')
	zeroQuote := (quote - ones) &^ quote
	zeroBackslash := (backslash - ones) &^ backslash
	control := (x - ones*0x20) &^ x
	return (zeroQuote|zeroBackslash|control)&highs != 0
}

// plainRun reports whether b, a run of a string with no quote and no
// backslash in it, holds no control character (which JSON forbids in a
// string), and whether it is all ASCII. It reads 32 bytes at a time and
// branches once a run.
func plainRun(b []byte) (valid, ascii bool) {
	// Each word's (x - 0x20…) &^ x has a high bit set exactly when one of
	// its bytes is below 0x20; x itself has one set for a non-ASCII byte.
	var ctrl, high uint64
	for len(b) >= 32 {
		w := (*[32]byte)(b)
		x0 := binary.NativeEndian.Uint64(w[0:8])
		x1 := binary.NativeEndian.Uint64(w[8:16])
		x2 := binary.NativeEndian.Uint64(w[16:24])
		x3 := binary.NativeEndian.Uint64(w[24:32])
		ctrl |= (x0-ones*0x20)&^x0 | (x1-ones*0x20)&^x1 | (x2-ones*0x20)&^x2 | (x3-ones*0x20)&^x3
		high |= x0 | x1 | x2 | x3
		b = b[32:]
	}
	for len(b) >= 8 {
		x := binary.NativeEndian.Uint64(b)
		ctrl |= (x - ones*0x20) &^ x
		high |= x
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return false, false
		}
		high |= uint64(c)
	}
	return ctrl&highs == 0, high&highs == 0
}

func isHex(c byte) bool { return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'f' }

// longRun is how many bytes of a run (the bytes of a string between its
// start or an escape and the next quote or backslash) Str reads a word at
// a time before it looks for the run's end with bytes.IndexByte, which
// costs more than the words for a key, a short value or a run between two
// escapes, and much less for a long text.
const longRun = 64

// Str reads a string token, returning its raw contents (between the
// quotes) and whether they are verbatim: no escapes and only ASCII, so
// the contents are the string itself with no decoding or UTF-8 check.
//
// wordScan reads the string a word at a time; the end of a long run is
// found by runEnd with bytes.IndexByte (vector instructions on most
// platforms). Each byte is searched once for each: a backslash is looked
// for only up to the next quote, and a quote found stays found until an
// escape passes it, so a document of many strings and escapes costs no
// more than its length.
func (s *Scanner) Str() (raw []byte, verbatim, ok bool) {
	b := s.b
	start := s.p + 1
	p, quote := start, -1
	var (
		w     wordState
		ascii bool
	)
	w.run = start
	for {
		switch p, w = wordScan(b, p, w); w.step {
		case stepEnd:
			s.p = p + 1
			return b[start:p], !w.escaped && w.high&highs == 0, true
		case stepBad:
			return nil, false, false
		}
		if p, quote, ascii, ok = s.runEnd(p, quote); !ok {
			return nil, false, false
		}
		if !ascii {
			w.high |= highs
		}
		w.run = p
	}
}

// wordState is what wordScan knows of the string it reads.
type wordState struct {
	run     int    // where the current run began
	high    uint64 // the bytes read, ORed: a high bit set for non-ASCII
	escaped bool
	step    int // why wordScan returned
}

// Why wordScan returned.
const (
	stepEnd  = iota // at the closing quote
	stepLong        // in a run of longRun bytes or more
	stepBad         // at a byte the string may not hold
)

// wordScan reads the contents of a string from p, 8 bytes at a time
// where they need no look, until the closing quote, an error, or a run of
// longRun bytes. It calls nothing, so the compiler keeps its loop in
// registers.
func wordScan(b []byte, p int, w wordState) (int, wordState) {
	for {
		for len(b)-p >= 8 && p-w.run < longRun {
			x := binary.NativeEndian.Uint64(b[p:])
			if special(x) {
				break
			}
			w.high |= x
			p += 8
		}
		if p-w.run >= longRun {
			w.step = stepLong
			return p, w
		}
		if p >= len(b) {
			w.step = stepBad
			return p, w
		}
		switch c := b[p]; {
		case c == '"':
			w.step = stepEnd
			return p, w
		case c == '\\':
			w.escaped = true
			if p+1 >= len(b) {
				w.step = stepBad
				return p, w
			}
			switch b[p+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p += 2
			case 'u':
				if len(b)-p < 6 || !isHex(b[p+2]) || !isHex(b[p+3]) || !isHex(b[p+4]) || !isHex(b[p+5]) {
					w.step = stepBad
					return p, w
				}
				p += 6
			default:
				w.step = stepBad
				return p, w
			}
			w.run = p
		case c < 0x20:
			w.step = stepBad
			return p, w
		default:
			w.high |= uint64(c)
			p++
		}
	}
}

// runEnd returns the end of the run at p of a string: the position of
// the next quote or backslash, found with bytes.IndexByte, after checking
// the bytes before it with plainRun, and whether they are ASCII. quote is
// the position of the next quote when it is known to be at or after p,
// and is returned updated.
func (s *Scanner) runEnd(p, quote int) (end, nextQuote int, ascii, ok bool) {
	b := s.b
	if quote < p {
		i := bytes.IndexByte(b[p:], '"')
		if i < 0 {
			return 0, 0, false, false
		}
		quote = p + i
	}
	end = quote
	if i := bytes.IndexByte(b[p:quote], '\\'); i >= 0 {
		end = p + i
	}
	ok, ascii = plainRun(b[p:end])
	return end, quote, ascii, ok
}

// Unquote returns the Go string a string token's raw contents decode to, as
// encoding/json decodes it: escapes resolved, unpaired surrogates and
// invalid UTF-8 replaced by U+FFFD. verbatim is Str's report.
func Unquote(raw []byte, verbatim bool) string {
	if verbatim {
		return string(raw)
	}
	run := bytes.IndexByte(raw, '\\')
	if run < 0 && utf8.Valid(raw) {
		return string(raw)
	}
	// A Builder's buffer is not zeroed before it is written: for a long
	// text that saves a pass over it.
	var out strings.Builder
	out.Grow(len(raw))
	for {
		// Copy up to the next escape in one go when it is valid UTF-8.
		if run < 0 {
			run = len(raw)
		}
		appendUTF8(&out, raw[:run])
		raw = raw[run:]
		if len(raw) == 0 {
			break
		}
		switch e := raw[1]; e {
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 't':
			out.WriteByte('\t')
		case 'u':
			r := hex4(raw[2:])
			raw = raw[6:]
			if utf16.IsSurrogate(r) {
				var r2 rune = -1
				if len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u' {
					r2 = hex4(raw[2:])
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					out.WriteRune(d)
					raw = raw[6:]
					run = bytes.IndexByte(raw, '\\')
					continue
				}
				r = utf8.RuneError
			}
			out.WriteRune(r)
			run = bytes.IndexByte(raw, '\\')
			continue
		default: // " \ /
			out.WriteByte(e)
		}
		raw = raw[2:]
		run = bytes.IndexByte(raw, '\\')
	}
	return out.String()
}

// appendUTF8 appends s, replacing each byte that is not part of valid
// UTF-8 with U+FFFD.
func appendUTF8(out *strings.Builder, s []byte) {
	if utf8.Valid(s) {
		out.Write(s)
		return
	}
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			out.WriteRune(utf8.RuneError)
		} else {
			out.Write(s[:size])
		}
		s = s[size:]
	}
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
