package fixturetest

import (
	"strings"
	"testing"
)

// Chunks reads the vercel-ai stream recording at rel (below [Dir]), one
// JSON payload per line without SSE framing, and returns the payloads;
// blank lines are skipped.
func Chunks(t testing.TB, rel string) []string {
	t.Helper()
	var out []string
	for line := range strings.SplitSeq(ReadFile(t, rel), "\n") {
		if strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		t.Fatalf("fixturetest: %s holds no stream payload", rel)
	}
	return out
}

// SSE frames payloads as server-sent events, "data: <payload>" each,
// ended by end: "\n\n" for OpenAI-compatible servers, "\r\n\r\n" for
// Gemini. A terminal marker such as OpenAI's "[DONE]" is one more payload.
func SSE(payloads []string, end string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: ")
		b.WriteString(p)
		b.WriteString(end)
	}
	return b.String()
}
