package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/policy"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

const examplePolicy = `{
  "version": 1,
  "default": "allow",
  "rules": [
    {"tool": "send_email", "action": "deny", "when": {"tainted": true}, "reason": "no e-mail after reading untrusted content"},
    {"tool": "send_email", "action": "approve", "when": {"args": {"to": {"not": {"ends_with": "@example.com"}}}}},
    {"tool": "write_*", "action": "deny", "when": {"args": {"path": {"not": {"path_within": ["/srv/out", "/tmp/agent"]}}}}},
    {"tool": "http_get", "action": "deny", "when": {"args": {"url": {"not": {"url_host": ["api.example.com", "*.example.org"]}}}}},
    {"tool": "*", "action": "approve", "when": {"permissions": "payments", "args": {"eur": {"gt": 100}}}},
    {"tool": "search", "action": "deny", "when": {"args": {"q": {"matches": "(?i)password|secret"}}}},
    {"tool": "search", "action": "allow", "when": {"step": {"le": 3}}},
    {"tool": "search", "action": "deny", "when": {"step": {"gt": 3}}, "reason": "search budget spent"},
    {"tool": "tag", "action": "deny", "when": {"args": {"labels": {"max_items": 2, "contains": "x"}, "name": {"in": ["a", "b"], "max_length": 1}}}},
    {"tool": "opt", "action": "deny", "when": {"args": {"flag": {"exists": false}}}},
    {"tool": "note", "action": "deny", "when": {"args": {"title": {"not": {"max_length": 3}}}}},
    {"tool": "eq", "action": "deny", "when": {"args": {"n": 1, "b": true, "o": {"eq": {"k": [1, 2.0]}}}}},
    {"tool": "pay", "action": "deny", "when": {"args": {"account": {"not_in": [9007199254740993]}}}, "reason": "unknown account"}
  ]
}`

func decideWith(t *testing.T, p *policy.Spec, name, args string, step int, tainted bool, flags tool.Flags) loop.Decision {
	t.Helper()
	d, err := p.Decide(context.Background(), &loop.PolicyInput{Call: llm.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(args)}, Step: step, Tainted: tainted, Flags: flags, Known: true})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestPolicySpecDecisions(t *testing.T) {
	p, err := policy.Parse([]byte(examplePolicy))
	if err != nil {
		t.Fatal(err)
	}
	pay := tool.Flags{Permissions: []string{"payments", "network"}}
	cases := []struct {
		name, tool, args string
		step             int
		tainted          bool
		flags            tool.Flags
		want             loop.Verdict
		reason           string
	}{
		{"internal mail", "send_email", `{"to":"bob@example.com"}`, 1, false, tool.Flags{}, loop.VerdictAllow, ""},
		{"external mail", "send_email", `{"to":"eve@evil.net"}`, 1, false, tool.Flags{}, loop.VerdictApprove, "requires approval"},
		{"deny beats approve", "send_email", `{"to":"eve@evil.net"}`, 1, true, tool.Flags{}, loop.VerdictDeny, "no e-mail after reading untrusted content"},
		{"write inside", "write_file", `{"path":"/srv/out/report.md"}`, 1, false, tool.Flags{}, loop.VerdictAllow, ""},
		{"write traversal", "write_file", `{"path":"/srv/out/../../etc/passwd"}`, 1, false, tool.Flags{}, loop.VerdictDeny, "rules[2]"},
		{"write prefix trick", "write_log", `{"path":"/srv/outside/x"}`, 1, false, tool.Flags{}, loop.VerdictDeny, ""},
		{"write missing path", "write_file", `{}`, 1, false, tool.Flags{}, loop.VerdictDeny, ""},
		{"allowed host", "http_get", `{"url":"https://api.example.com/v1?x=1"}`, 1, false, tool.Flags{}, loop.VerdictAllow, ""},
		{"allowed subdomain", "http_get", `{"url":"https://docs.example.org/"}`, 1, false, tool.Flags{}, loop.VerdictAllow, ""},
		{"host suffix trick", "http_get", `{"url":"https://api.example.com.evil.net/"}`, 1, false, tool.Flags{}, loop.VerdictDeny, ""},
		{"userinfo trick", "http_get", `{"url":"https://api.example.com@evil.net/"}`, 1, false, tool.Flags{}, loop.VerdictDeny, ""},
		{"big payment", "transfer", `{"eur":250}`, 1, false, pay, loop.VerdictApprove, ""},
		{"small payment", "transfer", `{"eur":20}`, 1, false, pay, loop.VerdictAllow, ""},
		{"string amount is not a number", "transfer", `{"eur":"250"}`, 1, false, pay, loop.VerdictAllow, ""},
		{"secret search", "search", `{"q":"admin PASSWORD"}`, 1, false, tool.Flags{}, loop.VerdictDeny, ""},
		{"early search", "search", `{"q":"go"}`, 3, false, tool.Flags{}, loop.VerdictAllow, ""},
		{"late search", "search", `{"q":"go"}`, 4, false, tool.Flags{}, loop.VerdictDeny, "search budget spent"},
		{"tag match", "tag", `{"labels":["x","y"],"name":"a"}`, 1, false, tool.Flags{}, loop.VerdictDeny, ""},
		{"tag too many", "tag", `{"labels":["x","y","z"],"name":"a"}`, 1, false, tool.Flags{}, loop.VerdictAllow, ""},
		{"tag name not in list", "tag", `{"labels":["x"],"name":"c"}`, 1, false, tool.Flags{}, loop.VerdictAllow, ""},
		{"missing flag", "opt", `{}`, 1, false, tool.Flags{}, loop.VerdictDeny, ""},
		{"null flag", "opt", `{"flag":null}`, 1, false, tool.Flags{}, loop.VerdictDeny, ""},
		{"present flag", "opt", `{"flag":false}`, 1, false, tool.Flags{}, loop.VerdictAllow, ""},
		{"three characters, six bytes", "note", `{"title":"été"}`, 1, false, tool.Flags{}, loop.VerdictAllow, ""},
		{"four characters", "note", `{"title":"abcd"}`, 1, false, tool.Flags{}, loop.VerdictDeny, ""},
		{"json equality", "eq", `{"n":1.0,"b":true,"o":{"k":[1,2]}}`, 1, false, tool.Flags{}, loop.VerdictDeny, ""},
		{"bool is not a number", "eq", `{"n":true,"b":true,"o":{"k":[1,2]}}`, 1, false, tool.Flags{}, loop.VerdictAllow, ""},
		{"listed account", "pay", `{"account":9007199254740993}`, 1, false, tool.Flags{}, loop.VerdictAllow, ""},
		{"account equal to a listed one only as float64", "pay", `{"account":9007199254740992}`, 1, false, tool.Flags{}, loop.VerdictDeny, "unknown account"},
		{"invalid arguments", "write_file", `{not json`, 1, false, tool.Flags{}, loop.VerdictDeny, ""},
	}
	for _, c := range cases {
		d := decideWith(t, p, c.tool, c.args, c.step, c.tainted, c.flags)
		if d.Verdict != c.want || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("%s: got %s %q, want %s containing %q", c.name, d.Verdict, d.Reason, c.want, c.reason)
		}
	}
}

func TestPolicySpecErrorsNameThePosition(t *testing.T) {
	cases := map[string]string{
		`[]`:                   "want a JSON object",
		`{"default":"allow",}`: "invalid JSON at line 1, column 20",
		"{\n  \"rules\": [\n    {\"tool\": \"x\" \"action\": \"deny\"}\n  ]\n}": "invalid JSON at line 3",
		`{"defualt":"deny"}`:                                 `defualt: unknown key`,
		`{"default":"block"}`:                                `default: "block" is not`,
		`{"version":2}`:                                      "version: want 1",
		`{"rules":{}}`:                                       "rules: want an array",
		`{"rules":[{"action":"deny"}]}`:                      "rules[0].tool: missing",
		`{"rules":[{"tool":"x","action":"nope"}]}`:           `rules[0].action: "nope" is not`,
		`{"rules":[{"tool":"x","action":"deny","why":"?"}]}`: `rules[0].why: unknown key`,
		`{"rules":[{"tool":"x","action":"deny"},{"tool":"y","action":"deny","when":{"arg":{}}}]}`: `rules[1].when.arg: unknown condition`,
		`{"rules":[{"tool":"x","action":"deny","when":{"args":{"to":{"startswith":"a"}}}}]}`:      `rules[0].when.args.to.startswith: unknown operator`,
		`{"rules":[{"tool":"x","action":"deny","when":{"args":{"to":{"starts_with":1}}}}]}`:       `rules[0].when.args.to.starts_with: want a string`,
		`{"rules":[{"tool":"x","action":"deny","when":{"args":{"q":{"matches":"(("}}}}]}`:         `rules[0].when.args.q.matches: bad regular expression`,
		`{"rules":[{"tool":"x","action":"deny","when":{"tainted":"yes"}}]}`:                       `rules[0].when.tainted: want a bool`,
		`{"rules":[{"tool":"x","action":"deny","when":{"step":{"gt":"3"}}}]}`:                     `rules[0].when.step.gt: want a number`,
		`{"rules":[{"tool":"x","action":"deny","when":{"args":{"a":{"not":{"in":3}}}}}]}`:         `rules[0].when.args.a.not.in: want an array`,
		`{"rules":[{"tool":"x","action":"deny","when":{"args":{"a":{}}}}]}`:                       `rules[0].when.args.a: empty predicate`,
		`{"rules":[{"tool":"[","action":"deny"}]}`:                                                `rules[0].tool: bad glob`,
		`{"rules":[{"tool":"x","action":"deny","when":{"args":{"n":{"max_length":-1}}}}]}`:        `want a non-negative integer`,
	}
	for src, want := range cases {
		_, err := policy.Parse([]byte(src))
		var pe *policy.Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePolicy(%s) = %v, want error containing %q", src, err, want)
		}
	}
}

func TestPolicySpecRoundTripNarrowExpand(t *testing.T) {
	p, err := policy.Parse([]byte(examplePolicy))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p)
	q, err := policy.Parse(b)
	if err != nil {
		t.Fatalf("re-parse: %v\n%s", err, b)
	}
	b2, _ := json.Marshal(q)
	if string(b) != string(b2) {
		t.Fatalf("round trip differs:\n%s\n%s", b, b2)
	}
	n, err := p.Narrow(policy.Rule{Tool: "search", Action: loop.VerdictDeny, Reason: "no search today"})
	if err != nil {
		t.Fatal(err)
	}
	if d := decideWith(t, n, "search", `{"q":"go"}`, 1, false, tool.Flags{}); d.Verdict != loop.VerdictDeny {
		t.Errorf("narrowed policy allowed: %+v", d)
	}
	if d := decideWith(t, p, "search", `{"q":"go"}`, 1, false, tool.Flags{}); d.Verdict != loop.VerdictAllow {
		t.Errorf("Narrow modified the original: %+v", d)
	}
	if _, err := p.Narrow(policy.Rule{Tool: "x", Action: loop.VerdictAllow}); err == nil {
		t.Error("Narrow accepted an allow rule")
	}
	if _, err := p.Expand(false, loop.VerdictAllow); !errors.Is(err, policy.ErrExpandNeedsApproval) {
		t.Errorf("unapproved Expand: %v", err)
	}
	e, err := p.Expand(true, loop.VerdictDeny, policy.Rule{Tool: "fresh", Action: loop.VerdictAllow})
	if err != nil {
		t.Fatal(err)
	}
	if d := decideWith(t, e, "unknown_tool", `{}`, 1, false, tool.Flags{}); d.Verdict != loop.VerdictDeny || !strings.Contains(d.Reason, "default deny") {
		t.Errorf("expanded default: %+v", d)
	}
	if d := decideWith(t, e, "fresh", `{}`, 1, false, tool.Flags{}); d.Verdict != loop.VerdictAllow {
		t.Errorf("expanded rule: %+v", d)
	}
	var unc policy.Spec
	unc.Rules = []policy.Rule{{Tool: "x", Action: loop.VerdictDeny}}
	if _, err := unc.Decide(context.Background(), &loop.PolicyInput{}); err == nil {
		t.Error("an uncompiled spec decided")
	}
}

func TestPolicyFileInTheLoop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(path, []byte(examplePolicy), 0o600)
	pol, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	mail := &counter{name: "send_email"}
	p := scripted.New(calls(call("m1", "send_email", `{"to":"bob@example.com"}`), call("m2", "send_email", `{"to":"eve@evil.net"}`)), text("ok"))
	a := &loop.Agent{Provider: p, Tools: registry(t, mail), Checks: loop.Checks{Policy: pol}}
	res, err := a.Run(context.Background(), "mail")
	if !errors.Is(err, loop.ErrApprovalRequired) || mail.count() != 0 || res.Pending[0].Call.ID != "m2" {
		t.Fatalf("err %v, mail %d", err, mail.count())
	}
	os.WriteFile(path, []byte(`{"rules":[{"tool":1}]}`), 0o600)
	if _, err := policy.Load(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "rules[0].tool") {
		t.Errorf("bad policy file: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(examplePolicy), []byte(`{"to":"a@b.c","path":"/srv/out/x","eur":5}`))
	f.Add([]byte(`{"default":"deny","rules":[{"tool":"*","action":"allow","when":{"args":{"a":{"not":{"not":{"eq":null}}}}}}]}`), []byte(`{"a":null}`))
	f.Add([]byte(`{"rules":[{"tool":"x*","action":"approve","when":{"permissions":{"contains":"p"},"step":{"ge":1e400}}}]}`), []byte(`{}`))
	f.Add([]byte(`{"rules":[{"tool":"x","action":"deny","when":{"args":{"u":{"url_host":"*.x"},"p":{"path_within":"."}}}}]}`), []byte(`{"u":"http://[::1]:80/","p":"./a/../../b"}`))
	f.Fuzz(func(t *testing.T, doc, args []byte) {
		p, err := policy.Parse(doc)
		if err != nil {
			var pe *policy.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *policy.Error: %v", err)
			}
			return
		}
		for _, name := range []string{"x", "send_email", "write_file", ""} {
			d, err := p.Decide(context.Background(), &loop.PolicyInput{Call: llm.ToolCall{Name: name, Arguments: args}, Flags: tool.Flags{Permissions: []string{"p"}}})
			if err != nil {
				t.Fatalf("Decide failed on a compiled policy: %v", err)
			}
			switch d.Verdict {
			case loop.VerdictAllow, loop.VerdictDeny, loop.VerdictApprove:
			default:
				t.Fatalf("verdict %q", d.Verdict)
			}
		}
		// What compiled must survive a JSON round trip.
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := policy.Parse(b); err != nil {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
	})
}
