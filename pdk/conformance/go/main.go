// Command word_count is the conformance tool of the Go PDK: it counts the
// words, lines and characters of a text as pdk/conformance/SPEC.md defines.
package main

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	pdk "github.com/autoagent-go/autoagent/pdk/go"
)

// Input is the tool's argument object; the schema is derived from it.
type Input struct {
	Text string `json:"text" jsonschema:"the text to count"`
}

// Counts is the result, sent as JSON text and as structured content.
type Counts struct {
	Words int `json:"words" jsonschema:"runs of characters between whitespace"`
	Lines int `json:"lines" jsonschema:"newline-terminated lines, plus an unterminated last one"`
	Chars int `json:"chars" jsonschema:"Unicode code points"`
}

func wordCount(_ context.Context, in Input) (Counts, error) {
	c := Counts{
		Words: len(strings.FieldsFunc(in.Text, unicode.IsSpace)),
		Lines: strings.Count(in.Text, "\n"),
		Chars: utf8.RuneCountInString(in.Text),
	}
	if in.Text != "" && !strings.HasSuffix(in.Text, "\n") {
		c.Lines++
	}
	return c, nil
}

func init() {
	pdk.Register(pdk.NewTool("word_count",
		"Counts the words, lines and characters (Unicode code points) of a text.",
		wordCount).WithAnnotations(pdk.Annotations{ReadOnly: true, Idempotent: true}))
}

func main() {}
