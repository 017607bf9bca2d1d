package synth

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

const wordCountGo = `package main

import "strings"

func run(args map[string]any) (any, error) {
	text, _ := args["text"].(string)
	return map[string]any{"words": len(strings.Fields(text))}, nil
}
`

func TestGoBackendBuildsAndRuns(t *testing.T) {
	tmp := t.TempDir()
	w := scripted.New(turn(draft{Name: "word_count", Description: "Counts words.", InputSchema: wordCountSchema, Source: wordCountGo,
		SelfTests: []map[string]any{{"args": map[string]any{"text": "a b c"}, "expect": map[string]any{"words": 3}}}}))
	b := newBuilder(t, w, func(o *Options) {
		o.Backends = []Backend{&JavaScript{}, &Go{TempDir: tmp}}
	})
	ctx := context.Background()
	tl, err := b.Build(ctx, Request{Capability: "count words", Language: "go"})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if tl.Language() != "go" || tl.Package().Sidecar != nil {
		t.Fatalf("language %s, sidecar %s", tl.Language(), tl.Package().Sidecar)
	}
	res, err := tl.Call(ctx, tool.Call{Name: "word_count", Arguments: json.RawMessage(`{"text":"one two"}`)})
	if err != nil || res.IsError || res.Text() != `{"words":2}` {
		t.Fatalf("call: %+v %v", res, err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Fatalf("the build directory was left behind: %v", entries)
	}
	if !strings.Contains(requestText(w.Requests()[0]), "func run(args map[string]any) (any, error)") {
		t.Fatalf("the writer was not given the Go guide")
	}
}

func TestGoBackendRefusals(t *testing.T) {
	cases := []struct {
		name, source string
		stage        Stage
		want         string
	}{
		{"compile error", "package main\n\nfunc run(args map[string]any) (any, error) {\n\treturn undefinedThing, nil\n}\n", StageBuild, "tool.go:4:9: undefined: undefinedThing"},
		{"wrong package", "package tool\n\nfunc run(args map[string]any) (any, error) { return 1, nil }\n", StageScreen, "must be package main"},
		{"defines main", "package main\n\nfunc main() {}\nfunc run(args map[string]any) (any, error) { return 1, nil }\n", StageScreen, "do not define main"},
		{"os/exec", "package main\n\nimport \"os/exec\"\n\nfunc run(args map[string]any) (any, error) { return exec.Command(\"sh\").Run(), nil }\n", StageScreen, `import "os/exec"`},
		{"third party", "package main\n\nimport \"github.com/x/y\"\n\nfunc run(args map[string]any) (any, error) { return y.Z, nil }\n", StageScreen, "only the standard library"},
		{"wasmimport", "package main\n\n//go:wasmimport extism:host/env http_request\nfunc req(a, b uint64) uint64\n\nfunc run(args map[string]any) (any, error) { return req(0, 0), nil }\n", StageScreen, "compiler directive"},
		{"no run", "package main\n\nfunc Run() {}\n", StageScreen, "must define func run"},
		{"entry's function", "package main\n\nfunc autoagentCall() int32 { return 0 }\nfunc run(args map[string]any) (any, error) { return 1, nil }\n", StageScreen, "reserved for the generated entry point"},
		{"entry's constant", "package main\n\nconst autoagentDescription = \"{}\"\n\nfunc run(args map[string]any) (any, error) { return 1, nil }\n", StageScreen, "reserved for the generated entry point"},
		{"entry's import", "package main\n\nvar autoagentextism, x = 1, 2\n\nfunc run(args map[string]any) (any, error) { return x, nil }\n", StageScreen, "reserved for the generated entry point"},
		{"entry's type", "package main\n\ntype autoagentT int\n\nfunc run(args map[string]any) (any, error) { return 1, nil }\n", StageScreen, "reserved for the generated entry point"},
		{"bad signature", "package main\n\nfunc run() int { return 1 }\n", StageScreen, "signature"},
		{"parse error", "package main\n\nfunc run(args map[string]any) (any, error) {\n", StageScreen, "does not parse"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t, scripted.New(turn(draft{Name: "t", Source: c.source})), func(o *Options) { o.Language = "go" })
			_, err := b.Build(context.Background(), Request{Capability: "x"})
			var rej *RejectError
			if !errors.As(err, &rej) || rej.Stage != c.stage || !strings.Contains(rej.Reason, c.want) {
				t.Fatalf("err %v; want %s refusal containing %q", err, c.stage, c.want)
			}
		})
	}
}

// TestGoToolNamesDoNotClashWithTheEntry: the model's file may declare in
// the package any name the entry does not reserve, the names of the
// packages the entry imports among them (an import's name is in its file's
// scope, but a package-level name equal to it would not compile).
func TestGoToolNamesDoNotClashWithTheEntry(t *testing.T) {
	src := "package main\n\nimport \"strings\"\n\n" +
		"var json, fmt, extism, binary = 1, 2, 3, 4\n\n" +
		"type in struct{ Params int }\n\n" +
		"func args() int { return json + fmt + extism + binary }\n\n" +
		"func run(a map[string]any) (any, error) {\n\ttext, _ := a[\"text\"].(string)\n\treturn map[string]any{\"words\": len(strings.Fields(text)), \"sum\": args()}, nil\n}\n"
	w := scripted.New(turn(draft{Name: "names", Source: src}))
	b := newBuilder(t, w, func(o *Options) { o.Language, o.NoStaging = "go", true })
	ctx := context.Background()
	tl, err := b.Build(ctx, Request{Capability: "x"})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	res, err := tl.Call(ctx, tool.Call{Name: "names", Arguments: json.RawMessage(`{"text":"a b"}`)})
	if err != nil || res.IsError || res.Text() != `{"sum":10,"words":2}` {
		t.Fatalf("call: %+v %v", res, err)
	}
}

func TestGoBackendWithoutToolchain(t *testing.T) {
	b := newBuilder(t, scripted.New(turn(draft{Name: "t", Source: wordCountGo})), func(o *Options) {
		o.Backends = []Backend{&Go{Command: ""}}
	})
	t.Setenv("PATH", t.TempDir())
	t.Setenv("GOROOT", t.TempDir())
	_, err := b.Build(context.Background(), Request{Capability: "x"})
	if !errors.Is(err, ErrNoToolchain) || !strings.Contains(err.Error(), "--lang js") {
		t.Fatalf("err %v", err)
	}
}

func TestSynthesizeInGo(t *testing.T) {
	src := "package main\n\nimport \"fmt\"\n\nfunc run(args map[string]any) (any, error) {\n\ta, _ := args[\"a\"].(float64)\n\tb, _ := args[\"b\"].(float64)\n\tif b == 0 {\n\t\treturn nil, fmt.Errorf(\"division by zero\")\n\t}\n\treturn a / b, nil\n}\n"
	var ex []Example
	for _, c := range [][3]string{{"6", "3", "2"}, {"1", "4", "0.25"}, {"9", "-3", "-3"}, {"0", "5", "0"}, {"7", "2", "3.5"}} {
		ex = append(ex, Example{Args: json.RawMessage(`{"a":` + c[0] + `,"b":` + c[1] + `}`), Expected: json.RawMessage(c[2])})
	}
	b := newBuilder(t, scripted.New(turn(draft{Name: "divide", Source: src})), nil)
	res, err := b.Synthesize(context.Background(), Task{Goal: "Divide a by b.", Examples: ex, Language: "go"})
	if err != nil || !res.Accepted() {
		t.Fatalf("Synthesize: %v %+v", err, res)
	}
	if res.Staged == nil || !strings.HasSuffix(res.Staged.Source, "divide.go") || res.Staged.Sidecar != "" {
		t.Fatalf("staged %+v", res.Staged)
	}
}

// TestGoToolsReachNothing: a Go tool trying files, the environment or the
// network gets errors, and a runaway one is stopped; the host keeps
// serving.
func TestGoToolsReachNothing(t *testing.T) {
	src := "package main\n\nimport (\n\t\"net\"\n\t\"os\"\n)\n\nfunc run(args map[string]any) (any, error) {\n" +
		"\tswitch args[\"try\"] {\n" +
		"\tcase \"file\":\n\t\treturn os.ReadFile(\"/etc/passwd\")\n" +
		"\tcase \"env\":\n\t\treturn os.Environ(), nil\n" +
		"\tcase \"net\":\n\t\t_, err := net.Dial(\"tcp\", \"127.0.0.1:80\")\n\t\treturn nil, err\n" +
		"\tcase \"loop\":\n\t\tfor {\n\t\t}\n" +
		"\t}\n\treturn \"ok\", nil\n}\n"
	b := newBuilder(t, scripted.New(turn(draft{Name: "snoop", Source: src})), func(o *Options) {
		o.Language, o.NoStaging = "go", true
		o.Limits = host.Limits{Timeout: 3 * time.Second}
	})
	ctx := context.Background()
	tl, err := b.Build(ctx, Request{Capability: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for try, want := range map[string]string{
		"file": "open /etc/passwd",
		"net":  "dial tcp 127.0.0.1:80",
		"loop": "tool exceeded its time limit of 3s",
	} {
		res, err := tl.Call(ctx, tool.Call{Name: "snoop", Arguments: json.RawMessage(`{"try":"` + try + `"}`)})
		if err != nil || !res.IsError || !strings.Contains(res.Text(), want) {
			t.Errorf("%s: %s %v; want an error containing %q", try, res.Text(), err, want)
		}
	}
	res, _ := tl.Call(ctx, tool.Call{Name: "snoop", Arguments: json.RawMessage(`{"try":"env"}`)})
	if res.IsError || res.Text() != "[]" {
		t.Errorf("env: %s", res.Text())
	}
	res, _ = tl.Call(ctx, tool.Call{Name: "snoop", Arguments: json.RawMessage(`{}`)})
	if res.IsError || res.Text() != `"ok"` {
		t.Errorf("after the hostile calls: %s", res.Text())
	}
}
