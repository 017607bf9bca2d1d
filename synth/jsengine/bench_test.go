package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The scripts of synth's BenchmarkToolCall, run here in goja natively (no
// sandbox), for the ratio.
const (
	benchTrivialJS = `function run(a) { return { n: a.n + 1 } }`
	benchTextJS    = `function run(a) {
  const counts = {};
  for (const w of a.text.split(/\s+/)) if (w) counts[w] = (counts[w] || 0) + 1;
  return { distinct: Object.keys(counts).length };
}`
)

func benchText() string {
	var s strings.Builder
	for i := 0; s.Len() < 100<<10; i++ {
		s.WriteString("w")
		s.WriteString(strings.Repeat("x", i%7))
		s.WriteString(string(rune('a' + i%26)))
		s.WriteString(string(rune('a' + (i/26)%40%26)))
		s.WriteString(" ")
	}
	return s.String()
}

// BenchmarkNative runs a script as the engine does for each call (a fresh
// runtime, compile, run, stringify), natively.
func BenchmarkNative(b *testing.B) {
	text, _ := json.Marshal(map[string]string{"text": benchText()})
	for _, c := range []struct {
		name, script string
		args         []byte
	}{
		{"trivial", benchTrivialJS, []byte(`{"n":1}`)},
		{"text100KB", benchTextJS, text},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.args)))
			for i := 0; i < b.N; i++ {
				if _, err := runScript(c.script, c.args, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
