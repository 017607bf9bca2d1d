package host

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/tool"
)

func TestParseDescription(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ doc, want string }{
		{`{"tools":[]}`, "no tools"},
		{`[]`, "not a JSON object"},
		{`{"tools":[{"name":"a b","inputSchema":{}}]}`, `invalid name "a b"`},
		{`{"tools":[{"name":"a"},{"name":"a"}]}`, `tool "a" described twice`},
		{`{"tools":[{"name":"a","inputSchema":{"type":12}}]}`, `tool "a": inputSchema`},
		{`{"tools":[{"name":"a","outputSchema":{"type":12}}]}`, `tool "a": outputSchema`},
		{`{"tools":[{"name":"a"}],"capabilities":["net:a.*.com"]}`, "capabilities:"},
		{`{"tools":[{"name":"a"}]} {}`, "trailing data"},
	} {
		_, _, _, err := parseDescription([]byte(c.doc))
		if !errors.Is(err, ErrDescribe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.doc, err, c.want)
		}
	}
	d, in, _, err := parseDescription([]byte(`{"tools":[{"name":"a","description":"A.","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}],"capabilities":["kv:x"]}`))
	if err != nil || d.Tools[0].Description != "A." || d.Capabilities[0] != "kv:x" {
		t.Fatalf("%+v %v", d, err)
	}
	if in[0].Validate([]byte(`{"n":"x"}`)) == nil {
		t.Error("the compiled input schema accepted a string for an integer")
	}
}

func TestFlags(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	for _, c := range []struct {
		grants []string
		a      *Annotations
		want   tool.Flags
	}{
		{nil, nil, tool.Flags{Idempotent: true}},
		{nil, &Annotations{OpenWorldHint: &yes}, tool.Flags{Untrusted: true, Idempotent: true}},
		{[]string{"net:api.example.com"}, &Annotations{OpenWorldHint: &no},
			tool.Flags{Untrusted: true, Egress: true, Permissions: []string{"net:api.example.com", "network"}}},
		{[]string{"fs.read:/data", "clock"}, nil,
			tool.Flags{Untrusted: true, Idempotent: true, Permissions: []string{"fs.read:/data", "clock", "filesystem.read"}}},
		{[]string{"fs.write:/data"}, nil,
			tool.Flags{Untrusted: true, Permissions: []string{"fs.write:/data", "filesystem.read", "filesystem.write"}}},
		// fs.workspace changes files (each journaled first): effects, like fs.write.
		{[]string{"fs.workspace:/data"}, &Annotations{IdempotentHint: &yes},
			tool.Flags{Untrusted: true, Permissions: []string{"fs.workspace:/data", "filesystem.read", "filesystem.write"}}},
		// A grant with effects: the author's word cannot make it idempotent.
		{[]string{"kv:notes"}, &Annotations{IdempotentHint: &yes}, tool.Flags{Permissions: []string{"kv:notes"}}},
		{[]string{"net:api.example.com"}, &Annotations{ReadOnlyHint: &yes, IdempotentHint: &yes},
			tool.Flags{Untrusted: true, Egress: true, Permissions: []string{"net:api.example.com", "network"}}},
		{[]string{"fs.write:/data"}, &Annotations{ReadOnlyHint: &yes}, tool.Flags{Untrusted: true, Permissions: []string{"fs.write:/data", "filesystem.read", "filesystem.write"}}},
		{[]string{"tools:pay"}, &Annotations{IdempotentHint: &yes}, tool.Flags{Permissions: []string{"tools:pay"}}},
		{[]string{"clock", "random", "env:HOME"}, &Annotations{IdempotentHint: &yes}, tool.Flags{Idempotent: true, Permissions: []string{"clock", "random", "env:HOME"}}},
		{[]string{"kv:notes"}, &Annotations{ReadOnlyHint: &no}, tool.Flags{Permissions: []string{"kv:notes"}}},
	} {
		got := flagsFor(grants(t, c.grants...), c.a, nil)
		if got.Untrusted != c.want.Untrusted || got.Egress != c.want.Egress || got.Idempotent != c.want.Idempotent ||
			!slices.Equal(got.Permissions, c.want.Permissions) {
			t.Errorf("flagsFor(%v, %+v) = %+v, want %+v", c.grants, c.a, got, c.want)
		}
	}
}

func TestParseResult(t *testing.T) {
	t.Parallel()
	out, err := tool.CompileSchema([]byte(`{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, want string }{
		{``, "empty output"},
		{`hello`, "not a JSON object"},
		{`{"content":[{"type":"video"}]}`, `unsupported type "video"`},
		{`{"content":[],"structuredContent":[1]}`, "structuredContent is not a JSON object"},
		{`{"content":[],"structuredContent":{"x":"no"}}`, "does not match the outputSchema: x:"},
		{`{}`, "no content and no structuredContent"},
		{`{"content":[]} x`, "trailing data"},
	} {
		if _, err := parseResult([]byte(c.out), out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.out, err, c.want)
		}
	}
	r, err := parseResult([]byte(`{"structuredContent":{"x":1}}`), out)
	if err != nil || r.Text() != `{"x":1}` {
		t.Errorf("structured only: %+v %v", r, err)
	}
	r, err = parseResult([]byte(`{"content":[{"type":"resource","resource":{"uri":"a","text":"body"}},{"type":"image","data":"AA==","mimeType":"image/png"}],"isError":true,"structuredContent":{"x":"ignored when isError"}}`), out)
	if err != nil || !r.IsError || r.Content[0].Text != "body" || r.Content[1].MIMEType != "image/png" {
		t.Errorf("resource and image: %+v %v", r, err)
	}
}

// TestDescribeSchemaObjectsBounded: the schemas of one describe document
// are bounded together (each compiled subschema holds about a kilobyte; a
// megabyte of empty ones held 357 MiB in a quarantined module's host).
func TestDescribeSchemaObjectsBounded(t *testing.T) {
	var tools []string
	for i := range 20 {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d","description":"d","inputSchema":{"anyOf":[%s{}]}}`, i, strings.Repeat("{},", 1000)))
	}
	doc := `{"tools":[` + strings.Join(tools, ",") + `]}`
	_, _, _, err := parseDescription([]byte(doc))
	if !errors.Is(err, ErrDescribe) || !strings.Contains(err.Error(), "its schemas hold 20040 objects, more than the 16384 allowed") {
		t.Fatalf("parseDescription: %v", err)
	}
	if _, _, _, err := parseDescription([]byte(`{"tools":[` + strings.Join(tools[:10], ",") + `]}`)); err != nil {
		t.Fatalf("ten such tools: %v", err)
	}
}

// TestDescribeRefusesSelfApplyingSchemas: a module (quarantined or not)
// whose tool schema is {"$ref":"#"} is refused at load; validating a call's
// arguments against it recursed until the process died of a stack
// overflow, in the host even for a module run in the sandbox process.
func TestDescribeRefusesSelfApplyingSchemas(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	for _, isolated := range []bool{false, true} {
		_, err := h.Load(t.Context(), Module{Name: "echo", Bytes: wasmFile(t, "echo.wasm"), Isolated: isolated,
			Sidecar: []byte(`{"tools":[{"name":"echo","description":"d","inputSchema":{"$ref":"#"}}]}`)})
		if !errors.Is(err, ErrDescribe) || !strings.Contains(err.Error(), "applies itself to the value it validates") {
			t.Errorf("isolated %v: %v", isolated, err)
		}
	}
	mustEcho(t, h)
}

// TestDescribeCompiledSchemasBounded: schemas each within their bounds
// (patterns of 49 \pL, some 64 000 character ranges, half a megabyte
// compiled) are refused together once the document's compiled schemas
// pass 32 MiB; fewer of them load.
func TestDescribeCompiledSchemasBounded(t *testing.T) {
	doc := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"tools":[`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"name":"t%d","inputSchema":{"type":"object","properties":{"s":{"type":"string","pattern":"%s"}}}}`, i, strings.Repeat(`\\pL`, 49))
		}
		b.WriteString(`]}`)
		return b.String()
	}
	if _, _, _, err := parseDescription([]byte(doc(80))); err == nil || !strings.Contains(err.Error(), "compiled schemas hold more than 32 MiB") {
		t.Errorf("80 schemas of half a megabyte: %v", err)
	}
	if _, _, _, err := parseDescription([]byte(doc(20))); err != nil {
		t.Errorf("20 of them: %v", err)
	}
}
