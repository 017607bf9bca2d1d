package pdk

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// withTools swaps the module's registry for the test.
func withTools(t *testing.T, caps []string, ts ...*Tool) {
	t.Helper()
	oldT, oldC := tools, capabilities
	tools, capabilities = ts, caps
	t.Cleanup(func() { tools, capabilities = oldT, oldC })
}

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type sum struct {
	Total int `json:"total"`
}

func TestCall(t *testing.T) {
	withTools(t, nil,
		NewTool("echo", "Echoes.", func(_ context.Context, in echoIn) (string, error) { return in.Text + "<&>", nil }),
		NewTool("sum", "Adds.", func(_ context.Context, in map[string]int) (sum, error) {
			var s sum
			for _, v := range in {
				s.Total += v
			}
			return s, nil
		}),
		NewTool("fail", "Fails.", func(context.Context, echoIn) (string, error) { return "", errors.New("disk full") }),
		NewTool("boom", "Panics.", func(context.Context, echoIn) (*Result, error) { panic("kaboom") }),
		NewTool("raw", "Result.", func(context.Context, echoIn) (Result, error) {
			return Result{Content: []Content{{Type: "image", Data: "AAA=", MIMEType: "image/png"}}}, nil
		}),
	)
	for _, c := range []struct{ in, want string }{
		{`{"params":{"name":"echo","arguments":{"text":"hi"}}}`, `{"content":[{"type":"text","text":"hi<&>"}]}`},
		{`{"params":{"name":"sum","arguments":{"a":1,"b":2}}}`, `{"content":[{"type":"text","text":"{\"total\":3}"}],"structuredContent":{"total":3}}`},
		{`{"params":{"name":"sum","arguments":{"a":"x"}}}`, `{"content":[{"type":"text","text":"invalid arguments: a: want integer, got string"}],"isError":true}`},
		{`{"params":{"name":"fail","arguments":{"text":""}}}`, `{"content":[{"type":"text","text":"disk full"}],"isError":true}`},
		{`{"params":{"name":"boom","arguments":{"text":""}}}`, `{"content":[{"type":"text","text":"tool boom panicked: kaboom"}],"isError":true}`},
		{`{"params":{"name":"raw","arguments":{"text":""}}}`, `{"content":[{"type":"image","data":"AAA=","mimeType":"image/png"}]}`},
		{`{"params":{"name":"nope"}}`, `{"content":[{"type":"text","text":"unknown tool \"nope\" (this module offers: echo, sum, fail, boom, raw)"}],"isError":true}`},
		{`not json`, `{"content":[{"type":"text","text":"invalid call: input must be {\"params\":{\"name\":\"<tool>\",\"arguments\":{...}}}"}],"isError":true}`},
	} {
		if got := string(Call([]byte(c.in))); got != c.want {
			t.Errorf("Call(%s):\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	echo := NewTool("echo", "Echoes.", func(_ context.Context, in echoIn) (string, error) { return in.Text, nil })
	withTools(t, []string{"net:example.com"}, echo.WithAnnotations(Annotations{ReadOnly: true}))
	got, err := Describe()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tools":[{"name":"echo","description":"Echoes.","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"],"additionalProperties":false},"annotations":{"readOnlyHint":true}}],"capabilities":["net:example.com"]}`
	if string(got) != want {
		t.Errorf("Describe:\n got %s\nwant %s", got, want)
	}
}

func TestDescribeErrors(t *testing.T) {
	ok := NewTool("ok", "Fine.", func(context.Context, echoIn) (string, error) { return "", nil })
	for _, c := range []struct {
		tools []*Tool
		want  string
	}{
		{nil, "no tool registered"},
		{[]*Tool{ok, ok}, `two tools are named "ok"`},
		{[]*Tool{ok, nil}, "tool 1 registered is nil"},
		{[]*Tool{NewTool("bad name", "x", func(context.Context, echoIn) (string, error) { return "", nil })}, `invalid tool name "bad name"`},
		{[]*Tool{NewTool("scalar", "x", func(context.Context, string) (string, error) { return "", nil })}, "must be a struct"},
		{[]*Tool{NewTool[echoIn, string]("nilfn", "x", nil)}, "nil function"},
	} {
		withTools(t, nil, c.tools...)
		_, err := Describe()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Describe() = %v, want an error mentioning %q", err, c.want)
		}
	}
}

func TestCapabilitiesOutsideAHost(t *testing.T) {
	if _, err := Get(context.Background(), "https://example.com"); !errors.Is(err, ErrNoHost) {
		t.Errorf("Get = %v, want ErrNoHost", err)
	}
	if _, _, err := KV("notes").Get("k"); !errors.Is(err, ErrNoHost) {
		t.Errorf("KV.Get = %v, want ErrNoHost", err)
	}
	if _, ok := Config("HOME"); ok {
		t.Error("Config sees the process environment outside a host")
	}
	SetVar("v", []byte("1"))
	if v, ok := GetVar("v"); !ok || string(v) != "1" {
		t.Errorf("GetVar = %q, %v", v, ok)
	}
	SetVar("v", nil)
	if _, ok := GetVar("v"); ok {
		t.Error("SetVar(nil) did not delete")
	}
}
