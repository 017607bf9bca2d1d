package conformance_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// tutorials maps each language's section of pdk/README.md to the
// conformance source its "Write" code is taken from, and to the one
// difference allowed: the tutorial copies the binding next to the tool,
// the conformance code includes it from pdk/.
var tutorials = []struct {
	section, source string
	copied, inRepo  string
}{
	{"## Go (ten minutes)", "go/main.go", "", ""},
	{"## C (ten minutes)", "c/word_count.c", "", ""},
	{"## Rust (ten minutes)", "rust/word_count.rs", `"autoagent.rs"`, `"../../rust/autoagent.rs"`},
	{"## AssemblyScript (ten minutes)", "assemblyscript/assembly/index.ts", `"./autoagent"`, `"../../../assemblyscript/assembly/autoagent"`},
	{"## Zig (ten minutes)", "zig/word_count.zig", "", ""},
}

var (
	writeBlockRE = regexp.MustCompile("(?s)\\*\\*Write\\*\\*.*?```[a-z]*\n(.*?)```")
	commentRE    = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	spaceRE      = regexp.MustCompile(`\s+`)
)

// squeeze drops comments and white space, so a tutorial may lay out a
// statement on one line that the source spreads over several.
func squeeze(s string) string {
	return spaceRE.ReplaceAllString(commentRE.ReplaceAllString(s, ""), "")
}

// TestTutorialIsTheConformanceCode backs pdk/README.md's claim that each
// tutorial's code is the conformance test's code: every piece of the
// tutorial's "Write" block between two "..." elisions stands in the
// language's conformance source, in the same order.
func TestTutorialIsTheConformanceCode(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tu := range tutorials {
		t.Run(tu.source, func(t *testing.T) {
			_, section, ok := strings.Cut(string(readme), tu.section+"\n")
			if !ok {
				t.Fatalf("pdk/README.md has no section %q", tu.section)
			}
			section, _, _ = strings.Cut(section, "\n## ")
			m := writeBlockRE.FindStringSubmatch(section)
			if m == nil {
				t.Fatalf("%s: no code block after **Write**", tu.section)
			}
			block := m[1]
			if tu.copied != "" {
				if !strings.Contains(block, tu.copied) {
					t.Fatalf("%s: the tutorial does not include the binding as %s", tu.section, tu.copied)
				}
				block = strings.Replace(block, tu.copied, tu.inRepo, 1)
			}
			src, err := os.ReadFile(tu.source)
			if err != nil {
				t.Fatal(err)
			}
			rest := squeeze(string(src))
			for _, piece := range strings.Split(block, "...") {
				p := squeeze(piece)
				i := strings.Index(rest, p)
				if i < 0 {
					t.Fatalf("%s: this part of the tutorial is not in %s (after what came before it):\n%s", tu.section, tu.source, strings.TrimSpace(piece))
				}
				rest = rest[i+len(p):]
			}
		})
	}
}
