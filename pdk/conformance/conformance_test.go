package conformance_test

import (
	"bytes"
	"os"
	"regexp"
	"testing"
)

// describeDoc is the describe document SPEC.md fixes, read from SPEC.md
// itself so the spec and the test cannot drift apart.
func describeDoc(t testing.TB) []byte {
	t.Helper()
	spec, err := os.ReadFile("SPEC.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## describe.*?```json\n(.*?)\n```").FindSubmatch(spec)
	if m == nil {
		t.Fatal("SPEC.md: no describe document")
	}
	return m[1]
}

func TestConformance(t *testing.T) {
	cases := loadCases(t)
	want := describeDoc(t)
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			m := load(t, modulePath(t, lang))
			if got := m.call(t, "describe", nil); !bytes.Equal(got, want) {
				t.Errorf("describe:\n got %s\nwant %s", got, want)
			}
			for _, c := range cases {
				if got := m.call(t, "call", c.input); !bytes.Equal(got, c.output) {
					t.Errorf("case %s:\n got %s\nwant %s", c.name, got, c.output)
				}
			}
		})
	}
}
