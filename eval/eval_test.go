package eval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/eval"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// answers is a provider that gives, per prompt, the next of a list of
// answers, with usage 10 in + 5 out unless noUsage.
type answers struct {
	mu      sync.Mutex
	byCase  map[string][]string
	noUsage map[string]bool
}

func (a *answers) Complete(_ context.Context, req *llm.Request) (*llm.Response, error) {
	prompt := req.Messages[len(req.Messages)-1].Text()
	a.mu.Lock()
	list := a.byCase[prompt]
	text := list[0]
	a.byCase[prompt] = append(list[1:], list[0])
	a.mu.Unlock()
	resp := &llm.Response{Message: llm.AssistantText(text), FinishReason: llm.FinishStop}
	if !a.noUsage[prompt] {
		resp.Usage = &llm.Usage{InputTokens: 10, OutputTokens: 5}
	}
	return resp, nil
}

func (a *answers) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, a.Complete)
}

func yesCase(id string) eval.Case {
	yes := "yes"
	return eval.Case{ID: id, Prompt: id, Expect: eval.Expect{OutputEquals: &yes}}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// The statistics against values computed by hand: A passes 4/4, B 3/4, C
// 0/4.
func TestRunKStatistics(t *testing.T) {
	p := &answers{byCase: map[string][]string{
		"A": {"yes", "yes", "yes", "yes"},
		"B": {"yes", "no", "yes", "yes"},
		"C": {"no", "no", "no", "no"},
	}}
	newAgent := func(context.Context, *eval.Case, int) (*loop.Agent, error) { return &loop.Agent{Provider: p}, nil }
	cases := []eval.Case{yesCase("A"), yesCase("B"), yesCase("C")}
	tariff := func(u llm.Usage) float64 { return float64(u.InputTokens)*0.001 + float64(u.OutputTokens)*0.002 }
	rep, err := eval.RunK(context.Background(), newAgent, cases, eval.Options{K: 4, Tariff: tariff, TokenBudget: 15})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 12 || !near(rep.PassAt1, 7.0/12) || !near(rep.PassHatK, 1.0/3) || !near(rep.PassAtK, 2.0/3) {
		t.Errorf("runs %d, pass@1 %v, pass^k %v, pass@k %v; want 12, 7/12, 1/3, 2/3", rep.Runs, rep.PassAt1, rep.PassHatK, rep.PassAtK)
	}
	// pass^j for j = 1..4: B passed 3 of 4, so j runs drawn from its 4
	// all pass with chance C(3,j)/C(4,j): 3/4, 1/2, 1/4, 0; A adds 1, C 0.
	wantCurve := []float64{7.0 / 12, 1.5 / 3, 1.25 / 3, 1.0 / 3}
	if len(rep.PassHatCurve) != 4 {
		t.Fatalf("pass^j curve %v, want 4 points", rep.PassHatCurve)
	}
	for j, w := range wantCurve {
		if !near(rep.PassHatCurve[j], w) {
			t.Errorf("pass^%d = %v, want %v", j+1, rep.PassHatCurve[j], w)
		}
	}
	// 12 runs of 15 tokens, 7 successes; each run costs 0.01 + 0.01.
	if rep.TokensPerSuccess == nil || !near(*rep.TokensPerSuccess, 180.0/7) {
		t.Errorf("tokens per success %v, want 180/7", rep.TokensPerSuccess)
	}
	if rep.CostPerSuccess == nil || !near(*rep.CostPerSuccess, 0.24/7) {
		t.Errorf("cost per success %v, want 0.24/7", rep.CostPerSuccess)
	}
	if rep.PassHatKAtBudget == nil || !near(*rep.PassHatKAtBudget, 1.0/3) {
		t.Errorf("pass^k at 15 tokens %v, want 1/3", rep.PassHatKAtBudget)
	}
	want := []struct {
		id     string
		passes int
		tokens int64
	}{{"A", 4, 60}, {"B", 3, 60}, {"C", 0, 60}}
	for i, w := range want {
		c := rep.Cases[i]
		if c.ID != w.id || c.Passes != w.passes || c.Runs != 4 || c.Tokens == nil || *c.Tokens != w.tokens {
			t.Errorf("case %d: %+v, want %+v", i, c, w)
		}
	}
	if f := rep.Cases[1].Failures; len(f) != 1 || f[0].Run != 1 || !strings.Contains(f[0].Reason, `want "yes"`) || len(f[0].Timeline) != 1 ||
		f[0].Timeline[0].Text != "no" || f[0].Tokens == nil || *f[0].Tokens != 15 || rep.Cases[1].Results != nil {
		t.Errorf("B's failures %+v (a failed run keeps its reason and timeline; no Results without KeepResults)", f)
	}
	// KeepResults keeps every run, and the failed runs' Results.
	kept, err := eval.RunK(context.Background(), newAgent, cases, eval.Options{K: 4, KeepResults: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := kept.Cases[1].Results; len(r) != 4 || r[1].Pass || r[1].Result == nil || r[1].Result.Output != "no" || !r[0].Pass || r[0].Result != nil {
		t.Errorf("KeepResults: runs %+v", r)
	}
	// A budget under a run's 15 tokens: nothing passes within it.
	rep, _ = eval.RunK(context.Background(), newAgent, cases, eval.Options{K: 4, TokenBudget: 14})
	if rep.PassHatKAtBudget == nil || *rep.PassHatKAtBudget != 0 {
		t.Errorf("pass^k at 14 tokens %v, want 0", rep.PassHatKAtBudget)
	}
}

// k = 1: pass^1 = pass@1 = pass@1's mean.
func TestRunKWithKOne(t *testing.T) {
	p := &answers{byCase: map[string][]string{"A": {"yes"}, "B": {"no"}}}
	rep, err := eval.RunK(context.Background(), func(context.Context, *eval.Case, int) (*loop.Agent, error) { return &loop.Agent{Provider: p}, nil }, []eval.Case{yesCase("A"), yesCase("B")}, eval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.K != 1 || rep.PassAt1 != 0.5 || rep.PassHatK != 0.5 || rep.PassAtK != 0.5 || *rep.TokensPerSuccess != 30 {
		t.Errorf("%+v", rep)
	}
	if len(rep.PassHatCurve) != 1 || rep.PassHatCurve[0] != 0.5 {
		t.Errorf("pass^j curve %v, want [0.5]", rep.PassHatCurve)
	}
}

// The factory learns the case and the run's index, so one case's runs
// can differ (the scripted suites of autoagent eval); case files resolve
// scripts beside themselves.
func TestRunKRunIndex(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cases.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"flaky","prompt":"p","scripts":["good.json","good.json","bad.json"],"expect":{"output_equals":"yes"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases, err := eval.LoadCases(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := cases[0].Scripts[2]; got != filepath.Join(dir, "bad.json") {
		t.Fatalf("script path %q, want it beside the case file", got)
	}
	var mu sync.Mutex
	seen := map[int]int{}
	newAgent := func(_ context.Context, c *eval.Case, run int) (*loop.Agent, error) {
		mu.Lock()
		seen[run]++
		mu.Unlock()
		text := "yes"
		if filepath.Base(c.Scripts[run%len(c.Scripts)]) == "bad.json" {
			text = "no"
		}
		return &loop.Agent{Provider: scripted.New(scripted.Turn{Text: text})}, nil
	}
	rep, err := eval.RunK(context.Background(), newAgent, cases, eval.Options{K: 6, Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Runs 2 and 5 play bad.json.
	if c := rep.Cases[0]; c.Passes != 4 || len(c.Failures) != 2 || c.Failures[0].Run != 2 || c.Failures[1].Run != 5 {
		t.Errorf("passes %d, failures %+v; want 4 with runs 2 and 5 failing", c.Passes, c.Failures)
	}
	for r := range 6 {
		if seen[r] != 1 {
			t.Errorf("run %d built %d agents, want 1", r, seen[r])
		}
	}
	if rep.PassHatK != 0 || !near(rep.PassAt1, 4.0/6) {
		t.Errorf("pass^6 %v, pass@1 %v; want 0 and 2/3", rep.PassHatK, rep.PassAt1)
	}
}

// Unreported usage: the figures that need it are unknown (nil, null in
// JSON), never zero; the case with known usage keeps its tokens.
func TestRunKUnknownUsage(t *testing.T) {
	p := &answers{byCase: map[string][]string{"A": {"yes"}, "B": {"yes"}}, noUsage: map[string]bool{"B": true}}
	rep, err := eval.RunK(context.Background(), func(context.Context, *eval.Case, int) (*loop.Agent, error) { return &loop.Agent{Provider: p}, nil }, []eval.Case{yesCase("A"), yesCase("B")},
		eval.Options{K: 2, Tariff: func(llm.Usage) float64 { return 1 }, TokenBudget: 100})
	if err != nil {
		t.Fatal(err)
	}
	if rep.TokensPerSuccess != nil || rep.CostPerSuccess != nil || rep.PassHatKAtBudget != nil {
		t.Errorf("figures from unknown usage: %v %v %v", rep.TokensPerSuccess, rep.CostPerSuccess, rep.PassHatKAtBudget)
	}
	if rep.Cases[0].Tokens == nil || *rep.Cases[0].Tokens != 30 || rep.Cases[1].Tokens != nil {
		t.Errorf("case tokens %v %v", rep.Cases[0].Tokens, rep.Cases[1].Tokens)
	}
	b, _ := json.Marshal(rep)
	if !strings.Contains(string(b), `"tokens_per_success":null`) || !strings.Contains(string(b), `"tokens":null`) {
		t.Errorf("JSON: %s", b)
	}
}

// Many cases, concurrently: every run counted once (under -race).
func TestRunKConcurrent(t *testing.T) {
	p := &answers{byCase: map[string][]string{}}
	var cases []eval.Case
	for i := range 20 {
		id := fmt.Sprint("c", i)
		p.byCase[id] = []string{"yes", "no"}[i%2 : i%2+1]
		cases = append(cases, yesCase(id))
	}
	rep, err := eval.RunK(context.Background(), func(context.Context, *eval.Case, int) (*loop.Agent, error) { return &loop.Agent{Provider: p}, nil }, cases, eval.Options{K: 5, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 100 || rep.PassAt1 != 0.5 || rep.PassHatK != 0.5 {
		t.Errorf("%d runs, pass@1 %v, pass^k %v", rep.Runs, rep.PassAt1, rep.PassHatK)
	}
	if _, err := eval.RunK(context.Background(), func(context.Context, *eval.Case, int) (*loop.Agent, error) { return nil, errors.New("no key") }, cases, eval.Options{}); err == nil || !strings.Contains(err.Error(), "no key") {
		t.Errorf("an agent that cannot be built: %v", err)
	}
	if _, err := eval.RunK(context.Background(), nil, nil, eval.Options{}); !errors.Is(err, eval.ErrNoCases) {
		t.Errorf("no cases: %v", err)
	}
}

// Each matcher, on a run that called lookup then send.
func TestMatchers(t *testing.T) {
	model := func() *scripted.Provider {
		return scripted.NewWithOptions(scripted.Options{PerConversation: true},
			scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "1", Name: "lookup", Arguments: json.RawMessage(`{"id":7,"full":true}`)}, {ID: "2", Name: "send", Arguments: json.RawMessage(`{}`)}}, Usage: &llm.Usage{InputTokens: 50, OutputTokens: 5}},
			scripted.Turn{Text: `{"order":{"id":7,"items":["a","b"]},"ok":true}`, Usage: &llm.Usage{InputTokens: 60, OutputTokens: 10}},
		)
	}
	for _, tt := range []struct {
		expect string
		fail   string // "" when it must pass
	}{
		{`{"output_contains": ["order", "ok"]}`, ""},
		{`{"output_contains": "nope"}`, `does not contain "nope"`},
		{`{"output_regex": "\"id\":7"}`, ""},
		{`{"structured_equals": {"ok": true, "order": {"items": ["a","b"], "id": 7}}}`, ""},
		{`{"json_path": {"$.order.items[1]": "b", "$.ok": true}}`, ""},
		{`{"json_path": {"$.order.id": 8}}`, "json_path $.order.id is 7, want 8"},
		{`{"tool_called": "lookup"}`, ""},
		{`{"tool_called": {"name": "lookup", "args": {"id": 7}}}`, ""},
		{`{"tool_called": {"name": "lookup", "args": {"id": 8}}}`, "no call of lookup"},
		{`{"tool_not_called": "delete"}`, ""},
		{`{"tool_not_called": ["send"]}`, "send was called"},
		{`{"tool_order": ["lookup", "send"]}`, ""},
		{`{"tool_order": ["send", "lookup"]}`, "tool_order"},
		{`{"max_steps": 2}`, ""},
		{`{"max_steps": 1}`, "2 steps, more than 1"},
		{`{"max_tokens": 125}`, ""},
		{`{"max_tokens": 100}`, "125 tokens, more than 100"},
		{`{"stop_reason": "max_steps"}`, `stop_reason "done", want "max_steps"`},
	} {
		cases, err := eval.ReadCases(strings.NewReader(`{"id":"x","prompt":"go","expect":`+tt.expect+`}`), "cases.jsonl")
		if err != nil {
			t.Fatalf("%s: %v", tt.expect, err)
		}
		a := &loop.Agent{Provider: model(), Tools: nil}
		res, runErr := a.Run(context.Background(), "go")
		err = cases[0].Judge(res, runErr)
		switch {
		case tt.fail == "" && err != nil:
			t.Errorf("%s: %v", tt.expect, err)
		case tt.fail != "" && (err == nil || !strings.Contains(err.Error(), tt.fail)):
			t.Errorf("%s: %v, want a failure saying %q", tt.expect, err, tt.fail)
		}
	}
}

// A case file's errors name the file and the line.
func TestReadCasesErrors(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"{\"id\":\"a\",\"prompt\":\"p\"}\n\n{\"id\":\"b\",\"prompt\":\"p\",\"expect\":{\"output_equal\":\"x\"}}", `cases.jsonl:3: unknown field "output_equal"`},
		{"# comment\n{\"id\":\"a\",\"prompt\":\"p\",\"colour\":1}", `cases.jsonl:2: unknown field "colour"`},
		{"{\"prompt\":\"p\"}", "cases.jsonl:1: a case needs an \"id\""},
		{"{\"id\":\"a\"}", `cases.jsonl:1: case "a" needs a "prompt"`},
		{"{\"id\":\"a\",\"prompt\":\"p\"}\n{\"id\":\"a\",\"prompt\":\"q\"}", `cases.jsonl:2: case "a" is also on line 1`},
		{"{\"id\":\"a\",\"prompt\":\"p\",\"expect\":{\"output_regex\":\"(\"}}", "cases.jsonl:1: case \"a\": output_regex"},
		{"{\"id\":\"a\",\"prompt\":\"p\",\"expect\":{\"json_path\":{\"a.b\":1}}}", `cases.jsonl:1: case "a": json_path "a.b"`},
		{"{\"id\":\"a\",\"prompt\":\"p\",\"expect\":{\"tool_called\":{\"nom\":\"x\"}}}", "cases.jsonl:1:"},
		{"{not json", "cases.jsonl:1:"},
	} {
		_, err := eval.ReadCases(strings.NewReader(tt.text), "cases.jsonl")
		var ce *eval.CaseError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v; want an error containing %q", tt.text, err, tt.want)
		}
	}
}

// Progress is told of each case as its k runs end, once, in order of
// completion.
func TestRunKProgress(t *testing.T) {
	p := &answers{byCase: map[string][]string{"A": {"yes"}, "B": {"yes"}, "C": {"no"}}}
	var seen []int
	opts := eval.Options{K: 2, Concurrency: 2, Progress: func(done, total int) {
		if total != 3 {
			t.Errorf("total %d, want 3", total)
		}
		seen = append(seen, done) // calls are serialised
	}}
	newAgent := func(context.Context, *eval.Case, int) (*loop.Agent, error) { return &loop.Agent{Provider: p}, nil }
	if _, err := eval.RunK(context.Background(), newAgent, []eval.Case{yesCase("A"), yesCase("B"), yesCase("C")}, opts); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[1 2 3]" {
		t.Errorf("progress %v, want [1 2 3]", seen)
	}
}

// A case's failures keep timelines of their own: each numbered from 1,
// each with its own turns, and growing one never touches the next (they
// share one allocation).
func TestFailureTimelinesAreApart(t *testing.T) {
	lookup, _ := tool.New("lookup", "Look up.", func(context.Context, struct{}) (string, error) {
		return "found with key sk-proj-abcdefghijklmnopqrstuvwxyz0123 " + strings.Repeat("x", 500), nil
	})
	reg := &tool.Registry{}
	if err := reg.Add(lookup); err != nil {
		t.Fatal(err)
	}
	newAgent := func(_ context.Context, _ *eval.Case, run int) (*loop.Agent, error) {
		turns := []scripted.Turn{{Text: "no"}}
		if run == 0 {
			turns = []scripted.Turn{{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "lookup", Arguments: json.RawMessage(`{}`)}}}, {Text: "still no"}}
		}
		return &loop.Agent{Provider: scripted.New(turns...), Tools: reg}, nil
	}
	rep, err := eval.RunK(context.Background(), newAgent, []eval.Case{yesCase("A")}, eval.Options{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Cases[0].Failures
	if len(f) != 2 || len(f[0].Timeline) != 2 || len(f[1].Timeline) != 1 {
		t.Fatalf("failures %+v", f)
	}
	if s := f[0].Timeline; s[0].Step != 1 || len(s[0].Calls) != 1 || !strings.HasPrefix(s[0].Calls[0].Result, "found with key ") || s[1].Step != 2 || s[1].Text != "still no" {
		t.Errorf("run 1's timeline %+v", s)
	}
	// A report is shared: the key is redacted, and the text cut.
	if r := f[0].Timeline[0].Calls[0].Result; strings.Contains(r, "abcdefghijklmnop") || utf8.RuneCountInString(r) > 403 || !strings.HasSuffix(r, "...") {
		t.Errorf("the result in the timeline: %q", r)
	}
	if s := f[1].Timeline; s[0].Step != 1 || s[0].Text != "no" {
		t.Errorf("run 2's timeline %+v", s)
	}
	_ = append(f[0].Timeline, eval.TimelineStep{Text: "appended"})
	if f[1].Timeline[0].Text != "no" {
		t.Error("growing one failure's timeline overwrote the next one's")
	}
}
