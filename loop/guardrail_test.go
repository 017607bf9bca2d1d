package loop_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/policy"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

func check(t *testing.T, g loop.Guardrail, stage loop.GuardStage, text string) loop.GuardVerdict {
	t.Helper()
	v, err := g.Check(context.Background(), &loop.GuardCheck{Stage: stage, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPIIGuardrail(t *testing.T) {
	g := loop.PIIGuardrail(false)
	for _, tt := range []struct{ in, want string }{
		{"write to ada@example.org today", "write to [email] today"},
		{"card 4111 1111 1111 1111 expires", "card [card] expires"},
		{"not a card 4111 1111 1111 1112", "not a card 4111 1111 1111 1112"},
		{"IBAN GB82 WEST 1234 5698 7654 32 please", "IBAN [iban] please"},
		{"bad IBAN GB83 WEST 1234 5698 7654 32", "bad IBAN GB83 WEST 1234 5698 7654 32"},
		{"call +47 22 33 44 55 or (555) 123-4567 or 06 12 34 56 78", "call [phone] or [phone] or [phone]"},
		{"+1 (555) 123-4567", "[phone]"},
		{"on 2026-12-02, order 12345678", "on 2026-12-02, order 12345678"},
	} {
		v := check(t, g, loop.GuardOutput, tt.in)
		got := tt.in
		if v.Action == loop.GuardRedact {
			got = v.Text
		}
		if got != tt.want {
			t.Errorf("%q → %q (%s), want %q", tt.in, got, v.Action, tt.want)
		}
	}
	if v := check(t, loop.PIIGuardrail(true), loop.GuardInput, "ada@example.org"); v.Action != loop.GuardBlock || !strings.Contains(v.Reason, "email") {
		t.Errorf("blocking PII: %+v", v)
	}
}

func TestSecretsDenyAndLengthGuardrails(t *testing.T) {
	if v := check(t, loop.SecretsGuardrail(false), loop.GuardToolResult, "key: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"); v.Action != loop.GuardRedact || strings.Contains(v.Text, "sk-proj") {
		t.Errorf("secrets: %+v", v)
	}
	if v := check(t, loop.SecretsGuardrail(true), loop.GuardToolResult, "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345"); v.Action != loop.GuardBlock {
		t.Errorf("blocking secrets: %+v", v)
	}
	if v := check(t, loop.SecretsGuardrail(false), loop.GuardOutput, "nothing to see"); v.Action != loop.GuardAllow {
		t.Errorf("no secret: %+v", v)
	}
	deny, err := loop.DenyGuardrail("competitors", `(?i)\bacme\b`)
	if err != nil {
		t.Fatal(err)
	}
	if v := check(t, deny, loop.GuardOutput, "Try ACME instead"); v.Action != loop.GuardBlock {
		t.Errorf("deny: %+v", v)
	}
	if _, err := loop.DenyGuardrail("bad", `(`); err == nil {
		t.Error("a bad pattern was accepted")
	}
	if _, err := loop.DenyGuardrail("none"); err == nil {
		t.Error("no pattern was accepted")
	}
	long := loop.MaxLengthGuardrail(5)
	if v := check(t, long, loop.GuardOutput, "héllo wörld"); v.Action != loop.GuardCorrect || !strings.Contains(v.Text, "limit is 5") {
		t.Errorf("long answer: %+v", v)
	}
	if v := check(t, long, loop.GuardInput, "héllo wörld"); v.Action != loop.GuardBlock {
		t.Errorf("long prompt: %+v", v)
	}
	if v := check(t, long, loop.GuardInput, "héllo"); v.Action != loop.GuardAllow {
		t.Errorf("5 characters: %+v", v)
	}
}

// The three stages in a run: the prompt is redacted before the model sees
// it, a tool result is redacted before the model sees it, an answer gets a
// correction, and a block stops the run with a *GuardrailError; every
// verdict is traced.
func TestGuardrailsInARun(t *testing.T) {
	var n atomic.Int32
	lookup := countingTool(t, "lookup", &n, "customer ada@example.org", tool.Flags{})
	model := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("a", "lookup", `{}`)}},
		scripted.Turn{Text: "a very long answer indeed"},
		scripted.Turn{Text: "short"},
	)
	var events []trace.Event
	a := &loop.Agent{
		Provider: model, Tools: nestedRegistry(t, lookup),
		InputGuardrails:      []loop.Guardrail{loop.PIIGuardrail(false)},
		ToolResultGuardrails: []loop.Guardrail{loop.PIIGuardrail(false)},
		OutputGuardrails:     []loop.Guardrail{loop.MaxLengthGuardrail(10)},
		MaxCorrections:       2,
		Tracer:               trace.New(familySink(func(ev trace.Event) { events = append(events, ev) })),
	}
	res, err := a.Run(context.Background(), "my mail is bob@example.org")
	if err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	if got := reqs[0].Messages[len(reqs[0].Messages)-1].Text(); got != "my mail is [email]" {
		t.Errorf("the model was sent the prompt %q", got)
	}
	if got := toolResultText(res.Messages, "a"); got != "customer [email]" {
		t.Errorf("the tool result the model saw: %q", got)
	}
	if res.Output != "short" || res.State.Corrections != 1 {
		t.Errorf("output %q after %d corrections", res.Output, res.State.Corrections)
	}
	guards := 0
	for _, ev := range events {
		if ev.Type == trace.Guardrail {
			guards++
		}
	}
	if guards != 3 {
		t.Errorf("%d guardrail events, want 3 (two redactions, one correction)", guards)
	}

	// A block is a tripwire.
	deny, _ := loop.DenyGuardrail("no-secrets-talk", `(?i)password`)
	a = &loop.Agent{Provider: scripted.New(scripted.Turn{Text: "x"}), InputGuardrails: []loop.Guardrail{deny}}
	_, err = a.Run(context.Background(), "what is the admin password?")
	var ge *loop.GuardrailError
	if !errors.As(err, &ge) || !errors.Is(err, loop.ErrGuardrail) || ge.Stage != loop.GuardInput || ge.Guardrail != "no-secrets-talk" {
		t.Errorf("a blocked prompt: %v", err)
	}
	// A failing guardrail blocks (fail-closed), a correction past the cap
	// blocks.
	broken := loop.GuardFunc("broken", func(context.Context, *loop.GuardCheck) (loop.GuardVerdict, error) { panic("bug") })
	a = &loop.Agent{Provider: scripted.New(scripted.Turn{Text: "x"}), OutputGuardrails: []loop.Guardrail{broken}}
	if _, err := a.Run(context.Background(), "hi"); !errors.Is(err, loop.ErrGuardrail) {
		t.Errorf("a panicking guardrail: %v", err)
	}
	a = &loop.Agent{Provider: scripted.New(scripted.Turn{Text: "far too long"}, scripted.Turn{Text: "still too long"}), OutputGuardrails: []loop.Guardrail{loop.MaxLengthGuardrail(3)}}
	if _, err := a.Run(context.Background(), "hi"); !errors.As(err, &ge) || ge.Guardrail != "corrections" {
		t.Errorf("past the correction cap: %v", err)
	}
	// A tool result a guardrail blocks stops the run.
	a = &loop.Agent{
		Provider:             scripted.New(scripted.Turn{ToolCalls: []llm.ToolCall{call("a", "lookup", `{}`)}}, scripted.Turn{Text: "x"}),
		Tools:                nestedRegistry(t, lookup),
		ToolResultGuardrails: []loop.Guardrail{loop.PIIGuardrail(true)},
	}
	if _, err := a.Run(context.Background(), "go"); !errors.As(err, &ge) || ge.Stage != loop.GuardToolResult {
		t.Errorf("a blocked tool result: %v", err)
	}
}

// A policy file switches built-in guardrails on, per stage; its errors
// name the field.
func TestPolicyGuardrails(t *testing.T) {
	spec, err := policy.Parse([]byte(`{"rules": [], "guardrails": {
		"input": {"pii": "redact"},
		"output": {"deny": ["(?i)acme"], "max_length": 100}}}`))
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(scripted.Turn{Text: "Buy from ACME"})
	a := &loop.Agent{Provider: model, Policy: spec}
	_, err = a.Run(context.Background(), "I am ada@example.org")
	var ge *loop.GuardrailError
	if !errors.As(err, &ge) || ge.Stage != loop.GuardOutput || ge.Guardrail != "policy deny" {
		t.Errorf("the policy's output guardrail: %v", err)
	}
	if got := model.Requests()[0].Messages[1].Text(); got != "I am [email]" {
		t.Errorf("the policy's input guardrail: the model was sent %q", got)
	}
	for _, tt := range []struct{ doc, path string }{
		{`{"guardrails": {"input": {"pii": "mask"}}}`, "guardrails.input.pii"},
		{`{"guardrails": {"output": {"deny": ["("]}}}`, "guardrails.output.deny"},
		{`{"guardrails": {"output": {"max_length": -1}}}`, "guardrails.output.max_length"},
		{`{"guardrails": {"output": {"profanity": "block"}}}`, "guardrails"},
		{`{"guardrails": {"everywhere": {}}}`, "guardrails"},
	} {
		_, err := policy.Parse([]byte(tt.doc))
		var pe *policy.Error
		if !errors.As(err, &pe) || pe.Path != tt.path {
			t.Errorf("policy.Parse(%s): %v; want an error at %s", tt.doc, err, tt.path)
		}
	}
}

// An answer that is not JSON of the schema gets the validator's message
// as a correction; a valid one passes.
func TestJSONSchemaGuardrail(t *testing.T) {
	g, err := loop.JSONSchemaGuardrail([]byte(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`))
	if err != nil {
		t.Fatal(err)
	}
	a := &loop.Agent{
		Provider:         scripted.New(scripted.Turn{Text: "n is 3"}, scripted.Turn{Text: `{"n":"three"}`}, scripted.Turn{Text: `{"n": 3}`}),
		OutputGuardrails: []loop.Guardrail{g},
		MaxCorrections:   3,
	}
	res, err := a.Run(context.Background(), "give n")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != `{"n": 3}` || res.State.Corrections != 2 {
		t.Fatalf("output %q after %d corrections", res.Output, res.State.Corrections)
	}
	var fixes []string
	for _, m := range res.Messages {
		if m.Role == llm.RoleUser && strings.HasPrefix(m.Text(), "Your answer must be only JSON") {
			fixes = append(fixes, m.Text())
		}
	}
	if len(fixes) != 2 || !strings.Contains(fixes[0], "not JSON") || strings.Contains(fixes[1], "not JSON") {
		t.Errorf("corrections: %q", fixes)
	}
	if v := check(t, g, loop.GuardToolResult, "nope"); v.Action != loop.GuardBlock {
		t.Errorf("a tool result that is not JSON: %+v", v)
	}
	if _, err := loop.JSONSchemaGuardrail([]byte(`{"type": 7}`)); err == nil {
		t.Error("a bad schema was accepted")
	}
}
