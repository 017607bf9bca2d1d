package codemode_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
)

// fake runs nothing: it answers with its language and the program's.
type fake string

func (f fake) Run(_ context.Context, p codemode.Program) (tool.Result, error) {
	return tool.Text(string(f) + ":" + p.Language), nil
}

func TestByLanguageDispatches(t *testing.T) {
	both := codemode.ByLanguage{codemode.Python: fake("py"), codemode.JavaScript: fake("js")}
	for lang, want := range map[string]string{
		"": "js:javascript", "javascript": "js:javascript", "JS": "js:javascript",
		"python": "py:python", " Python3 ": "py:python", "py": "py:python",
	} {
		res, err := both.Run(context.Background(), codemode.Program{Code: "x", Language: lang})
		if err != nil || res.IsError || res.Text() != want {
			t.Errorf("language %q: %+v %v, want %s", lang, res, err, want)
		}
	}
	res, err := both.Run(context.Background(), codemode.Program{Code: "x", Language: "ruby"})
	if err != nil || !res.IsError || res.Text() != `programs in "ruby" are not offered in this run: set "language" to "javascript" or "python"` {
		t.Fatalf("ruby: %+v %v", res, err)
	}
	// Python alone: a program without a language is Python, the first
	// offered, as the schema says.
	py := codemode.ByLanguage{codemode.Python: fake("py")}
	if res, _ := py.Run(context.Background(), codemode.Program{Code: "x"}); res.Text() != "py:python" {
		t.Fatalf("python alone, no language: %+v", res)
	}
	if res, _ := py.Run(context.Background(), codemode.Program{Code: "x", Language: "javascript"}); !res.IsError || !strings.Contains(res.Text(), `set "language" to "python"`) {
		t.Fatalf("python alone, javascript: %+v", res)
	}
	if got := codemode.Languages(both); strings.Join(got, ",") != "javascript,python" {
		t.Fatalf("Languages %v", got)
	}
	if got := codemode.Languages(fake("js")); strings.Join(got, ",") != "javascript" {
		t.Fatalf("Languages of a plain runner %v", got)
	}
}

func TestSpecForLanguages(t *testing.T) {
	specs := []llm.ToolSpec{spec("get_order", "Fetch an order.", `{"type":"object","properties":{"id":{"type":"integer"}}}`, "")}
	js := codemode.Spec(specs, false)
	if got := codemode.SpecFor(specs, false, []string{codemode.JavaScript}); got.Description != js.Description || string(got.InputSchema) != string(js.InputSchema) {
		t.Fatal("the JavaScript-only spec changed")
	}
	if strings.Contains(js.Description, "Python") || strings.Contains(string(js.InputSchema), "python") {
		t.Fatalf("the JavaScript-only spec speaks of Python: %s", js.Description)
	}
	both := codemode.SpecFor(specs, false, []string{codemode.JavaScript, codemode.Python})
	var schema struct {
		Properties struct {
			Language struct {
				Enum []string `json:"enum"`
			} `json:"language"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(both.InputSchema, &schema); err != nil || strings.Join(schema.Properties.Language.Enum, ",") != "javascript,python" {
		t.Fatalf("schema %s: %v", both.InputSchema, err)
	}
	for _, want := range []string{"await tools.get_order({id: 7})", `"language": "python"`, "tools.get_order(id=7)", "keyword arguments named as the fields", "ToolError", "get_order(args"} {
		if !strings.Contains(both.Description, want) {
			t.Errorf("the spec for both does not say %q:\n%s", want, both.Description)
		}
	}
	// The tools are declared once, whatever the languages.
	if n := strings.Count(both.Description, "Fetch an order."); n != 1 {
		t.Errorf("the declarations appear %d times", n)
	}
	py := codemode.SpecFor(specs, false, []string{codemode.Python})
	if strings.Contains(py.Description, "await") || !strings.HasPrefix(py.Description, "Run a Python program") || !strings.Contains(string(py.InputSchema), `"enum":["python"]`) {
		t.Fatalf("python only: %s %s", py.Description, py.InputSchema)
	}
}

func TestParseLanguages(t *testing.T) {
	for in, want := range map[string]string{
		"": "javascript", "js": "javascript", "python": "python", "javascript,python": "javascript,python",
		" Python , JS ": "python,javascript", "py,python3": "python",
	} {
		got, err := codemode.ParseLanguages(in)
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("%q: %v %v, want %s", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"ruby": `code-mode language "ruby": want javascript or python`, "js,,py": "an empty name"} {
		if _, err := codemode.ParseLanguages(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", in, err, want)
		}
	}
}
