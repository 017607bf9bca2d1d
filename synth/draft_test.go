package synth

import (
	"strings"
	"testing"
)

func TestParseDraftIsTolerant(t *testing.T) {
	const obj = `{"name":"t","description":"d","input_schema":{"type":"object"},"source":"function run(){return \"}\"}","self_tests":[]}`
	cases := []struct{ name, text string }{
		{"strict", obj},
		{"fenced", "```json\n" + obj + "\n```"},
		{"prose around", `Here is the tool, "quoted" {not json} first: ` + obj + " hope it helps {"},
	}
	for _, c := range cases {
		d, err := parseDraft(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Name != "t" || d.Source != `function run(){return "}"}` {
			t.Fatalf("%s: %+v", c.name, d)
		}
	}
	for text, want := range map[string]string{
		"":                      "empty",
		"no json here":          "no JSON object",
		"{broken":               "not valid JSON",
		`{"name":"t"}`:          `no "source"`,
		`{"name":1,"source":2}`: "not the expected JSON object",
	} {
		if _, err := parseDraft(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseDraft(%q) = %v, want %q", text, err, want)
		}
	}
}

func FuzzParseDraft(f *testing.F) {
	f.Add(`{"name":"t","source":"x"}`)
	f.Add("```\n{\"source\":\"}\"}\n```")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDraft(s)
		if err == nil && strings.TrimSpace(d.Source) == "" {
			t.Fatalf("accepted a draft without source: %q", s)
		}
	})
}

func TestSanitizeName(t *testing.T) {
	for in, want := range map[string]string{
		"Word Count!":           "word_count",
		"__x__":                 "x",
		"2fast":                 "tool_2fast",
		"!!!":                   "",
		"":                      "",
		"héllo wörld":           "h_llo_w_rld",
		strings.Repeat("a", 70): strings.Repeat("a", 64),
	} {
		if got := SanitizeName(in); got != want {
			t.Errorf("SanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
}
