package conformance_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// testCase is one conformance case of cases.txt.
type testCase struct {
	name   string
	input  []byte
	output []byte
}

var headerRE = regexp.MustCompile(`(?m)^-- ([a-z0-9-]+)\.(input|input\.esc|output) --$`)
var escRE = regexp.MustCompile(`\\x[0-9a-fA-F]{2}`)

// loadCases reads cases.txt: "-- NAME.input --" / "-- NAME.output --"
// sections, each running to the next header without its last newline.
func loadCases(t testing.TB) []testCase {
	t.Helper()
	data, err := os.ReadFile("cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := parseCases(data)
	if err != nil {
		t.Fatalf("cases.txt: %v", err)
	}
	return cases
}

func parseCases(data []byte) ([]testCase, error) {
	locs := headerRE.FindAllSubmatchIndex(data, -1)
	var out []testCase
	byName := map[string]int{}
	for i, l := range locs {
		name, kind := string(data[l[2]:l[3]]), string(data[l[4]:l[5]])
		start, end := l[1]+1, len(data)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		if start > end {
			start = end
		}
		body := bytes.TrimSuffix(data[start:end], []byte("\n"))
		if kind == "input.esc" {
			body = escRE.ReplaceAllFunc(body, func(m []byte) []byte {
				b, _ := hex.DecodeString(string(m[2:]))
				return b
			})
		}
		j, ok := byName[name]
		if !ok {
			j = len(out)
			byName[name] = j
			out = append(out, testCase{name: name})
		}
		if strings.HasPrefix(kind, "input") {
			out[j].input = body
		} else {
			out[j].output = body
		}
	}
	for _, c := range out {
		if c.output == nil {
			return nil, fmt.Errorf("case %s has no output", c.name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cases")
	}
	return out, nil
}

func TestParseCases(t *testing.T) {
	cases := loadCases(t)
	if len(cases) < 40 {
		t.Fatalf("got %d cases, want the 40+ of cases.txt", len(cases))
	}
	for _, c := range cases {
		if c.name == "invalid-utf8" && !bytes.Contains(c.input, []byte{'a', 0xff, 'b'}) {
			t.Errorf("invalid-utf8: \\x escapes not decoded: %q", c.input)
		}
		if c.name == "empty-input" && len(c.input) != 0 {
			t.Errorf("empty-input: got %q, want no bytes", c.input)
		}
		if c.name == "pretty-printed" && !bytes.HasSuffix(c.input, []byte("\n}")) {
			t.Errorf("pretty-printed: lost its inner newlines: %q", c.input)
		}
	}
}
