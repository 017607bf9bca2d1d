package memtool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/memtool"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// stubMemory returns fixed recall results or an error, and records k.
type stubMemory struct {
	msgs  []llm.Message
	err   error
	lastK int
}

var _ memory.Memory = (*stubMemory)(nil)

func (s *stubMemory) Compact(ctx context.Context, msgs []llm.Message) ([]llm.Message, *llm.Usage, error) {
	return msgs, nil, nil
}

func (s *stubMemory) Recall(ctx context.Context, q string, k int) ([]llm.Message, error) {
	s.lastK = k
	if s.err != nil {
		return nil, s.err
	}
	return s.msgs, nil
}

func run(t *testing.T, tl tool.Tool, args string) (tool.Result, map[string]any) {
	t.Helper()
	res, err := tl.Call(context.Background(), tool.Call{ID: "1", Name: tl.Spec().Name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("Call(%s): Go error %v; tool failures must be results", args, err)
	}
	var out map[string]any
	if !res.IsError {
		if err := json.Unmarshal([]byte(res.Text()), &out); err != nil {
			t.Fatalf("result is not JSON: %q", res.Text())
		}
	}
	return res, out
}

func TestRecallTool(t *testing.T) {
	long := strings.Repeat("é", 50)
	m := &stubMemory{msgs: []llm.Message{llm.UserText("[Fact #1] token sk-SECRET1234 " + long), llm.UserText("b"), llm.UserText("c")}}
	tl, err := memtool.Recall(m, memtool.Options{MaxPreviewChars: 20, DefaultK: 2, MaxK: 2, Redact: func(s string) string {
		return strings.ReplaceAll(s, "sk-SECRET1234", "[REDACTED]")
	}})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Spec().Name != "recall" || !tool.FlagsOf(tl).Idempotent {
		t.Errorf("spec %q flags %+v", tl.Spec().Name, tool.FlagsOf(tl))
	}
	res, out := run(t, tl, `{"query":"token"}`)
	if res.IsError || m.lastK != 2 {
		t.Fatalf("recall: %q (k=%d)", res.Text(), m.lastK)
	}
	matches := out["matches"].([]any)
	if len(matches) != 2 {
		t.Errorf("matches = %d, want k=2 even if the memory returns more", len(matches))
	}
	first := matches[0].(map[string]any)
	if c := first["content"].(string); c != "[Fact #1] token [RED…" || first["truncated"] != true {
		t.Errorf("first match = %v; want redacted and cut to 20 runes", first)
	}
	if res, _ := run(t, tl, `{"query":"x","k":50}`); res.IsError || m.lastK != 2 {
		t.Errorf("k above MaxK was not clamped: k=%d", m.lastK)
	}
	if res, _ := run(t, tl, `{"query":"  "}`); !res.IsError || !strings.Contains(res.Text(), "query is empty") {
		t.Errorf("empty query: %q", res.Text())
	}
	if res, _ := run(t, tl, `{"q":"x"}`); !res.IsError {
		t.Errorf("unknown argument accepted: %q", res.Text())
	}
	m.err = errors.New("store offline")
	if res, _ := run(t, tl, `{"query":"x"}`); !res.IsError || !strings.Contains(res.Text(), "store offline") {
		t.Errorf("memory error: %q", res.Text())
	}
}

func TestAllMatchesCapabilities(t *testing.T) {
	b, _ := memory.NewBuffer(memory.BufferOptions{})
	tools, err := memtool.All(b, memtool.Options{})
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools for a Buffer = %d, %v; want recall only", len(tools), err)
	}
	f, _ := memory.NewFact(context.Background(), memory.FactOptions{})
	tools, _ = memtool.All(f, memtool.Options{RecallName: "search_memory"})
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Spec().Name)
	}
	if strings.Join(names, ",") != "search_memory,remember,forget" {
		t.Errorf("tools for a Fact = %v", names)
	}
	if _, err := memtool.All(f, memtool.Options{DefaultK: 9, MaxK: 3}); err == nil {
		t.Error("DefaultK above MaxK accepted")
	}
	if _, err := memtool.All(f, memtool.Options{Source: "martian"}); err == nil {
		t.Error("unknown source accepted")
	}
}

func TestRememberTool(t *testing.T) {
	f, _ := memory.NewFact(context.Background(), memory.FactOptions{})
	tl, _ := memtool.Remember(f, memtool.Options{MaxFactChars: 40})
	res, out := run(t, tl, `{"fact":"Rent is 743 euros.","subject":"user"}`)
	if res.IsError || out["stored"] != true {
		t.Fatalf("remember: %q", res.Text())
	}
	if fact := out["fact"].(map[string]any); fact["id"] != float64(1) || fact["source"] != "agent" || fact["subject"] != "user" {
		t.Errorf("stored fact = %v", fact)
	}
	if got := f.Facts(false); len(got) != 1 || got[0].Source != memory.SourceAgent {
		t.Errorf("memory holds %+v", got)
	}
	if res, _ := run(t, tl, `{"fact":"`+strings.Repeat("x", 41)+`"}`); !res.IsError || !strings.Contains(res.Text(), "under 40") {
		t.Errorf("overlong fact: %q", res.Text())
	}
	if res, _ := run(t, tl, `{"fact":"   "}`); !res.IsError || !strings.Contains(res.Text(), "empty") {
		t.Errorf("blank fact: %q", res.Text())
	}
}

func forgetMemory(t *testing.T, answers ...scripted.Turn) *memory.Fact {
	t.Helper()
	f, err := memory.NewFact(context.Background(), memory.FactOptions{Provider: scripted.New(answers...)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Lives at 4 Elm Road.", "Likes jazz.", "Phone is 0611."} {
		_, _ = f.Remember(context.Background(), s, "user", "")
	}
	return f
}

func TestForgetToolConfirmation(t *testing.T) {
	f := forgetMemory(t, scripted.Turn{Text: `{"forget":[1,3],"reason":"contact details"}`})
	tl, _ := memtool.Forget(f, memtool.Options{})
	res, out := run(t, tl, `{"instruction":"forget my contact details"}`)
	if res.IsError || out["erased"] != false || out["pending_confirmation"] != true || out["count"] != float64(2) {
		t.Fatalf("dry run: %q", res.Text())
	}
	if !strings.Contains(out["next_step"].(string), "confirm_ids") || len(f.Facts(false)) != 3 {
		t.Fatalf("dry run erased something or gave no next step: %q", res.Text())
	}
	// An id the dry run did not propose is refused, and nothing is erased.
	if res, _ := run(t, tl, `{"instruction":"x","confirm_ids":[1,2]}`); !res.IsError || !strings.Contains(res.Text(), "fact 2 was not proposed") {
		t.Fatalf("unproposed id: %q", res.Text())
	}
	if len(f.Facts(false)) != 3 {
		t.Fatal("a refused confirmation erased facts")
	}
	res, out = run(t, tl, `{"instruction":"forget my contact details","confirm_ids":[3]}`)
	if res.IsError || out["erased"] != true || out["count"] != float64(1) {
		t.Fatalf("confirmed erase: %q", res.Text())
	}
	// The confirmation lists what was erased, as the dry run showed it.
	if facts, _ := out["facts"].([]any); len(facts) != 1 || facts[0].(map[string]any)["fact"] != "Phone is 0611." {
		t.Errorf("confirmation lists %v, want fact 3 with its text", out["facts"])
	}
	if got := f.Facts(false); len(got) != 2 || got[1].Text != "Likes jazz." && got[0].Text != "Likes jazz." {
		t.Errorf("facts after confirming 3: %+v", got)
	}
	// A confirmed id cannot be confirmed twice.
	if res, _ := run(t, tl, `{"instruction":"x","confirm_ids":[3]}`); !res.IsError {
		t.Errorf("second confirmation of the same id: %q", res.Text())
	}
}

func TestForgetToolImmediateAndErrors(t *testing.T) {
	f := forgetMemory(t, scripted.Turn{Text: `{"forget":[2]}`}, scripted.Turn{Text: "not json"})
	tl, _ := memtool.Forget(f, memtool.Options{ForgetImmediately: true})
	res, out := run(t, tl, `{"instruction":"forget that I like jazz"}`)
	if res.IsError || out["erased"] != true || len(f.Facts(false)) != 2 {
		t.Fatalf("immediate forget: %q", res.Text())
	}
	res, _ = run(t, tl, `{"instruction":"forget my phone"}`)
	if !res.IsError || !strings.Contains(res.Text(), "nothing was deleted") || len(f.Facts(false)) != 2 {
		t.Errorf("unclear model answer: %q", res.Text())
	}
	if res, _ := run(t, tl, `{"instruction":"x","confirm_ids":[1]}`); !res.IsError {
		t.Errorf("confirm_ids on an immediate tool: %q", res.Text())
	}
}
