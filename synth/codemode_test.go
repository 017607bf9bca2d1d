package synth

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// gate stands for the embedding application's policy: it sees every call
// a guest makes to a host tool, and refuses some.
type gate struct {
	mu    sync.Mutex
	calls []string
}

var (
	codeModeOnce sync.Once
	codeModeHost *host.Host
	codeModeGate = &gate{}
	codeModeErr  error
)

// gatedHost is one host for the code-mode tests, whose tool_call goes
// through codeModeGate.
func gatedHost(t *testing.T) (*host.Host, *gate) {
	t.Helper()
	codeModeOnce.Do(func() {
		codeModeHost, codeModeErr = host.New(context.Background(), host.Options{CallTool: codeModeGate.call})
	})
	if codeModeErr != nil {
		t.Fatal(codeModeErr)
	}
	codeModeGate.mu.Lock()
	codeModeGate.calls = nil
	codeModeGate.mu.Unlock()
	return codeModeHost, codeModeGate
}

func (g *gate) call(_ context.Context, c tool.Call) (tool.Result, error) {
	g.mu.Lock()
	g.calls = append(g.calls, c.Name+" "+string(c.Arguments))
	g.mu.Unlock()
	if strings.Contains(string(c.Arguments), "secret") {
		return tool.Errorf("denied by policy: secrets stay on the host"), nil
	}
	return tool.JSON(map[string]any{"city": "Oslo", "temp": 21})
}

func TestCodeModeCallsHostToolsThroughTheGate(t *testing.T) {
	ctx := context.Background()
	h, g := gatedHost(t)
	ceiling, _ := manifestGrants([]string{"tools:weather"})
	sources := map[string]string{
		"js": `function run(a) { return tools.call("weather", {city: a.city}).temp }`,
		"go": "package main\n\nfunc run(args map[string]any) (any, error) {\n\tv, err := callTool(\"weather\", map[string]any{\"city\": args[\"city\"]})\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\treturn v.(map[string]any)[\"temp\"], nil\n}\n",
	}
	for _, lang := range []string{"js", "go"} {
		t.Run(lang, func(t *testing.T) {
			w := scripted.New(turn(draft{Name: "temp", Source: sources[lang], Capabilities: []string{"tools:weather"}}))
			b, err := New(Options{Host: h, Writer: w, Ceiling: ceiling, NoStaging: true, Language: lang, Progress: os.Stderr})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close(ctx)
			tl, err := b.Build(ctx, Request{Capability: "temperature of a city"})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			res, err := tl.Call(ctx, tool.Call{Name: "temp", Arguments: json.RawMessage(`{"city":"Oslo"}`)})
			if err != nil || res.IsError || res.Text() != "21" {
				t.Fatalf("call: %s %v", res.Text(), err)
			}
			res, _ = tl.Call(ctx, tool.Call{Name: "temp", Arguments: json.RawMessage(`{"city":"secret"}`)})
			if !res.IsError || !strings.Contains(res.Text(), "denied by policy") {
				t.Fatalf("the gate's refusal did not reach the guest: %s", res.Text())
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			if len(g.calls) < 2 || !strings.HasPrefix(g.calls[len(g.calls)-1], `weather {"city":"secret"}`) {
				t.Fatalf("gate saw %v", g.calls)
			}
		})
	}
}

func TestCodeModeNeedsTheGrant(t *testing.T) {
	// Without a tools: grant the JavaScript engine has no bridge at all.
	b := newBuilder(t, scripted.New(turn(draft{Name: "t", Source: `function run() { return tools.call("weather", {}) }`})), nil)
	tl, err := b.Build(context.Background(), Request{Capability: "x"})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := tl.Call(context.Background(), tool.Call{Name: "t", Arguments: json.RawMessage(`{}`)})
	if !res.IsError || !strings.Contains(res.Text(), "without the host-tool bridge") {
		t.Fatalf("result %s", res.Text())
	}
	// Granted one tool, it cannot call another.
	ctx := context.Background()
	h, g := gatedHost(t)
	ceiling, _ := manifestGrants([]string{"tools:weather"})
	w := scripted.New(turn(draft{Name: "t", Source: `function run() { return tools.call("delete_files", {}) }`, Capabilities: []string{"tools:weather"}}))
	b2, err := New(Options{Host: h, Writer: w, Ceiling: ceiling, NoStaging: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close(ctx)
	tl, err = b2.Build(ctx, Request{Capability: "x"})
	if err != nil {
		t.Fatal(err)
	}
	res, _ = tl.Call(ctx, tool.Call{Name: "t", Arguments: json.RawMessage(`{}`)})
	g.mu.Lock()
	defer g.mu.Unlock()
	if !res.IsError || !strings.Contains(res.Text(), "no tools:delete_files grant") || len(g.calls) != 0 {
		t.Fatalf("result %s, gate saw %v", res.Text(), g.calls)
	}
}
