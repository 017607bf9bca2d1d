package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/enginetest"
	"github.com/autoagent-go/autoagent/synth"
)

// writerScript writes a scripted-provider script whose turns answer with
// the given tool sources, as the writer model would.
func writerScript(t *testing.T, dir string, sources ...string) string {
	t.Helper()
	var b bytes.Buffer
	for _, src := range sources {
		d, _ := json.Marshal(map[string]any{
			"name": "slugify", "description": "Turns a title into a URL slug.",
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string"}}, "required": []string{"title"}},
			"source":       src, "self_tests": []any{},
		})
		turn, _ := json.Marshal(map[string]any{"text": string(d), "usage": map[string]any{"input_tokens": 500, "output_tokens": 100}})
		b.Write(append(turn, '\n'))
	}
	p := filepath.Join(dir, "writer.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func slugExamples(t *testing.T, dir string) string {
	t.Helper()
	lines := []string{"# title -> slug"}
	for _, c := range [][2]string{{"Hello World", "hello-world"}, {"Go 1.26 is out!", "go-1-26-is-out"}, {"  Spaces  ", "spaces"}, {"A/B testing", "a-b-testing"}, {"Ünïcode", "n-code"}} {
		l, _ := json.Marshal(map[string]any{"args": map[string]any{"title": c[0]}, "expected": c[1]})
		lines = append(lines, string(l))
	}
	p := filepath.Join(dir, "examples.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const slugJS = `function run(a) { return a.title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "") }`

func TestSynthCommand(t *testing.T) {
	t.Parallel()
	enginetest.Path(t, synth.EngineFile)
	dir := t.TempDir()
	examples := slugExamples(t, dir)
	script := writerScript(t, dir, `function run(a) { return a.title.toLowerCase().replace(/ /g, "-") }`, slugJS)
	staging := filepath.Join(dir, "staging")
	var out, errb bytes.Buffer
	code := run([]string{"synth", "--examples", examples, "--goal", "Turn a title into a URL slug", "--provider", "scripted", "--script", script, "--staging", staging, "--seed", "3"}, nil, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "attempt 1: slugify: shown") || !strings.Contains(errb.String(), "rejected at") || !strings.Contains(errb.String(), "attempt 2: slugify: shown 3/3, held-out 2/2: accepted") {
		t.Fatalf("stderr: %s", errb.String())
	}
	if !strings.Contains(out.String(), "accepted slugify (js) after 2 attempt(s)") || !strings.Contains(out.String(), "cost: 1200 tokens (1000 in, 200 out)") || !strings.Contains(out.String(), "autoagent synth promote slugify") {
		t.Fatalf("stdout: %s", out.String())
	}
	if _, err := os.Stat(filepath.Join(staging, "slugify.wasm")); err != nil {
		t.Fatalf("not staged: %v", err)
	}

	plugins := filepath.Join(dir, "plugins")
	out.Reset()
	errb.Reset()
	if code := run([]string{"synth", "promote", "slugify", "--staging", staging, "--plugins", plugins}, nil, &out, &errb); code != 0 {
		t.Fatalf("promote: exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), filepath.Join(plugins, "slugify.wasm")) || !strings.Contains(errb.String(), "autoagent tools approve") {
		t.Fatalf("promote: %s / %s", out.String(), errb.String())
	}
}

func TestSynthCommandFailures(t *testing.T) {
	t.Parallel()
	enginetest.Path(t, synth.EngineFile)
	dir := t.TempDir()
	examples := slugExamples(t, dir)
	wrong := writerScript(t, dir, `function run(a) { return a.title }`)
	var out, errb bytes.Buffer
	code := run([]string{"synth", "--examples", examples, "--goal", "slug", "--provider", "scripted", "--script", wrong, "--max-attempts", "1", "--no-stage", "--json"}, nil, &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out.String(), errb.String())
	}
	// Exit 1 comes with its message on stderr (docs/ARCHITECTURE.md §8).
	if !strings.Contains(errb.String(), "autoagent: synth: no tool accepted after 1 attempt(s)") {
		t.Errorf("stderr: %s", errb.String())
	}
	var res struct {
		Accepted bool
		Attempts []struct {
			Stage    string
			Feedback string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Accepted || len(res.Attempts) != 1 || res.Attempts[0].Stage != "shown" {
		t.Fatalf("json %s (%v)", out.String(), err)
	}

	bad := filepath.Join(dir, "bad.jsonl")
	_ = os.WriteFile(bad, []byte("{\"args\":{}}\n"), 0o600)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"synth", "--goal", "x"}, 2, "--examples"},
		{[]string{"synth", "--examples", examples}, 2, "--goal"},
		{[]string{"synth", "--examples", examples, "--goal", "x", "--holdout", "1"}, 2, "--holdout"},
		{[]string{"synth", "--examples", examples, "--goal", "x", "--lang", "cobol"}, 2, "--lang"},
		{[]string{"synth", "--examples", examples, "--goal", "x", "--grant", "nonsense"}, 2, "invalid grant"},
		{[]string{"synth", "--examples", bad, "--goal", "x", "--provider", "scripted", "--script", wrong}, 1, "bad.jsonl:1: both \"args\" and \"expected\" are required"},
		{[]string{"synth", "promote", "missing", "--staging", dir}, 1, "no staged tool missing"},
	} {
		out.Reset()
		errb.Reset()
		if got := run(c.args, nil, &out, &errb); got != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, got, errb.String(), c.code, c.want)
		}
	}
}

// TestSynthesizedGoToolEntersTheApprovalPath: a tool synthesized in Go is
// staged, promoted, approved with the manifest CLI and then served by name
// from the plugins directory, like any approved module.
func TestSynthesizedGoToolEntersTheApprovalPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	examples := filepath.Join(dir, "examples.jsonl")
	var lines []string
	for _, c := range [][2]int{{1, 2}, {2, 3}, {10, 11}, {-1, 0}, {41, 42}} {
		lines = append(lines, `{"args":{"n":`+itoa(c[0])+`},"expected":`+itoa(c[1])+`}`)
	}
	if err := os.WriteFile(examples, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	src := "package main\n\nfunc run(args map[string]any) (any, error) {\n\tn, _ := args[\"n\"].(float64)\n\treturn n + 1, nil\n}\n"
	d, _ := json.Marshal(map[string]any{"name": "increment", "description": "Adds one to n.",
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number"}}, "required": []string{"n"}},
		"source":       src})
	turn, _ := json.Marshal(map[string]any{"text": string(d)})
	script := filepath.Join(dir, "writer.jsonl")
	if err := os.WriteFile(script, append(turn, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	staging, plugins := filepath.Join(dir, "staging"), filepath.Join(dir, "plugins")
	steps := [][]string{
		{"synth", "--examples", examples, "--goal", "Add one.", "--lang", "go", "--provider", "scripted", "--script", script, "--staging", staging},
		{"synth", "promote", "increment", "--staging", staging, "--plugins", plugins},
		{"tools", "approve", filepath.Join(plugins, "increment.wasm"), "--by", "test", "--yes", "--manifest", filepath.Join(plugins, "manifest.json")},
		{"tools", "call", "increment", "--args", `{"n":99}`, "--plugins", plugins},
	}
	var out, errb bytes.Buffer
	for _, args := range steps {
		out.Reset()
		errb.Reset()
		if code := run(args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out.String(), errb.String())
		}
	}
	if !strings.Contains(out.String(), `"text":"100"`) {
		t.Fatalf("tools call: %s", out.String())
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A synthesized JavaScript tool is the shared engine module plus a sidecar
// carrying its script: after promotion and approval, the plugins directory
// runs it, and editing the script in the sidecar voids the approval.
func TestSynthesizedJSToolEntersTheApprovalPath(t *testing.T) {
	t.Parallel()
	enginetest.Path(t, synth.EngineFile)
	dir := t.TempDir()
	examples := slugExamples(t, dir)
	script := writerScript(t, dir, slugJS)
	staging, plugins := filepath.Join(dir, "staging"), filepath.Join(dir, "plugins")
	steps := [][]string{
		{"synth", "--examples", examples, "--goal", "Turn a title into a URL slug", "--provider", "scripted", "--script", script, "--staging", staging, "--seed", "3"},
		{"synth", "promote", "slugify", "--staging", staging, "--plugins", plugins},
		{"tools", "approve", filepath.Join(plugins, "slugify.wasm"), "--by", "test", "--yes", "--plugins", plugins},
		{"tools", "call", "slugify", "--args", `{"title":"Hello, Sandboxed World"}`, "--plugins", plugins},
	}
	var out, errb bytes.Buffer
	for _, args := range steps {
		out.Reset()
		errb.Reset()
		if code := run(args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out.String(), errb.String())
		}
	}
	if !strings.Contains(out.String(), `hello-sandboxed-world`) {
		t.Fatalf("tools call: %s", out.String())
	}
	sidecar := filepath.Join(plugins, "slugify.tool.json")
	b, err := os.ReadFile(sidecar)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sidecar, bytes.Replace(b, []byte(`toLowerCase()`), []byte(`toUpperCase()`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"tools", "call", "slugify", "--args", `{"title":"x"}`, "--plugins", plugins}, strings.NewReader(""), &out, &errb); code != 1 {
		t.Errorf("a tampered script ran: exit %d\n%s%s", code, out.String(), errb.String())
	}
}
