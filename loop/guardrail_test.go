package loop_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/url"
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
		Checks: loop.Checks{InputGuardrails: []loop.Guardrail{loop.PIIGuardrail(false)}, ToolResultGuardrails: []loop.Guardrail{loop.PIIGuardrail(false)}, OutputGuardrails: []loop.Guardrail{loop.MaxLengthGuardrail(10)}, MaxCorrections: 2},
		Tracer: trace.New(familySink(func(ev trace.Event) { events = append(events, ev) })),
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
	a = &loop.Agent{Provider: scripted.New(scripted.Turn{Text: "x"}), Checks: loop.Checks{InputGuardrails: []loop.Guardrail{deny}}}
	_, err = a.Run(context.Background(), "what is the admin password?")
	var ge *loop.GuardrailError
	if !errors.As(err, &ge) || !errors.Is(err, loop.ErrGuardrail) || ge.Stage != loop.GuardInput || ge.Guardrail != "no-secrets-talk" {
		t.Errorf("a blocked prompt: %v", err)
	}
	// A failing guardrail blocks (fail-closed), a correction past the cap
	// blocks.
	broken := loop.GuardFunc("broken", func(context.Context, *loop.GuardCheck) (loop.GuardVerdict, error) { panic("bug") })
	a = &loop.Agent{Provider: scripted.New(scripted.Turn{Text: "x"}), Checks: loop.Checks{OutputGuardrails: []loop.Guardrail{broken}}}
	if _, err := a.Run(context.Background(), "hi"); !errors.Is(err, loop.ErrGuardrail) {
		t.Errorf("a panicking guardrail: %v", err)
	}
	a = &loop.Agent{Provider: scripted.New(scripted.Turn{Text: "far too long"}, scripted.Turn{Text: "still too long"}), Checks: loop.Checks{OutputGuardrails: []loop.Guardrail{loop.MaxLengthGuardrail(3)}}}
	if _, err := a.Run(context.Background(), "hi"); !errors.As(err, &ge) || ge.Guardrail != "corrections" {
		t.Errorf("past the correction cap: %v", err)
	}
	// A tool result a guardrail blocks stops the run.
	a = &loop.Agent{
		Provider: scripted.New(scripted.Turn{ToolCalls: []llm.ToolCall{call("a", "lookup", `{}`)}}, scripted.Turn{Text: "x"}),
		Tools:    nestedRegistry(t, lookup),
		Checks:   loop.Checks{ToolResultGuardrails: []loop.Guardrail{loop.PIIGuardrail(true)}},
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
	a := &loop.Agent{Provider: model, Checks: loop.Checks{Policy: spec}}
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
		Provider: scripted.New(scripted.Turn{Text: "n is 3"}, scripted.Turn{Text: `{"n":"three"}`}, scripted.Turn{Text: `{"n": 3}`}),
		Checks:   loop.Checks{OutputGuardrails: []loop.Guardrail{g}, MaxCorrections: 3},
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

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// Each personal datum the PII guardrail knows, in each disguise: the
// datum goes, the text around it stays.
func TestPIIGuardrailSeesThroughDisguises(t *testing.T) {
	g := loop.PIIGuardrail(false)
	for _, c := range []struct{ name, datum, kind string }{
		{"email", "ada@example.org", "email"},
		{"email fullwidth", "ａｄａ＠ｅｘａｍｐｌｅ．ｏｒｇ", "email"},
		{"email Cyrillic", "\u0430d\u0430@\u0435x\u0430mple.org", "email"},
		{"email zero-width", "ada\u200b@\u200bexample.org", "email"},
		{"email HTML entity", "ada&#64;example.org", "email"},
		{"email percent", "ada%40example.org", "email"},
		{"email percent twice", "ada%2540example.org", "email"},
		{"email written out", "ada [at] example [dot] org", "email"},
		{"email written out, parentheses", "ada(at)example.org", "email"},
		{"email base64", b64("ada@example.org"), "email"},
		{"email base64url", base64.RawURLEncoding.EncodeToString([]byte("ada@example.org?>>")), "email"},
		{"email hex", hex.EncodeToString([]byte("ada@example.org")), "email"},
		{"email base64 of percent", b64("ada%40example.org"), "email"},
		{"card", "4111 1111 1111 1111", "card"},
		{"card dots", "4111.1111.1111.1111", "card"},
		{"card slashes", "4111/1111/1111/1111", "card"},
		{"card underscores", "4111_1111_1111_1111", "card"},
		{"card spaced dashes", "4111 - 1111 - 1111 - 1111", "card"},
		{"card em dashes", "4111—1111—1111—1111", "card"},
		{"card fullwidth", "４１１１ １１１１ １１１１ １１１１", "card"},
		{"card Arabic-Indic digits", "٤١١١ ١١١١ ١١١١ ١١١١", "card"},
		{"card zero-width", "4111\u200b1111\u200b1111\u200b1111", "card"},
		{"card no-break spaces", "4111\u00a01111\u00a01111\u00a01111", "card"},
		{"card base64", b64("4111111111111111"), "card"},
		{"card hex", hex.EncodeToString([]byte("4111 1111 1111 1111")), "card"},
		{"card across lines", "4111 1111\n1111 1111", "card"},
		{"card tabs", "4111\t1111\t1111\t1111", "card"},
		{"iban", "GB82 WEST 1234 5698 7654 32", "iban"},
		{"iban across lines", "GB82\nWEST\n1234\n5698\n7654\n32", "iban"},
		{"iban lower case", "gb82 west 1234 5698 7654 32", "iban"},
		{"iban dots", "GB82.WEST.1234.5698.7654.32", "iban"},
		{"iban dashes", "GB82-WEST-1234-5698-7654-32", "iban"},
		{"iban fullwidth", "ＧＢ８２ ＷＥＳＴ １２３４ ５６９８ ７６５４ ３２", "iban"},
		{"iban zero-width", "GB82\u200bWEST\u200b1234\u200b5698\u200b7654\u200b32", "iban"},
		{"iban base64", b64("GB82WEST12345698765432"), "iban"},
		{"phone", "+47 22 33 44 55", "phone"},
		{"phone dots", "+47.22.33.44.55", "phone"},
		{"phone underscores", "+47_22_33_44_55", "phone"},
		{"phone slash", "030/1234567", "phone"},
		{"phone space after plus", "+ 47 22 33 44 55", "phone"},
		{"phone trunk zero in parentheses", "(0)30 1234 567", "phone"},
		{"email in a JavaScript escape", `ada\x40example.org`, "email"},
		{"email named references", "ada&commat;example&period;org", "email"},
		{"phone fullwidth", "＋４７ ２２ ３３ ４４ ５５", "phone"},
		{"phone Devanagari digits", "+४७ २२ ३३ ४४ ५५", "phone"},
		{"phone zero-width", "+47\u200b22\u200b33\u200b44\u200b55", "phone"},
		{"phone base64", b64("+47 22 33 44 55"), "phone"},
	} {
		in := "before " + c.datum + " after"
		v := check(t, g, loop.GuardToolResult, in)
		want := "before [" + c.kind + "] after"
		if v.Action != loop.GuardRedact || v.Text != want || !strings.Contains(v.Reason, c.kind) {
			t.Errorf("%s: %q → %s %q (%s), want %q", c.name, in, v.Action, v.Text, v.Reason, want)
		}
	}
}

// Each secret the secrets guardrail knows, in each disguise.
func TestSecretsGuardrailSeesThroughDisguises(t *testing.T) {
	g := loop.SecretsGuardrail(false)
	for _, c := range []struct{ name, text, secret string }{
		{"key", "sk-proj-abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwx"},
		{"key zero-width", "sk-\u200bproj-abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwx"},
		{"key fullwidth", "ｓｋ－ｐｒｏｊ－ａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒ", "ａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒ"},
		{"key JSON escape", `\u0073k-proj-abcdefghijklmnopqrstuvwx`, "abcdefghijklmnopqrstuvwx"},
		{"key base64", b64("sk-proj-abcdefghijklmnopqrstuvwx"), b64("sk-proj-abcdefghijklmnopqrstuvwx")},
		{"key hex", hex.EncodeToString([]byte("sk-proj-abcdefghijklmnop")), hex.EncodeToString([]byte("sk-proj-abcdefghijklmnop"))},
		{"password", "password=hunter2hunter2", "hunter2hunter2"},
		{"password Cyrillic name", "p\u0430ssword=hunter2hunter2", "hunter2hunter2"},
		{"password entity separator", "password&equals;hunter2hunter2", "hunter2hunter2"},
		{"password percent", "password%3Dhunter2hunter2", "hunter2hunter2"},
		{"password base64", b64("password=hunter2hunter2"), b64("password=hunter2hunter2")},
		{"password base64 in percent", url.QueryEscape(b64("db password: hunter2hunter2!")), "hunter2"},
		{"bearer", "Authorization: Bearer abcdefghijklmnop123", "abcdefghijklmnop123"},
		{"bearer hex", hex.EncodeToString([]byte("Bearer abcdefghijklmnop")), hex.EncodeToString([]byte("Bearer abcdefghijklmnop"))},
		{"header of no known shape", "X-Auth-Key: 1a2b3c4d5e6f", "1a2b3c4d5e6f"},
		{"JSON field", `{"clientSecret":"x1y2z3w4"}`, "x1y2z3w4"},
		{"AWS key id, tag characters", "\U000e0041\U000e004b\U000e0049\U000e0041IOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"},
	} {
		in := "before " + c.text + " after"
		v := check(t, g, loop.GuardToolResult, in)
		if v.Action != loop.GuardRedact || strings.Contains(v.Text, c.secret) || !strings.HasPrefix(v.Text, "before ") || !strings.HasSuffix(v.Text, " after") {
			t.Errorf("%s: %q → %s %q", c.name, in, v.Action, v.Text)
		}
	}
}

// Ordinary text, identifiers, hashes and dates pass both guardrails.
func TestDisguiseGuardrailsControls(t *testing.T) {
	for _, s := range []string{
		"The meeting moved to room 4.12 on 2026-12-02; order 12345678 shipped.",
		"dates 02/12/2026, 02-12-2026, 02.12.2026 and 12/31/1999",
		"request 123e4567-e89b-12d3-a456-426614174000, commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
		"sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		`<script integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC">`,
		"golang.org/x/text v0.42.0 h1:n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=",
		"version 1.22.3, IP 192.168.0.1, 100% sure, 3.14159265358979",
		"https://example.com/search?q=caf%C3%A9&page=2",
		"internationalization counterrevolutionaries, and a key point: tokens are counted",
		"Ｆｕｌｌｗｉｄｔｈ ｔｅｘｔ ａｎｄ Кириллица, ελληνικά, 中文, العربية ١٢٣",
		"binary " + base64.StdEncoding.EncodeToString([]byte{0x89, 'P', 'N', 'G', 0, 1, 2, 3, 0xff, 0xfe, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60}),
	} {
		for _, g := range []loop.Guardrail{loop.PIIGuardrail(false), loop.SecretsGuardrail(false)} {
			if v := check(t, g, loop.GuardToolResult, s); v.Action != loop.GuardAllow {
				t.Errorf("%s: %q → %s %q (%s)", g.Name(), s, v.Action, v.Text, v.Reason)
			}
		}
	}
}
