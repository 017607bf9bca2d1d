package main

import (
	"testing"
)

// BenchmarkProgramCallParts splits a program's tool call natively (no
// sandbox, a bridge that answers at once), per program of 200
// iterations: a loop alone (none), an await of nothing (await), and a
// call of a tool whose result is structured content (object). With
// -benchmem the allocations per call show, which cost most inside the
// sandbox.
func BenchmarkProgramCallParts(b *testing.B) {
	result := []byte(`{"content":[{"type":"text","text":"{\"id\":7,\"refund\":70}"}],"structuredContent":{"id":7,"refund":70}}`)
	call := func(string, []byte) ([]byte, error) { return result, nil }
	for _, c := range []struct{ name, code string }{
		{"none", "for (let id = 0; id < 200; id++) ; return 1"},
		{"await", "for (let id = 0; id < 200; id++) await null; return 1"},
		{"object", "for (let id = 0; id < 200; id++) await tools.get_order({id}); return 1"},
	} {
		b.Run(c.name, func(b *testing.B) {
			in := program(c.code, "get_order")
			for b.Loop() {
				if _, err := runProgram(in, call); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
