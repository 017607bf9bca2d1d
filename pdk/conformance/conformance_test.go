package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/tool"
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

// TestConformanceABI feeds every case's bytes to each module's call export
// and wants exactly the case's output bytes: the modules agree byte for
// byte, malformed documents included.
func TestConformanceABI(t *testing.T) {
	cases := append(loadCases(t), generatedCases()...)
	want := describeDoc(t)
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			m := loadRaw(t, lang)
			if got := m.call(t, "describe", nil); !bytes.Equal(got, want) {
				t.Errorf("describe:\n got %s\nwant %s", got, want)
			}
			for _, c := range cases {
				if got := m.call(t, "call", c.input); !bytes.Equal(got, c.output) {
					t.Errorf("case %s:\n got %.300s\nwant %.300s", c.name, got, c.output)
				}
			}
		})
	}
}

// hostArgs returns the arguments of a case whose input is a well-formed
// call of word_count with object arguments, the calls a model can make
// through the autoagent host.
func hostArgs(c testCase) (json.RawMessage, bool) {
	var env struct {
		Params *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(c.input, &env) != nil || env.Params == nil || env.Params.Name != "word_count" {
		return nil, false
	}
	a := bytes.TrimSpace(env.Params.Arguments)
	return a, len(a) > 0 && a[0] == '{'
}

// TestConformanceHost loads each module into the autoagent host, as a
// plugin of the plugins directory would be, and makes every model-shaped
// call of the cases: each language describes the same tool and returns
// the same result, the expected one when the host lets the arguments
// through its schema check.
func TestConformanceHost(t *testing.T) {
	cases := loadCases(t)
	var wantDesc host.Description
	if err := json.Unmarshal(describeDoc(t), &wantDesc); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, host.Options{})
	results := map[string]map[string][]byte{} // case -> language -> result JSON
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			l := loadHost(t, h, lang, false)
			if diff := cmp.Diff(wantDesc, l.Describe()); diff != "" {
				t.Errorf("describe (-want +got):\n%s", diff)
			}
			wc, ok := l.Tool("word_count")
			if !ok {
				t.Fatal("no word_count tool")
			}
			for _, c := range cases {
				args, ok := hostArgs(c)
				if !ok {
					continue
				}
				res, err := wc.Call(context.Background(), tool.Call{Name: "word_count", Arguments: args})
				if err != nil {
					t.Fatalf("case %s: %v", c.name, err)
				}
				got, _ := json.Marshal(res)
				if results[c.name] == nil {
					results[c.name] = map[string][]byte{}
				}
				results[c.name][lang] = got
				if res.IsError {
					if !bytes.Contains(c.output, []byte(`"isError":true`)) {
						t.Errorf("case %s: the host refused a valid call: %s", c.name, res.Text())
					}
					continue
				}
				var want tool.Result
				if err := json.Unmarshal(c.output, &want); err != nil {
					t.Fatalf("case %s: expected output: %v", c.name, err)
				}
				if diff := cmp.Diff(want, res); diff != "" {
					t.Errorf("case %s (-want +got):\n%s", c.name, diff)
				}
			}
		})
	}
	for name, byLang := range results {
		ref := ""
		for _, lang := range languages {
			got, ok := byLang[lang]
			if !ok {
				continue
			}
			if ref == "" {
				ref = lang
			} else if !bytes.Equal(got, byLang[ref]) {
				t.Errorf("case %s: %s gives %s, %s gives %s", name, lang, got, ref, byLang[ref])
			}
		}
	}
	if len(results) == 0 {
		t.Skip("no word_count module is built: run `make pdk-conformance` (needs the toolchains of .ci/install.d/pdk.sh)")
	}
	if len(results) < 25 {
		t.Errorf("only %d cases reached the host", len(results))
	}
}
