// Package textfold folds text to what a reader takes it for, so a check
// written against plain ASCII also sees its disguised spellings:
//
//	f, m := textfold.Fold("pass\u200bw\u043erd")  // f == "password"
//	start, end := m.Span(0, len(f))                // the whole original
//
// The fold of a text, character by character:
//
//   - a character reference or escape stands for the character it encodes:
//     HTML (&#69; &#x45; &lt;), percent (%45, and %C3%A9 as one
//     character), \u0045 (a surrogate pair as one character), \u{45},
//     \U00000045, \x45, and \n \r \t \/. Decoding is one level deep: what
//     an escape encodes is folded, never decoded again;
//   - invisible characters are dropped: format characters (zero-width,
//     bidirectional controls, the soft hyphen), combining marks, variation
//     selectors, controls other than white space, Hangul fillers. The tag
//     characters U+E0020–E007E, invisible but read by models, become the
//     ASCII they shadow;
//   - compatibility forms become their plain characters (NFKD:
//     fullwidth, mathematical, circled, small, super- and subscript
//     letters, ligatures);
//   - every space that is not ASCII becomes ' ', every dash and minus '-',
//     look-alikes of the colon, slash, backslash, full stop and quotes
//     their ASCII, and the digits of every script ASCII digits;
//   - letters of other scripts and Latin variants that look like Latin
//     letters (Cyrillic, Greek, Armenian, Cherokee, Coptic, Lisu, small
//     capitals, letters with strokes, regional indicators) become those
//     letters.
//
// Case is kept (a key is case-sensitive): a caller that ignores case
// lower-cases the fold or matches without case. ASCII white space is kept
// as it is. A text of printable ASCII without escapes is its own fold, and
// Fold returns it without allocating.
package textfold

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Fold returns the fold of s and the map from its bytes back to s. The
// map is nil when the fold is s itself.
func Fold(s string) (string, *Map) {
	i := firstChange(s)
	if i < 0 {
		return s, nil
	}
	b := make([]byte, i, len(s)+8)
	copy(b, s[:i])
	m := &Map{start: make([]int32, i, cap(b)), end: make([]int32, i, cap(b))}
	for k := range i {
		m.start[k], m.end[k] = int32(k), int32(k+1)
	}
	for i < len(s) {
		r, n := Next(s[i:])
		before := len(b)
		b = AppendRune(b, r)
		for range len(b) - before {
			m.start = append(m.start, int32(i))
			m.end = append(m.end, int32(i+n))
		}
		i += n
	}
	m.n = len(s)
	return string(b), m
}

// Map maps the bytes of a fold back to the text it was folded from.
type Map struct {
	start, end []int32 // per byte of the fold: the original it came from
	n          int     // the length of the original
}

// Span returns the bytes [start, end) of the original text that the bytes
// [i, j) of the fold came from: whole characters and escapes, never part
// of one. An empty [i, i) maps to an empty span where byte i came from.
func (m *Map) Span(i, j int) (start, end int) {
	if i >= len(m.start) {
		return m.n, m.n
	}
	if j <= i {
		return int(m.start[i]), int(m.start[i])
	}
	return int(m.start[i]), int(m.end[j-1])
}

// firstChange returns the index of the first byte of s from which the fold
// may differ from s, or -1 when s is its own fold.
func firstChange(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			return i
		case c < ' ' || c == 0x7f:
			if !asciiSpace(c) {
				return i
			}
		case c == '&' || c == '%' || c == '\\':
			if _, n := escape(s[i:]); n > 0 {
				return i
			}
		}
	}
	return -1
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// Next returns the character s starts with and the number of bytes it
// takes: the character an escape or reference at the start of s encodes,
// or the character itself (utf8.RuneError and 1 for a byte that is not
// UTF-8). s must not be empty.
func Next(s string) (rune, int) {
	c := s[0]
	if c < utf8.RuneSelf {
		if c == '&' || c == '%' || c == '\\' {
			if r, n := escape(s); n > 0 {
				return r, n
			}
		}
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s)
}

// AppendRune appends the fold of r to dst (nothing for an invisible
// character).
func AppendRune(dst []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		return appendASCII(dst, byte(r))
	}
	if s, ok := lookalike(r); ok {
		return append(dst, s...)
	}
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	if d := norm.NFKD.Properties(buf[:n]).Decomposition(); d != nil {
		for len(d) > 0 {
			c, k := utf8.DecodeRune(d)
			d = d[k:]
			dst = appendBase(dst, c)
		}
		return dst
	}
	return appendBase(dst, r)
}

func appendASCII(dst []byte, c byte) []byte {
	if (c < ' ' || c == 0x7f) && !asciiSpace(c) {
		return dst
	}
	return append(dst, c)
}

// appendBase folds a character that decomposes no further.
func appendBase(dst []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		return appendASCII(dst, byte(r))
	}
	if s, ok := lookalike(r); ok {
		return append(dst, s...)
	}
	switch {
	case isSpace(r):
		return append(dst, ' ')
	case invisible(r):
		return dst
	case isDash(r):
		return append(dst, '-')
	case unicode.Is(unicode.Nd, r):
		return append(dst, byte('0'+digitValue(r)))
	}
	return utf8.AppendRune(dst, r)
}

// IsInvisible reports whether r folds to nothing: a character a reader
// does not see.
func IsInvisible(r rune) bool {
	if r < utf8.RuneSelf {
		return (r < ' ' || r == 0x7f) && !asciiSpace(byte(r))
	}
	if _, ok := lookalike(r); ok {
		return false
	}
	return !isSpace(r) && invisible(r)
}

func isSpace(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Zs, r) || r == 0x2800 // braille blank
}

// invisible: format characters, marks, controls, the tag block beyond the
// characters that shadow ASCII, and the fillers that render as nothing.
func invisible(r rune) bool {
	switch {
	case unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me, unicode.Mc, unicode.Cc):
		return true
	case r >= 0xE0000 && r <= 0xE0FFF, r >= 0xFFF0 && r <= 0xFFF8:
		return true
	}
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2065:
		return true
	}
	return false
}

func isDash(r rune) bool {
	switch r {
	case 0x2212, 0x2043, 0x02D7, 0x2796, 0x2E3A, 0x2E3B, 0x10EAD:
		return true
	}
	return unicode.Is(unicode.Pd, r)
}

// digitValue returns the value of a decimal digit (category Nd): every
// script's digits come in runs of ten from zero.
func digitValue(r rune) int {
	for _, rg := range unicode.Nd.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return 0
}

// lookalike returns what r is read as when that is not its compatibility
// decomposition: a Latin letter it looks like, ASCII punctuation, or the
// ASCII a tag character shadows.
func lookalike(r rune) (string, bool) {
	switch {
	case r >= 0xE0020 && r <= 0xE007E: // tag characters
		return asciiStrings[r-0xE0000], true
	case r >= 0x1F1E6 && r <= 0x1F1FF: // regional indicators
		return asciiStrings['A'+r-0x1F1E6], true
	case r >= 0x1F150 && r <= 0x1F169: // negative circled capitals
		return asciiStrings['A'+r-0x1F150], true
	case r >= 0x1F170 && r <= 0x1F189: // negative squared capitals
		return asciiStrings['A'+r-0x1F170], true
	}
	if s, ok := lookalikes[r]; ok {
		return s, true
	}
	// Cherokee small letters look like their capitals.
	if (r >= 0xAB70 && r <= 0xABBF) || (r >= 0x13F8 && r <= 0x13FD) {
		s, ok := lookalikes[unicode.ToUpper(r)]
		return s, ok
	}
	return "", false
}

var asciiStrings = func() (t [128]string) {
	for i := range t {
		t[i] = string(rune(i))
	}
	return t
}()

// lookalikes: pairs "XY" (X is read as the ASCII Y) separated by spaces;
// Y may be longer than one character.
var lookalikes = func() map[rune]string {
	m := map[rune]string{}
	for _, pair := range strings.Fields(lookalikeTable) {
		r, n := utf8.DecodeRuneInString(pair)
		m[r] = pair[n:]
	}
	return m
}()

const lookalikeTable = `` +
	// Cyrillic
	`АA ВB СC ЕE НH ІI ЈJ КK МM ОO РP ЅS ТT ХX УY ҮY ԚQ ԜW ӀI ҺH ԌG ѴV ЬB ЄE ` +
	`аa сc еe оo рp ѕs хx уy үy іi јj ԛq ԝw ӏl һh ԁd ѵv ьb вb нh тt кk мm пn гr шw єe ` +
	// Greek
	`ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX ϹC ͿJ ϜF ` +
	`αa βb γy δd εe ηn ιi κk μu νv οo ρp σo τt υu χx ωw ϲc ϳj ` +
	// Armenian
	`ՕO ՍU ՏS ԼL օo սu ցg ոn հh զq աw քp յj ռn ` +
	// Cherokee
	`ᎪA ᏴB ᏟC ᎠD ᎬE ᏀG ᎻH ᎥI ᎫJ ᏦK ᏞL ᎷM ᏢP ᎡR ᏚS ᎢT ᏙV ᎳW ᏃZ ` +
	// Coptic
	`ⲀA ⲂB ⲈE ⲌZ ⲎH ⲒI ⲔK ⲘM ⲚN ⲞO ⲢP ⲤC ⲦT ⲨY ⲬX ` +
	`ⲁa ⲃb ⲉe ⲓi ⲕk ⲙm ⲛn ⲟo ⲣp ⲥc ⲧt ⲩy ⲭx ` +
	// Lisu
	`ꓮA ꓐB ꓚC ꓓD ꓰE ꓝF ꓖG ꓧH ꓲI ꓙJ ꓗK ꓡL ꓟM ꓠN ꓳO ꓑP ꓣR ꓢS ꓔT ꓴU ꓦV ꓪW ꓫX ꓬY ꓜZ ` +
	// Latin small capitals and IPA letters
	`ᴀA ʙB ᴄC ᴅD ᴇE ꜰF ɢG ʜH ɪI ᴊJ ᴋK ʟL ᴍM ɴN ᴏO ᴘP ʀR ꜱS ᴛT ᴜU ᴠV ᴡW ʏY ᴢZ ` +
	`ɑa ɡg ıi ȷj ɩi ǀl ɾr ʋv ɛe ɵo ꬲe ᴎN ` +
	// Latin letters with strokes and hooks, ligatures NFKD leaves alone
	`łl ŁL øo ØO đd ĐD ðd ÐD ħh ĦH ŧt ŦT ƀb ɃB ɨi ƗI ʉu ɄU ƶz ƵZ ǥg ǤG ɇe ɆE ȼc ȻC ` +
	`ɍr ɌR ɏy ɎY ƒf ƑF ɓb ƁB ɗd ƊD ƙk ƘK ƈc ƇC ɠg ƓG ɲn ƝN ƥp ƤP ƭt ƬT ȥz ȤZ ɱm ɳn ` +
	`ɽr ʂs ʈt ʐz ᵽp ⱣP ɫl ⱢL ɬl ɭl ȴl ȵn ȶt ꝁk ꝀK ɦh ʠq ƴy ƳY ŋn ŊN ` +
	`ßss ẞSS æae ÆAE œoe ŒOE ` +
	// punctuation
	`∶: ꞉: ː: ˸: ׃: ։: ᠄: ⁚: ᛬: ܃: ܄: ` +
	`∕/ ⁄/ ⧸/ ╱/ 〳/ ⟋/ ∖\ ⧵\ ⧹\ ╲\ ` +
	`。. ·. ‧. ‘' ’' ‛' ′' “" ”" ‟" ″"`

// escape decodes the escape or character reference s starts with; n is 0
// when s does not start with one.
func escape(s string) (rune, int) {
	if len(s) < 2 {
		return 0, 0
	}
	switch s[0] {
	case '&':
		return htmlRef(s)
	case '%':
		return utf8Escape(s, '%', 0)
	case '\\':
		switch s[1] {
		case 'u':
			return unicodeEscape(s)
		case 'U':
			if v, ok := hexValue(s, 2, 8); ok {
				return validRune(v, 10)
			}
		case 'x':
			return utf8Escape(s, '\\', 'x')
		case 'n':
			return '\n', 2
		case 'r':
			return '\r', 2
		case 't':
			return '\t', 2
		case '/':
			return '/', 2
		}
	}
	return 0, 0
}

func validRune(v uint32, n int) (rune, int) {
	if v == 0 || v > unicode.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
		return 0, 0
	}
	return rune(v), n
}

// hexValue reads the n hex digits at s[i:].
func hexValue(s string, i, n int) (uint32, bool) {
	if len(s) < i+n {
		return 0, false
	}
	var v uint32
	for _, c := range []byte(s[i : i+n]) {
		d, ok := hexDigit(c)
		if !ok {
			return 0, false
		}
		v = v<<4 | uint32(d)
	}
	return v, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// unicodeEscape decodes \uXXXX (a surrogate pair as one character) and
// \u{X…}.
func unicodeEscape(s string) (rune, int) {
	if len(s) > 3 && s[2] == '{' {
		end := strings.IndexByte(s[3:min(len(s), 10)], '}')
		if end < 1 {
			return 0, 0
		}
		v, ok := hexValue(s, 3, end)
		if !ok {
			return 0, 0
		}
		return validRune(v, 3+end+1)
	}
	v, ok := hexValue(s, 2, 4)
	if !ok {
		return 0, 0
	}
	if v >= 0xD800 && v < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if lo, ok := hexValue(s, 8, 4); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return validRune(0x10000+(v-0xD800)<<10+(lo-0xDC00), 12)
		}
	}
	return validRune(v, 6)
}

// utf8Escape decodes a character written as escaped bytes: %HH or \xHH,
// a character beyond ASCII as its UTF-8 bytes each escaped (%C3%A9).
func utf8Escape(s string, lead, tag byte) (rune, int) {
	width := 3
	if tag != 0 {
		width = 4
	}
	var b [utf8.UTFMax]byte
	k := 0
	for i := 0; k < utf8.UTFMax && i+width <= len(s) && s[i] == lead && (tag == 0 || s[i+1] == tag); i += width {
		v, ok := hexValue(s, i+width-2, 2)
		if !ok {
			break
		}
		b[k] = byte(v)
		k++
		if b[0] < utf8.RuneSelf {
			break
		}
		if utf8.FullRune(b[:k]) {
			break
		}
	}
	if k == 0 {
		return 0, 0
	}
	r, size := utf8.DecodeRune(b[:k])
	if r == utf8.RuneError || size != k || r == 0 {
		return 0, 0
	}
	return r, k * width
}

// htmlRef decodes a numeric character reference (the semicolon may be
// left out, as browsers allow) or a named one of htmlNames.
func htmlRef(s string) (rune, int) {
	if s[1] == '#' {
		i, base := 2, uint32(10)
		if len(s) > 2 && (s[2] == 'x' || s[2] == 'X') {
			i, base = 3, 16
		}
		var v uint32
		j := i
		for ; j < len(s) && j-i < 8; j++ {
			d, ok := hexDigit(s[j])
			if !ok || uint32(d) >= base {
				break
			}
			v = v*base + uint32(d)
		}
		if j == i || j-i == 8 {
			return 0, 0
		}
		if j < len(s) && s[j] == ';' {
			j++
		}
		return validRune(v, j)
	}
	end := strings.IndexByte(s[1:min(len(s), 12)], ';')
	if end < 1 {
		return 0, 0
	}
	r, ok := htmlNames[s[1:1+end]]
	if !ok {
		return 0, 0
	}
	return r, end + 2
}

// htmlNames are the named references of punctuation, spaces and
// invisibles a disguise may use (a letter is written &#NN;).
var htmlNames = map[string]rune{
	"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\'', "nbsp": 0xA0,
	"lsqb": '[', "rsqb": ']', "lbrack": '[', "rbrack": ']', "lpar": '(', "rpar": ')',
	"lcub": '{', "rcub": '}', "lbrace": '{', "rbrace": '}', "sol": '/', "bsol": '\\',
	"colon": ':', "semi": ';', "comma": ',', "period": '.', "excl": '!', "quest": '?',
	"num": '#', "dollar": '$', "percnt": '%', "commat": '@', "ast": '*', "plus": '+',
	"equals": '=', "lowbar": '_', "hyphen": 0x2010, "dash": 0x2010, "ndash": 0x2013,
	"mdash": 0x2014, "minus": 0x2212, "verbar": '|', "vert": '|', "grave": '`', "Hat": '^',
	"shy": 0xAD, "zwj": 0x200D, "zwnj": 0x200C, "lrm": 0x200E, "rlm": 0x200F,
	"ensp": 0x2002, "emsp": 0x2003, "thinsp": 0x2009, "Tab": '\t', "NewLine": '\n',
	"middot": 0xB7, "lsquo": 0x2018, "rsquo": 0x2019, "ldquo": 0x201C, "rdquo": 0x201D,
	"ZeroWidthSpace": 0x200B, "NegativeVeryThinSpace": 0x200B, "NegativeThinSpace": 0x200B,
	"NegativeMediumSpace": 0x200B, "NegativeThickSpace": 0x200B, "NoBreak": 0x2060,
	"af": 0x2061, "ApplyFunction": 0x2061, "it": 0x2062, "InvisibleTimes": 0x2062,
	"ic": 0x2063, "InvisibleComma": 0x2063, "NonBreakingSpace": 0xA0, "ThinSpace": 0x2009,
	"hairsp": 0x200A, "VeryThinSpace": 0x200A, "MediumSpace": 0x205F, "numsp": 0x2007, "puncsp": 0x2008,
}
