package textfold

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Each disguise, written by hand, and what a reader takes it for.
var folds = []struct{ name, in, want string }{
	{"zero-width space", "pass\u200bword", "password"},
	{"zero-width joiner and non-joiner", "pa\u200dss\u200cword", "password"},
	{"word joiner and BOM", "pass\u2060wo\ufeffrd", "password"},
	{"soft hyphen", "pass\u00adword", "password"},
	{"bidi override and isolate", "\u202epass\u2066word\u2069", "password"},
	{"combining marks", "pa\u0301s\u0308s\u0336word", "password"},
	{"variation selector", "pas\ufe0fsword", "password"},
	{"Hangul filler", "pass\u3164word", "password"},
	{"tag characters", "\U000e0070\U000e0061\U000e0073\U000e0073", "pass"},
	{"fullwidth", "ｐａｓｓｗｏｒｄ：１２", "password:12"},
	{"mathematical bold", "𝐏𝐚𝐬𝐬", "Pass"},
	{"mathematical sans and script", "𝗽𝖺𝓈𝓈", "pass"},
	{"circled", "ⓟⓐⓢⓢ", "pass"},
	{"ligature", "ﬁle", "file"},
	{"superscript", "ᵖᵃˢˢ", "pass"},
	{"long s", "ſecret", "secret"},
	{"Kelvin sign", "\u212aey", "Key"},
	{"Cyrillic", "р\u0430ss\u0077\u043erd", "password"},
	{"Greek capitals", "ΕΧΤΕRΝΑL", "EXTERNAL"},
	{"Cherokee", "ᎬᏚᎢ", "EST"},
	{"Lisu", "ꓔꓮꓲꓠꓔ", "TAINT"},
	{"small capitals", "ᴛᴏᴋᴇɴ", "TOKEN"},
	{"dotless i", "taınt", "taint"},
	{"stroke letters", "łøđ", "lod"},
	{"regional indicators", "🇰🇪🇾", "KEY"},
	{"HTML decimal", "p&#97;ss", "pass"},
	{"HTML hex", "p&#x61;&#X73;s", "pass"},
	{"HTML without semicolon", "p&#97ss", "pass"},
	{"HTML named", "&lsqb;&sol;x&rsqb;&colon;&nbsp;", "[/x]: "},
	{"HTML of a look-alike", "&#x420;", "P"},
	{"percent", "p%61ss%20w", "pass w"},
	{"percent UTF-8", "caf%C3%A9%E2%80%8B!", "cafe!"},
	{"backslash u", `p\u0061ss`, "pass"},
	{"backslash surrogate pair", `\ud835\udc00`, "A"},
	{"backslash u braces and U", `\u{61}\U00000062`, "ab"},
	{"backslash x", `\x61\xc3\xa9`, "ae"},
	{"escaped controls", `a\nb\/c`, "a\nb/c"},
	{"one level of decoding", "%26#97;", "&#97;"},
	{"spaces", "a\u00a0b\u2003c\u3000d\u2028e\u2800f", "a b c d e f"},
	{"dashes", "a\u2010b\u2014c\u2212d\u2e3ae\ufe63f", "a-b-c-d-e-f"},
	{"digits of other scripts", "٤١١١ ۴ ४ ４ 𝟒", "4111 4 4 4 4"},
	{"colon and slash look-alikes", "a\u2236b\ua789c\u2215d\u2044e", "a:b:c/d/e"},
	{"full stops and quotes", "a\u3002b\uff61c \u201cq\u201d", "a.b.c \"q\""},
	{"controls dropped, white space kept", "a\x00b\x07c\td\ne\r\x7f", "abc\td\ne\r"},
	{"sharp s", "Straße", "Strasse"},
}

func TestFold(t *testing.T) {
	for _, c := range folds {
		got, m := Fold(c.in)
		if got != c.want {
			t.Errorf("%s: Fold(%+q) = %+q, want %+q", c.name, c.in, got, c.want)
		}
		if m == nil {
			t.Errorf("%s: no map for a changed text", c.name)
		}
	}
}

// Text that is its own fold comes back as it is, without a map and
// without allocating; escapes that do not decode are text.
func TestFoldKeepsPlainText(t *testing.T) {
	for _, s := range []string{
		"",
		"plain text\nwith\ttabs, 100% sure & a\\b path C:\\dir\\file",
		"%zz %4 &#; &#xZZ; &#x; &unknown; &amp \\u12 \\u{} \\U0001 \\x4 \\q",
		"&#0; &#xD800; &#x110000; %00 \\u0000 &#12345678;",
		"a UUID 123e4567-e89b-12d3-a456-426614174000, a hash 9f86d081884c7d659a2feaa0c55ad015",
	} {
		got, m := Fold(s)
		if got != s || m != nil {
			t.Errorf("Fold(%q) = %q, %v; want it unchanged, no map", s, got, m)
		}
	}
	s := strings.Repeat("An ordinary sentence, 42 times. ", 64)
	if n := testing.AllocsPerRun(20, func() { Fold(s) }); n != 0 {
		t.Errorf("Fold of plain ASCII allocates %v times", n)
	}
}

// The map gives back whole characters and escapes.
func TestFoldMap(t *testing.T) {
	s := "x\u200bpa&#115;s\u0301!"
	f, m := Fold(s)
	if f != "xpass!" {
		t.Fatalf("fold = %q", f)
	}
	for _, c := range []struct {
		i, j int
		want string
	}{
		{0, 1, "x"},
		{1, 5, "pa&#115;s"}, // a mark after the last byte folds to nothing: no byte of the fold comes from it
		{3, 4, "&#115;"},
		{5, 6, "!"},
		{0, 6, s},
	} {
		a, b := m.Span(c.i, c.j)
		if got := s[a:b]; got != c.want {
			t.Errorf("Span(%d, %d) = %q, want %q", c.i, c.j, got, c.want)
		}
	}
	if a, b := m.Span(6, 6); a != len(s) || b != len(s) {
		t.Errorf("Span at the end = %d, %d", a, b)
	}
	f2, m2 := Fold("ﬁ")
	if a, b := m2.Span(1, 2); f2 != "fi" || a != 0 || b != len("ﬁ") {
		t.Errorf("half a ligature maps to %d, %d, want the whole ligature", a, b)
	}
}

func TestIsInvisible(t *testing.T) {
	for _, r := range []rune{0, 7, 0x200b, 0x200d, 0x202e, 0xfeff, 0x301, 0xfe0f, 0xe0001, 0xe007f, 0x3164, 0xad} {
		if !IsInvisible(r) {
			t.Errorf("%U is not invisible", r)
		}
	}
	for _, r := range []rune{' ', '\n', 'a', 0xa0, 0x2003, 0xe0061, 0x430} {
		if IsInvisible(r) {
			t.Errorf("%U is invisible", r)
		}
	}
}

func FuzzFold(f *testing.F) {
	for _, c := range folds {
		f.Add(c.in)
	}
	f.Add("%E2%80%8B%F0%9F%98%80\\ud83d\\ude00&#x1F600;")
	f.Fuzz(func(t *testing.T, s string) {
		got, m := Fold(s)
		if m == nil {
			if got != s {
				t.Fatalf("no map, yet %q folds to %q", s, got)
			}
			return
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("%+q folds to invalid UTF-8 %+q", s, got)
		}
		if len(m.start) != len(got) || len(m.end) != len(got) {
			t.Fatalf("map of %d bytes for a fold of %d", len(m.start), len(got))
		}
		prev := 0
		for i := range got {
			a, b := m.Span(i, i+1)
			if a < prev || a >= b || b > len(s) {
				t.Fatalf("byte %d of %+q maps to [%d, %d) after %d", i, got, a, b, prev)
			}
			prev = a
		}
		for _, r := range got {
			if IsInvisible(r) {
				t.Fatalf("%+q folds to %+q, which holds the invisible %U", s, got, r)
			}
		}
	})
}

func TestEncodedRuns(t *testing.T) {
	for _, c := range []struct{ in, run, text string }{
		{"token QWxhZGRpbjpvcGVuIHNlc2FtZQ== end", "QWxhZGRpbjpvcGVuIHNlc2FtZQ==", "Aladdin:open sesame"},
		{"id=YWRhQGV4YW1wbGUub3JnP3g_eQ&z", "YWRhQGV4YW1wbGUub3JnP3g_eQ", "ada@example.org?x?y"},
		{`{"v":"6164614065786d706c652e6f7267"}`, "6164614065786d706c652e6f7267", "ada@exmple.org"},
		{"mail ada%40example.org now", "ada%40example.org", "ada@example.org"},
		{"twice ada%2540example.org", "ada%2540example.org", "ada%40example.org"},
		{"p%C3%A9%20x", "p%C3%A9%20x", "pé x"},
	} {
		var got []EncodedRun
		for r := range EncodedRuns(c.in) {
			got = append(got, r)
		}
		if len(got) != 1 || c.in[got[0].Start:got[0].End] != c.run || got[0].Text != c.text {
			t.Errorf("EncodedRuns(%q) = %+v, want %q → %q", c.in, got, c.run, c.text)
		}
	}
	for _, s := range []string{
		"short QWxhZGRpbg== runs",
		"a hash 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 in hex",
		"and n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg= in base64",
		"a UUID 123e4567-e89b-12d3-a456-426614174000",
		"internationalization and counterrevolutionaries, the longest words",
		"100% sure, 50%off",
	} {
		for r := range EncodedRuns(s) {
			t.Errorf("EncodedRuns(%q) found %q → %q", s, s[r.Start:r.End], r.Text)
		}
	}
}

func FuzzEncodedRuns(f *testing.F) {
	f.Add("token QWxhZGRpbjpvcGVuIHNlc2FtZQ== end ada%2540example.org 616461406578616d706c652e6f7267")
	f.Add("%E2%80%8B%zz%4 =====QWxh----____++++////")
	f.Fuzz(func(t *testing.T, s string) {
		prev := 0
		for r := range EncodedRuns(s) {
			if r.Start < prev || r.Start >= r.End || r.End > len(s) {
				t.Fatalf("run [%d, %d) after %d in a text of %d", r.Start, r.End, prev, len(s))
			}
			if !utf8.ValidString(r.Text) || len(r.Text) > r.End-r.Start {
				t.Fatalf("run %q decodes to %q", s[r.Start:r.End], r.Text)
			}
			prev = r.End
		}
	})
}
