package loop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// manyTools is n tools of a plausible catalogue, plus weather (which
// counts its calls in ran).
func manyTools(t testing.TB, n int, ran *atomic.Int32) []tool.Tool {
	t.Helper()
	areas := []string{"invoice", "customer", "ticket", "shipment", "contract", "employee", "inventory", "payment"}
	verbs := []string{"lookup", "create", "update", "archive", "export"}
	var out []tool.Tool
	for i := 0; len(out) < n-1; i++ {
		area, verb := areas[i%len(areas)], verbs[(i/len(areas))%len(verbs)]
		name := fmt.Sprintf("%s_%s_%d", verb, area, i)
		spec := llm.ToolSpec{Name: name, Description: fmt.Sprintf("%s a %s record in system %d of the back office: give its id and the fields to change.", verb, area, i),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"%s_id":{"type":"string","description":"the %s's id"},"fields":{"type":"object"},"reason":{"type":"string"}},"required":["%s_id"]}`, area, area, area))}
		tl, err := tool.NewFromSpec(spec, func(context.Context, tool.Call) (tool.Result, error) { return tool.Text("ok"), nil })
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tl)
	}
	weather, err := tool.New("weather", "Current weather and forecast for a city.", func(_ context.Context, in struct {
		City string `json:"city" jsonschema:"the city"`
	}) (string, error) {
		ran.Add(1)
		return "sunny in " + in.City, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return append(out, weather)
}

// With more tools than the threshold, the model is offered find_tools; a
// tool not found yet is refused naming find_tools; find_tools reveals the
// matches, which are then offered and callable, and stay revealed in the
// run's state.
func TestToolSearch(t *testing.T) {
	var ran atomic.Int32
	model := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("a", "weather", `{"city":"Oslo"}`)}},
		scripted.Turn{ToolCalls: []llm.ToolCall{call("b", loop.FindToolsName, `{"query":"weather forecast for a city","limit":2}`)}},
		scripted.Turn{ToolCalls: []llm.ToolCall{call("c", "weather", `{"city":"Oslo"}`)}},
		scripted.Turn{Text: "sunny"},
	)
	a := &loop.Agent{Provider: model, Tools: nestedRegistry(t, manyTools(t, 30, &ran)...)}
	res, err := a.Run(context.Background(), "weather in Oslo?")
	if err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != loop.FindToolsName {
		t.Fatalf("first request offers %d tools: %v", len(reqs[0].Tools), reqs[0].Tools)
	}
	if got := toolResultText(res.Messages, "a"); !strings.HasPrefix(got, "ToolNotOffered:") || !strings.Contains(got, loop.FindToolsName) {
		t.Errorf("an unrevealed call: %q", got)
	}
	if got := toolResultText(res.Messages, "b"); !strings.Contains(got, "- weather: Current weather") {
		t.Errorf("find_tools: %q", got)
	}
	names := func(specs []llm.ToolSpec) (out []string) {
		for _, s := range specs {
			out = append(out, s.Name)
		}
		return out
	}
	if got := names(reqs[2].Tools); len(got) > 3 || got[0] != loop.FindToolsName || !strings.Contains(strings.Join(got, ","), "weather") {
		t.Errorf("after find_tools the model is offered %v", got)
	}
	if ran.Load() != 1 || toolResultText(res.Messages, "c") != "sunny in Oslo" {
		t.Errorf("weather ran %d times; %q", ran.Load(), toolResultText(res.Messages, "c"))
	}
	if !strings.Contains(strings.Join(res.State.Revealed, ","), "weather") || res.State.ToolCalls != 2 {
		t.Errorf("state: revealed %v, tool calls %d (find_tools does not count)", res.State.Revealed, res.State.ToolCalls)
	}
	// Negative threshold: every tool offered.
	a = &loop.Agent{Provider: scripted.New(scripted.Turn{Text: "x"}), Tools: a.Tools, ToolSearchThreshold: -1}
	a.Run(context.Background(), "x")
	if p := a.Provider.(*scripted.Provider); len(p.Requests()[0].Tools) != 30 {
		t.Errorf("without search: %d tools offered", len(p.Requests()[0].Tools))
	}
}

// BenchmarkToolSearchRequestSize reports what a run over 200 tools sends
// as tool definitions, with and without tool search: bytes, and tokens
// estimated at 4 bytes each, over a 3-step run (find, call, answer).
func BenchmarkToolSearchRequestSize(b *testing.B) {
	var ran atomic.Int32
	tools := manyTools(b, 200, &ran)
	for _, mode := range []struct {
		name      string
		threshold int
	}{{"All", -1}, {"Search", 0}} {
		b.Run(mode.name, func(b *testing.B) {
			var bytes int
			for b.Loop() {
				model := scripted.New(
					scripted.Turn{ToolCalls: []llm.ToolCall{call("b", loop.FindToolsName, `{"query":"weather forecast"}`)}},
					scripted.Turn{ToolCalls: []llm.ToolCall{call("c", "weather", `{"city":"Oslo"}`)}},
					scripted.Turn{Text: "sunny"},
				)
				reg, _ := tool.NewRegistry(tools...)
				a := &loop.Agent{Provider: model, Tools: reg, ToolSearchThreshold: mode.threshold}
				if _, err := a.Run(context.Background(), "weather?"); err != nil {
					b.Fatal(err)
				}
				bytes = 0
				for _, r := range model.Requests() {
					j, _ := json.Marshal(r.Tools)
					bytes += len(j)
				}
			}
			b.ReportMetric(float64(bytes), "tool-bytes/run")
			b.ReportMetric(float64(bytes)/4, "tool-tokens/run")
		})
	}
}
