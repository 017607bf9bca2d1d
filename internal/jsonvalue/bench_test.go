package jsonvalue

import (
	"strings"
	"testing"
)

// The strings a call's documents are made of: a long plain text (the 64
// KiB warm-call argument), JSON quoted in a text (an escape every few
// bytes), and keys.
var (
	benchLong  = []byte(`"` + strings.Repeat("x", 64<<10) + `"`)
	benchDense = []byte(`"` + strings.Repeat(`\"key\":\"value\",`, 4<<10) + `"`)
	benchKeys  = [][]byte{[]byte(`"type"`), []byte(`"text"`), []byte(`"structuredContent"`), []byte(`"The quick brown fox jumps over the lazy dog."`)}
)

func benchStr(b *testing.B, decode bool, toks ...[]byte) {
	n := 0
	for _, t := range toks {
		n += len(t)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range toks {
			s := NewScanner(t)
			raw, verbatim, ok := s.Str()
			if !ok || decode && len(Unquote(raw, verbatim)) == 0 {
				b.Fatal("rejected")
			}
		}
	}
}

// BenchmarkStr: reading string tokens (the check of every string of a
// call's arguments and result).
func BenchmarkStr(b *testing.B) {
	b.Run("long", func(b *testing.B) { benchStr(b, false, benchLong) })
	b.Run("dense", func(b *testing.B) { benchStr(b, false, benchDense) })
	b.Run("keys", func(b *testing.B) { benchStr(b, false, benchKeys...) })
}

// BenchmarkUnquote: reading and decoding them (a result's text), a copy
// of the string included.
func BenchmarkUnquote(b *testing.B) {
	b.Run("long", func(b *testing.B) { benchStr(b, true, benchLong) })
	b.Run("dense", func(b *testing.B) { benchStr(b, true, benchDense) })
	b.Run("keys", func(b *testing.B) { benchStr(b, true, benchKeys...) })
}
