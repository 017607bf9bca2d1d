package pdk

import (
	"context"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

type wcIn struct {
	Text string `json:"text" jsonschema:"the text to count"`
}
type wcOut struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Chars int `json:"chars"`
}

// BenchmarkCallWordCount measures the PDK's own share of a call natively:
// parsing the call document, checking and decoding the arguments, running
// word_count and writing the result document. In a guest the same work
// runs several times slower, so it is most of a reused Go instance's call
// (pdk/conformance's BenchmarkWordCount/go/reuse).
func BenchmarkCallWordCount(b *testing.B) {
	old := tools
	tools = []*Tool{NewTool("word_count", "c", func(_ context.Context, in wcIn) (wcOut, error) {
		return wcOut{len(strings.FieldsFunc(in.Text, unicode.IsSpace)), strings.Count(in.Text, "\n"), utf8.RuneCountInString(in.Text)}, nil
	})}
	defer func() { tools = old }()
	in := []byte(`{"params":{"name":"word_count","arguments":{"text":"The quick brown fox jumps over the lazy dog.\nΓαζέες καὶ μυρτιὲς δὲν θὰ βρῶ πιὰ στὸ χρυσαφὶ ξέφωτο."}}}`)
	b.ReportAllocs()
	for b.Loop() {
		Call(in)
	}
}
