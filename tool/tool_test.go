package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
)

func specWith(name, schema string) llm.ToolSpec {
	return llm.ToolSpec{Name: name, Description: name, InputSchema: json.RawMessage(schema)}
}

type point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

func TestHandlerOutcomes(t *testing.T) {
	ctx := context.Background()
	call := func(tl tool.Tool) tool.Result {
		t.Helper()
		r, err := tl.Call(ctx, tool.Call{Arguments: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatalf("Go error %v: handler failures are results", err)
		}
		return r
	}
	failing := tool.Must(tool.New("f", "", func(context.Context, struct{}) (string, error) { return "", errors.New("no such city") }))
	if r := call(failing); !r.IsError || r.Text() != "no such city" {
		t.Errorf("handler error: %+v", r)
	}
	panicking := tool.Must(tool.New("p", "", func(context.Context, struct{}) (string, error) { panic("index out of range") }))
	if r := call(panicking); !r.IsError || r.Text() != "tool p panicked: index out of range" {
		t.Errorf("panic: %+v", r)
	}
	structured := tool.Must(tool.New("s", "", func(context.Context, struct{}) (point, error) { return point{1, 2}, nil }))
	r := call(structured)
	if r.IsError || r.Text() != `{"x":1,"y":2}` || string(r.StructuredContent) != `{"x":1,"y":2}` {
		t.Errorf("struct output: %+v", r)
	}
	if !strings.Contains(string(structured.Spec().OutputSchema), `"x"`) {
		t.Errorf("output schema = %s", structured.Spec().OutputSchema)
	}
	list := tool.Must(tool.New("l", "", func(context.Context, struct{}) ([]int, error) { return []int{1, 2}, nil }))
	if r := call(list); r.Text() != "[1,2]" || r.StructuredContent != nil {
		t.Errorf("array output: %+v", r)
	}
	direct := tool.Must(tool.New("d", "", func(context.Context, struct{}) (tool.Result, error) {
		return tool.Result{Content: []tool.Content{{Type: "text", Text: "a"}, {Type: "image", MIMEType: "image/png", Data: "AA=="}}}, nil
	}))
	if r := call(direct); r.Text() != "a\n[image image/png]" {
		t.Errorf("result output: %q", r.Text())
	}
	nilPtr := tool.Must(tool.New("n", "", func(context.Context, struct{}) (*tool.Result, error) { return nil, nil }))
	if r := call(nilPtr); r.IsError || r.Text() != "" {
		t.Errorf("nil *Result: %+v", r)
	}
	ptrIn := tool.Must(tool.New("ptr", "", func(_ context.Context, in *point) (string, error) { return fmt.Sprint(in.X + in.Y), nil }))
	if r, _ := ptrIn.Call(ctx, tool.Call{Arguments: json.RawMessage(`{"x":2,"y":3}`)}); r.Text() != "5" {
		t.Errorf("pointer input: %+v", r)
	}
	if got := string(schemaAt(t, ptrIn, "type").(string)); got != "object" {
		t.Errorf("pointer input schema type %q (must not allow null)", got)
	}
}

func TestNewFromSpecValidates(t *testing.T) {
	var seen string
	tl, err := tool.NewFromSpec(specWith("proxy", `{"type":"object","properties":{"q":{"type":"string","minLength":2}},"required":["q"]}`),
		func(_ context.Context, c tool.Call) (tool.Result, error) {
			seen = string(c.Arguments)
			panic("backend bug")
		})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := tl.Call(context.Background(), tool.Call{Arguments: json.RawMessage(`{"q":"x"}`)})
	if !r.IsError || !strings.HasPrefix(r.Text(), "invalid arguments: q: ") || seen != "" {
		t.Errorf("too short: %q (handler saw %q)", r.Text(), seen)
	}
	r, err = tl.Call(context.Background(), tool.Call{Name: "proxy", Arguments: json.RawMessage(`{"q":"xy"}`)})
	if err != nil || !r.IsError || !strings.Contains(r.Text(), "panicked: backend bug") {
		t.Errorf("panic in spec tool: %+v %v", r, err)
	}
	empty, err := tool.NewFromSpec(llm.ToolSpec{Name: "any"}, func(context.Context, tool.Call) (tool.Result, error) { return tool.Text("ok"), nil })
	if err != nil || string(empty.Spec().InputSchema) != `{"type":"object"}` {
		t.Errorf("empty schema: %v %s", err, empty.Spec().InputSchema)
	}
}

func TestRegistry(t *testing.T) {
	a := tool.Must(tool.New("a", "", func(context.Context, struct{}) (string, error) { return "A", nil }))
	b := tool.Must(tool.New("b", "", func(context.Context, struct{}) (string, error) { return "B", nil }))
	reg, err := tool.NewRegistry(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(a); !errors.Is(err, tool.ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := tool.NewRegistry(a, a); !errors.Is(err, tool.ErrDuplicate) {
		t.Errorf("duplicate at construction: %v", err)
	}
	a2 := tool.Must(tool.New("a", "second", func(context.Context, struct{}) (string, error) { return "A2", nil }))
	if err := reg.Replace(a2); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range reg.Specs() {
		names = append(names, s.Name+":"+s.Description)
	}
	if strings.Join(names, ",") != "a:second,b:" || reg.Len() != 2 {
		t.Errorf("order after Replace = %v", names)
	}
	r, _ := reg.Call(context.Background(), tool.Call{Name: "a", Arguments: json.RawMessage(`{}`)})
	if r.Text() != "A2" {
		t.Errorf("call = %q", r.Text())
	}
	r, err = reg.Call(context.Background(), tool.Call{Name: "zz"})
	if err != nil || !r.IsError || r.Text() != `unknown tool: "zz" (available: [a b])` {
		t.Errorf("unknown tool: %q %v", r.Text(), err)
	}
	if !reg.Remove("a") || reg.Remove("a") || reg.Len() != 1 {
		t.Error("Remove")
	}
	if _, ok := reg.Get("a"); ok {
		t.Error("removed tool still there")
	}
	if err := reg.Add(badName{}); err == nil {
		t.Error("invalid name accepted")
	}
}

type badName struct{}

func (badName) Spec() llm.ToolSpec { return llm.ToolSpec{Name: "no spaces allowed"} }
func (badName) Call(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{}, nil
}

func TestRegistryConcurrentUse(t *testing.T) {
	reg, _ := tool.NewRegistry()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				name := fmt.Sprintf("t%d_%d", g, i)
				_ = reg.Add(tool.Must(tool.New(name, "", func(context.Context, struct{}) (string, error) { return name, nil })))
				_ = reg.Specs()
				r, _ := reg.Call(context.Background(), tool.Call{Name: name, Arguments: json.RawMessage(`{}`)})
				if r.Text() != name {
					t.Errorf("call %s = %q", name, r.Text())
				}
				if i%2 == 0 {
					reg.Remove(name)
				}
			}
		}()
	}
	wg.Wait()
	if reg.Len() != 8*25 || len(reg.Tools()) != 8*25 {
		t.Errorf("len = %d", reg.Len())
	}
}

func TestFlags(t *testing.T) {
	base := tool.Must(tool.New("fetch", "", func(context.Context, struct{}) (string, error) { return "page", nil }))
	if f := tool.FlagsOf(base); f.Untrusted || f.Egress || f.Permissions != nil {
		t.Errorf("plain tool has flags %+v", f)
	}
	perms := []string{"network"}
	flagged := tool.WithFlags(base, tool.Flags{Untrusted: true, Permissions: perms})
	perms[0] = "changed"
	if f := tool.FlagsOf(flagged); !f.Untrusted || f.Permissions[0] != "network" {
		t.Errorf("flags = %+v (permissions must be copied)", f)
	}
	again := tool.WithFlags(flagged, tool.Flags{Egress: true})
	if f := tool.FlagsOf(again); f.Untrusted || !f.Egress {
		t.Errorf("WithFlags must replace, got %+v", f)
	}
	if again.(interface{ Unwrap() tool.Tool }).Unwrap() != base {
		t.Error("re-flagging wrapped the wrapper")
	}
	r, _ := again.Call(context.Background(), tool.Call{Arguments: json.RawMessage(`{}`)})
	if r.Text() != "page" || again.Spec().Name != "fetch" {
		t.Error("flagged tool does not delegate")
	}
}

func TestResultHelpers(t *testing.T) {
	r, err := tool.JSON(map[string]int{"a": 1})
	if err != nil || r.Text() != `{"a":1}` || string(r.StructuredContent) != `{"a":1}` {
		t.Errorf("JSON = %+v %v", r, err)
	}
	if _, err := tool.JSON(make(chan int)); err == nil {
		t.Error("JSON of a channel succeeded")
	}
	only := tool.Result{StructuredContent: json.RawMessage(`{"n":1}`)}
	if only.Text() != `{"n":1}` {
		t.Errorf("structured-only text = %q", only.Text())
	}
	if e := tool.Errorf("bad %d", 3); !e.IsError || e.Text() != "bad 3" {
		t.Errorf("Errorf = %+v", e)
	}
	b, _ := json.Marshal(tool.Errorf("x"))
	if string(b) != `{"content":[{"type":"text","text":"x"}],"isError":true}` {
		t.Errorf("MCP shape = %s", b)
	}
	c := tool.FromLLM(llm.ToolCall{ID: "i", Name: "n", Arguments: json.RawMessage(`{}`)})
	if c.ID != "i" || c.Name != "n" || string(c.Arguments) != "{}" {
		t.Errorf("FromLLM = %+v", c)
	}
	for name, ok := range map[string]bool{"a": true, "snake_case-1": true, "": false, "dot.name": false, strings.Repeat("a", 64): true} {
		if tool.ValidName(name) != ok {
			t.Errorf("ValidName(%q) = %v", name, !ok)
		}
	}
}
