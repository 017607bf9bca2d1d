package host

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hyper-mcp plugins of both interfaces, ours, written with Extism's
// official Go PDK from hyper-mcp's published templates: v1 exports
// describe and call, v2 list_tools and call_tool (and prompts, resources,
// completion).
func TestHyperMCPPlugins(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	for _, lang := range []struct {
		name  string
		tools []string
	}{{"go", []string{"greet", "now", "token"}}, {"rust", []string{"greet", "now"}}} {
		t.Run(lang.name, func(t *testing.T) {
			v1 := load(t, h, "hypermcpv1"+lang.name+".wasm", Module{})
			if res := call(t, v1, "greet", `{"name":"Ada"}`); res.IsError || res.Text() != "Hello, Ada!" {
				t.Errorf("v1 greet: %+v", res)
			}
			v2 := load(t, h, "hypermcpv2"+lang.name+".wasm", Module{Grants: grants(t, "clock", "random")})
			var names []string
			for _, tl := range v2.Tools() {
				names = append(names, tl.Spec().Name)
			}
			if !slices.Equal(names, lang.tools) {
				t.Fatalf("v2 tools %v", names)
			}
			if res := call(t, v2, "greet", `{"name":"Ada"}`); res.IsError || res.Text() != "Hello, Ada!" {
				t.Errorf("v2 greet: %+v", res)
			}
			// A time tool with the clock reports the current year.
			if res := call(t, v2, "now", `{}`); res.Text() != strconv.Itoa(time.Now().Year()) {
				t.Errorf("now: %+v", res)
			}
			if res := call(t, v2, "greet", `{}`); !res.IsError {
				t.Errorf("greet without its required name: %+v", res)
			}
			if lang.name != "go" {
				return
			}
			// A token tool called twice returns two values.
			a, b := call(t, v2, "token", `{}`).Text(), call(t, v2, "token", `{}`).Text()
			if hex := regexp.MustCompile(`^[0-9a-f]{32}$`); !hex.MatchString(a) || !hex.MatchString(b) || a == b {
				t.Errorf("tokens %q and %q", a, b)
			}
		})
	}
}

// A v2 plugin's prompts, resources and completions, read at load and
// served by calls with the module's grants.
func TestHyperMCPPromptsAndResources(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"go", "rust"} {
		t.Run(lang, func(t *testing.T) { testPromptsAndResources(t, "hypermcpv2"+lang+".wasm") })
	}
}

func testPromptsAndResources(t *testing.T, file string) {
	h, rec := newTestHost(t, Options{})
	v2 := load(t, h, file, Module{})
	if p := v2.Prompts(); len(p) != 1 || p[0].Name != "review" || len(p[0].Arguments) != 1 || !p[0].Arguments[0].Required {
		t.Errorf("prompts %+v", p)
	}
	if r := v2.Resources(); len(r) != 1 || r[0].URI != "memo://readme" || r[0].MIMEType != "text/plain" {
		t.Errorf("resources %+v", r)
	}
	if r := v2.ResourceTemplates(); len(r) != 1 || r[0].URITemplate != "memo://{name}" {
		t.Errorf("resource templates %+v", r)
	}
	ctx := t.Context()
	got, err := v2.GetPrompt(ctx, "review", map[string]string{"language": "Go"})
	if err != nil || !strings.Contains(string(got), `"text":"Review this Go code."`) || !strings.Contains(string(got), `"role":"user"`) {
		t.Errorf("get_prompt: %s, %v", got, err)
	}
	if r := rec.last(t); r.Tool != "get_prompt" || r.Outcome != OutcomeOK {
		t.Errorf("record %+v", r)
	}
	var ee *ExportError
	if _, err := v2.GetPrompt(ctx, "nope", nil); !errors.As(err, &ee) || ee.Export != "get_prompt" || ee.Message == "" {
		t.Errorf("an unknown prompt: %v", err)
	}
	got, err = v2.ReadResource(ctx, "memo://shopping")
	if err != nil || !strings.Contains(string(got), `"text":"memo shopping"`) {
		t.Errorf("read_resource: %s, %v", got, err)
	}
	got, err = v2.Complete(ctx, json.RawMessage(`{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"language","value":"r"}}`))
	if err != nil || !strings.Contains(string(got), `"values":["rust"]`) {
		t.Errorf("complete: %s, %v", got, err)
	}
	// A v1 plugin has none, and says so.
	v1 := load(t, h, "hypermcpv1go.wasm", Module{})
	if len(v1.Prompts()) != 0 {
		t.Errorf("v1 prompts %+v", v1.Prompts())
	}
	if _, err := v1.ReadResource(ctx, "memo://x"); !errors.As(err, &ee) {
		t.Errorf("v1 read_resource: %v", err)
	}
}

// Our v2 plugins run in the official Extism JavaScript host (npm
// @extism/extism on Node, as pdk/conformance installs it) and answer there
// byte for byte as here: they speak hyper-mcp's interface over Extism's ABI
// and nothing private to this host.
func TestHyperMCPInExtismJS(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the Extism JavaScript host cannot run (install Node 20 and run `make deps`)")
	}
	script := filepath.Join("..", "pdk", "conformance", "node", "run.mjs")
	if _, err := os.Stat(filepath.Join("..", "pdk", "conformance", "node", "node_modules", "@extism", "extism")); err != nil {
		t.Skip("@extism/extism is not installed: run `make deps` (.ci/install.d/pdk.sh installs it into pdk/conformance/node)")
	}
	ctx := `"context":{"id":0,"_meta":{}}`
	cases := []struct{ fn, input string }{
		{"list_tools", `{` + ctx + `}`},
		{"call_tool", `{"request":{"name":"greet","arguments":{"name":"Ada"}},` + ctx + `}`},
		{"call_tool", `{"request":{"name":"nope","arguments":{}},` + ctx + `}`},
		{"list_prompts", `{` + ctx + `}`},
		{"get_prompt", `{"request":{"name":"review","arguments":{"language":"Zig"}},` + ctx + `}`},
		{"list_resources", `{` + ctx + `}`},
		{"list_resource_templates", `{` + ctx + `}`},
		{"read_resource", `{"request":{"uri":"memo://todo"},` + ctx + `}`},
		{"complete", `{"request":{"ref":{"type":"prompt","name":"review"},"argument":{"name":"language","value":"py"}},` + ctx + `}`},
	}
	h, _ := newTestHost(t, Options{})
	for _, file := range []string{"hypermcpv2go.wasm", "hypermcpv2rust.wasm"} {
		t.Run(file, func(t *testing.T) {
			var jsonl bytes.Buffer
			for _, c := range cases {
				b, _ := json.Marshal(map[string]string{"fn": c.fn, "input": base64.StdEncoding.EncodeToString([]byte(c.input))})
				jsonl.Write(append(b, '\n'))
			}
			casesFile := filepath.Join(t.TempDir(), "cases.jsonl")
			if err := os.WriteFile(casesFile, jsonl.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd := exec.Command(node, "--no-warnings", script, filepath.Join("..", "testdata", "wasm", file), casesFile)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node: %v\n%s", err, stderr.String())
			}
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(lines) != len(cases) {
				t.Fatalf("node printed %d lines for %d calls:\n%s\n%s", len(lines), len(cases), out, stderr.String())
			}
			l := load(t, h, file, Module{})
			for i, c := range cases {
				theirs, err := base64.StdEncoding.DecodeString(lines[i])
				if err != nil {
					t.Fatalf("%s: the Extism JS host: %s", c.fn, lines[i])
				}
				inst, err := l.newInstance(t.Context(), false)
				if err != nil {
					t.Fatal(err)
				}
				ours, failure, err := inst.runExport(t.Context(), c.fn, c.fn, callInput{[]byte(c.input)})
				if err != nil || failure != "" {
					t.Fatalf("%s here: %v %s", c.fn, err, failure)
				}
				if !bytes.Equal(ours, theirs) {
					t.Errorf("%s:\n here:      %s\n extism-js: %s", c.fn, ours, theirs)
				}
				inst.close()
			}
		})
	}
}

// A plugin that says its tools changed (notify_tool_list_changed, which
// the host provides without a grant) and is granted state is stateful:
// one instance serves every call, and after such a call the host reads
// its tools again in that instance, with no capabilities.
func TestToolListChanged(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "hypermcpv1go.wasm", Module{Grants: grants(t, "state")})
	if l.single == nil {
		t.Fatal("a module importing notify_tool_list_changed is not served by one instance")
	}
	names := func() []string {
		var out []string
		for _, tl := range l.Tools() {
			out = append(out, tl.Spec().Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"greet", "add_tool"}) {
		t.Fatalf("tools %v", got)
	}
	if res := call(t, l, "add_tool", `{}`); res.Text() != "added tool_1" {
		t.Fatalf("add_tool: %+v", res)
	}
	call(t, l, "add_tool", `{}`)
	if got := names(); !slices.Equal(got, []string{"greet", "add_tool", "tool_1", "tool_2"}) {
		t.Fatalf("tools after two add_tool: %v", got)
	}
	if res := call(t, l, "tool_2", `{}`); res.IsError || res.Text() != "called tool_2" {
		t.Errorf("tool_2: %+v", res)
	}
}
