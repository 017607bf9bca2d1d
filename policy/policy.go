package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/internal/jsonvalue"
	"github.com/autoagent-go/autoagent/loop"
)

// Spec is a tool policy written as data (JSON), compiled when it is
// parsed. It implements [loop.Policy].
//
//	{
//	  "default": "allow",
//	  "rules": [
//	    {"tool": "send_email", "action": "deny", "when": {"tainted": true},
//	     "reason": "no e-mail after reading untrusted content"},
//	    {"tool": "send_email", "action": "approve",
//	     "when": {"args": {"to": {"not": {"ends_with": "@example.com"}}}}},
//	    {"tool": "write_file", "action": "deny",
//	     "when": {"args": {"path": {"not": {"path_within": "/srv/out"}}}}},
//	    {"tool": "*", "action": "approve", "when": {"permissions": "payments"}}
//	  ]
//	}
//
// A rule applies to the tools its "tool" names: an exact name, "*", or a
// glob ("fs_*"). Its "when" holds conditions that must all hold: "args"
// (one predicate per argument), "tainted", "egress", "untrusted",
// "idempotent", "known" (the tool exists), "step", and "permissions" (the
// tool's permission labels). A predicate is a plain value (equality; a
// string for "permissions" means "contains") or an object of operators that
// must all hold:
//
//	eq ne in not_in                   JSON equality (1 == 1.0; true != 1)
//	starts_with ends_with matches     strings (matches: RE2 regular expression, searched)
//	contains                          substring of a string, or member of an array
//	max_length max_items              at most N characters / N items
//	lt le gt ge                       numbers (a non-number never matches)
//	exists                            the value is present and not null (true/false)
//	path_within                       a path inside a directory (or any of a list), where it leads (below)
//	url_host                          the URL's host is one of these ("*.example.com" matches subdomains)
//	not                               the nested predicate does not hold
//
// A missing argument is null: only exists, ne, not_in and not can match it.
//
// path_within judges a path by where it leads on this machine, as the
// file system will when the tool opens it: each symbolic link on the way
// is followed (".." after a link goes up from where the link led), a
// component that does not exist yet is taken as written, and a relative
// path is taken from the working directory. The directories are resolved
// the same way. A path that cannot be resolved safely (a loop of links,
// more than 40, a component it may not look at, a NUL byte) refuses the
// call, whatever the rules say, with a reason naming the path. A module's
// path is judged this way when its grant shows the host directory at the
// same path (fs.read:/P); the sandbox itself keeps a module inside its
// grants whatever a policy decides.
//
// Among the rules that match a call, deny wins over approve, which wins
// over allow; when none matches, "default" applies ("allow" when absent).
// Parsing is strict: an unknown key, action or operator, a wrong type or a
// bad regular expression is an error naming its position
// ("rules[1].when.args.to.starts_with: want a string").
type Spec struct {
	// Version is 1 (or 0, meaning 1).
	Version int `json:"version,omitempty"`
	// Default is the verdict when no rule matches; "" means allow.
	Default loop.Verdict `json:"default,omitempty"`
	// Rules are the rules, in the order given.
	Rules []Rule `json:"rules"`
	// Guardrails switches built-in guardrails on, per stage: a run whose
	// Agent.Checks.Policy is this spec adds them after the agent's own.
	Guardrails *GuardrailSpec `json:"guardrails,omitempty"`

	compiled []compiledRule
	guards   map[loop.GuardStage][]loop.Guardrail
}

// GuardrailSpec is the "guardrails" object of a policy file:
//
//	"guardrails": {
//	  "input":        {"pii": "redact", "deny": ["(?i)password"]},
//	  "tool_results": {"secrets": "redact", "pii": "redact"},
//	  "output":       {"secrets": "block", "max_length": 2000}
//	}
type GuardrailSpec struct {
	Input       *GuardSet `json:"input,omitempty"`
	ToolResults *GuardSet `json:"tool_results,omitempty"`
	Output      *GuardSet `json:"output,omitempty"`
}

// GuardSet is the built-ins of one stage: Secrets and PII are "redact" or
// "block" (loop.SecretsGuardrail, loop.PIIGuardrail), Deny the patterns of a
// loop.DenyGuardrail, MaxLength the bound of a loop.MaxLengthGuardrail.
type GuardSet struct {
	Secrets   string   `json:"secrets,omitempty"`
	PII       string   `json:"pii,omitempty"`
	Deny      []string `json:"deny,omitempty"`
	MaxLength int      `json:"max_length,omitempty"`
}

// GuardrailsAt returns the guardrails the spec switches on at stage; a
// run whose Agent.Checks.Policy is p adds them after the agent's own (see
// [loop.PolicyGuardrails]).
func (p *Spec) GuardrailsAt(stage loop.GuardStage) []loop.Guardrail {
	if p == nil {
		return nil
	}
	return p.guards[stage]
}

// compileGuardrails builds the spec's guardrails; errors name the field.
func (p *Spec) compileGuardrails() error {
	p.guards = nil
	g := p.Guardrails
	if g == nil {
		return nil
	}
	p.guards = map[loop.GuardStage][]loop.Guardrail{}
	for _, st := range []struct {
		name  string
		stage loop.GuardStage
		set   *GuardSet
	}{{"input", loop.GuardInput, g.Input}, {"tool_results", loop.GuardToolResult, g.ToolResults}, {"output", loop.GuardOutput, g.Output}} {
		if st.set == nil {
			continue
		}
		at := "guardrails." + st.name
		mode := func(field, v string) (bool, bool, error) {
			switch v {
			case "":
				return false, false, nil
			case "redact":
				return true, false, nil
			case "block":
				return true, true, nil
			}
			return false, false, &Error{Path: at + "." + field, Reason: `want "redact" or "block"`}
		}
		var out []loop.Guardrail
		if on, block, err := mode("secrets", st.set.Secrets); err != nil {
			return err
		} else if on {
			out = append(out, loop.SecretsGuardrail(block))
		}
		if on, block, err := mode("pii", st.set.PII); err != nil {
			return err
		} else if on {
			out = append(out, loop.PIIGuardrail(block))
		}
		if len(st.set.Deny) > 0 {
			d, err := loop.DenyGuardrail("policy deny", st.set.Deny...)
			if err != nil {
				return &Error{Path: at + ".deny", Reason: err.Error()}
			}
			out = append(out, d)
		}
		switch {
		case st.set.MaxLength < 0:
			return &Error{Path: at + ".max_length", Reason: "want a positive number of characters"}
		case st.set.MaxLength > 0:
			out = append(out, loop.MaxLengthGuardrail(st.set.MaxLength))
		}
		p.guards[st.stage] = out
	}
	return nil
}

// Rule is one rule of a [Spec].
type Rule struct {
	Tool   string          `json:"tool"`
	Action loop.Verdict    `json:"action"`
	When   json.RawMessage `json:"when,omitempty"`
	Reason string          `json:"reason,omitempty"`
}

// ErrExpandNeedsApproval is returned by [Spec.Expand] without approval.
var ErrExpandNeedsApproval = errors.New("policy: expanding a policy requires human approval")

// Error is a policy that does not compile. Path is the position of
// the problem ("rules[2].when.args.path.path_within").
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return "policy: " + e.Reason
	}
	return "policy: " + e.Path + ": " + e.Reason
}

// Load reads and compiles the JSON policy at path.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loop: %w", err)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Parse parses and compiles a JSON policy.
func Parse(data []byte) (*Spec, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, syntaxError(data, err)
	}
	if top == nil {
		return nil, &Error{Reason: "want a JSON object {\"default\": ..., \"rules\": [...]}"}
	}
	p := &Spec{}
	for k, v := range top {
		switch k {
		case "version":
			if err := json.Unmarshal(v, &p.Version); err != nil || (p.Version != 0 && p.Version != 1) {
				return nil, &Error{Path: "version", Reason: "want 1"}
			}
		case "default":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, &Error{Path: "default", Reason: `want "allow", "deny" or "approve"`}
			}
			p.Default = loop.Verdict(s)
		case "rules":
			var raw []json.RawMessage
			if err := json.Unmarshal(v, &raw); err != nil {
				return nil, &Error{Path: "rules", Reason: "want an array of rules"}
			}
			for i, r := range raw {
				rule, err := parseRule(r, fmt.Sprintf("rules[%d]", i))
				if err != nil {
					return nil, err
				}
				p.Rules = append(p.Rules, rule)
			}
		case "guardrails":
			dec := json.NewDecoder(bytes.NewReader(v))
			dec.DisallowUnknownFields()
			p.Guardrails = &GuardrailSpec{}
			if err := dec.Decode(p.Guardrails); err != nil {
				return nil, &Error{Path: "guardrails", Reason: "want {\"input\", \"tool_results\", \"output\"}, each {\"secrets\", \"pii\", \"deny\", \"max_length\"}: " + err.Error()}
			}
		default:
			return nil, &Error{Path: k, Reason: `unknown key (want "version", "default", "rules" or "guardrails")`}
		}
	}
	if err := p.Compile(); err != nil {
		return nil, err
	}
	return p, nil
}

func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := 1, 1
		for _, b := range data[:max(0, min(int(se.Offset)-1, len(data)))] {
			if b == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		return &Error{Reason: fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, se)}
	}
	return &Error{Reason: "want a JSON object {\"default\": ..., \"rules\": [...]}: " + err.Error()}
}

func parseRule(raw json.RawMessage, at string) (Rule, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return Rule{}, &Error{Path: at, Reason: "want an object {\"tool\", \"action\", \"when\", \"reason\"}"}
	}
	var r Rule
	for k, v := range m {
		var err error
		switch k {
		case "tool":
			err = json.Unmarshal(v, &r.Tool)
		case "action":
			var s string
			err = json.Unmarshal(v, &s)
			r.Action = loop.Verdict(s)
		case "reason":
			err = json.Unmarshal(v, &r.Reason)
		case "when":
			r.When = v
		default:
			return Rule{}, &Error{Path: at + "." + k, Reason: `unknown key (want "tool", "action", "when" or "reason")`}
		}
		if err != nil {
			return Rule{}, &Error{Path: at + "." + k, Reason: "want a string"}
		}
	}
	return r, nil
}

// Compile validates the spec and prepares it for Decide. Parse calls
// it; call it after building or changing a Spec in Go.
func (p *Spec) Compile() error {
	if p.Version != 0 && p.Version != 1 {
		return &Error{Path: "version", Reason: "want 1"}
	}
	switch p.Default {
	case "", loop.VerdictAllow, loop.VerdictDeny, loop.VerdictApprove:
	default:
		return &Error{Path: "default", Reason: fmt.Sprintf(`%q is not "allow", "deny" or "approve"`, p.Default)}
	}
	compiled := make([]compiledRule, len(p.Rules))
	for i, r := range p.Rules {
		c, err := compileRule(r, fmt.Sprintf("rules[%d]", i))
		if err != nil {
			return err
		}
		compiled[i] = c
	}
	p.compiled = compiled
	return p.compileGuardrails()
}

// compiledRule is a rule ready to evaluate.
type compiledRule struct {
	tool   string
	action loop.Verdict
	reason string
	conds  []cond
}

// cond tests one input of a call.
type cond struct {
	get  func(*policyView) (any, bool)
	test pred
}

// pred tests a value; present is false for a missing argument. pv is
// the call being decided, where a predicate records a refusal.
type pred func(v any, present bool, pv *policyView) bool

// policyView is what rules read of a call, and the refusal a predicate
// recorded while they did.
type policyView struct {
	in      *loop.PolicyInput
	args    map[string]any
	refusal string
}

// refuse records that the call must be refused whatever the rules say:
// an argument could not be judged.
func (pv *policyView) refuse(reason string) {
	if pv.refusal == "" {
		pv.refusal = reason
	}
}

func compileRule(r Rule, at string) (compiledRule, error) {
	c := compiledRule{tool: r.Tool, action: r.Action, reason: r.Reason}
	if r.Tool == "" {
		return c, &Error{Path: at + ".tool", Reason: `missing: name a tool, "*" or a glob`}
	}
	if _, err := path.Match(r.Tool, ""); err != nil {
		return c, &Error{Path: at + ".tool", Reason: fmt.Sprintf("bad glob %q", r.Tool)}
	}
	switch r.Action {
	case loop.VerdictAllow, loop.VerdictDeny, loop.VerdictApprove:
	case "":
		return c, &Error{Path: at + ".action", Reason: `missing: want "allow", "deny" or "approve"`}
	default:
		return c, &Error{Path: at + ".action", Reason: fmt.Sprintf(`%q is not "allow", "deny" or "approve"`, r.Action)}
	}
	if w := bytes.TrimSpace(r.When); len(w) == 0 || string(w) == "null" {
		return c, nil
	}
	when, err := decodeObject(r.When, at+".when")
	if err != nil {
		return c, err
	}
	for _, k := range slices.Sorted(maps.Keys(when)) {
		v := when[k]
		p := at + ".when." + k
		switch k {
		case "args":
			args, ok := v.(map[string]any)
			if !ok {
				return c, &Error{Path: p, Reason: "want an object of argument predicates"}
			}
			for _, name := range slices.Sorted(maps.Keys(args)) {
				t, err := compilePred(args[name], p+"."+name)
				if err != nil {
					return c, err
				}
				c.conds = append(c.conds, cond{get: func(pv *policyView) (any, bool) {
					x, ok := pv.args[name]
					return x, ok
				}, test: t})
			}
		case "tainted", "egress", "untrusted", "idempotent", "known":
			t, err := compileTypedPred(v, p, "bool")
			if err != nil {
				return c, err
			}
			c.conds = append(c.conds, cond{get: boolGetter(k), test: t})
		case "step":
			t, err := compileTypedPred(v, p, "number")
			if err != nil {
				return c, err
			}
			c.conds = append(c.conds, cond{get: func(pv *policyView) (any, bool) { return json.Number(strconv.Itoa(pv.in.Step)), true }, test: t})
		case "permissions":
			if s, ok := v.(string); ok {
				v = map[string]any{"contains": s}
			}
			t, err := compilePred(v, p)
			if err != nil {
				return c, err
			}
			c.conds = append(c.conds, cond{get: func(pv *policyView) (any, bool) {
				perms := make([]any, len(pv.in.Flags.Permissions))
				for i, s := range pv.in.Flags.Permissions {
					perms[i] = s
				}
				return perms, true
			}, test: t})
		default:
			return c, &Error{Path: p, Reason: `unknown condition (want "args", "tainted", "egress", "untrusted", "idempotent", "known", "step" or "permissions")`}
		}
	}
	return c, nil
}

func boolGetter(k string) func(*policyView) (any, bool) {
	return func(pv *policyView) (any, bool) {
		in := pv.in
		switch k {
		case "tainted":
			return in.Tainted, true
		case "egress":
			return in.Flags.Egress, true
		case "untrusted":
			return in.Flags.Untrusted, true
		case "idempotent":
			return in.Flags.Idempotent, true
		default:
			return in.Known, true
		}
	}
}

// compileTypedPred is compilePred with a check that a plain value has the
// expected JSON type.
func compileTypedPred(v any, at, want string) (pred, error) {
	if _, isObj := v.(map[string]any); !isObj {
		ok := false
		switch want {
		case "bool":
			_, ok = v.(bool)
		case "number":
			_, ok = v.(json.Number)
		}
		if !ok {
			return nil, &Error{Path: at, Reason: "want a " + want + " or an object of operators"}
		}
	}
	return compilePred(v, at)
}

// compilePred compiles a predicate: a plain value means equality.
func compilePred(v any, at string) (pred, error) {
	ops, ok := v.(map[string]any)
	if !ok {
		want := v
		return func(x any, present bool, _ *policyView) bool { return present && jsonvalue.Equal(x, want) }, nil
	}
	if len(ops) == 0 {
		return nil, &Error{Path: at, Reason: "empty predicate object (use {\"eq\": {}} to compare with an empty object)"}
	}
	var preds []pred
	for _, op := range slices.Sorted(maps.Keys(ops)) {
		p, err := compileOp(op, ops[op], at+"."+op)
		if err != nil {
			return nil, err
		}
		preds = append(preds, p)
	}
	return func(x any, present bool, pv *policyView) bool {
		for _, p := range preds {
			if !p(x, present, pv) {
				return false
			}
		}
		return true
	}, nil
}

func compileOp(op string, e any, at string) (pred, error) {
	bad := func(reason string) error { return &Error{Path: at, Reason: reason} }
	switch op {
	case "eq":
		return func(x any, present bool, _ *policyView) bool { return present && jsonvalue.Equal(x, e) }, nil
	case "ne":
		return func(x any, present bool, _ *policyView) bool { return !present || !jsonvalue.Equal(x, e) }, nil
	case "in", "not_in":
		list, ok := e.([]any)
		if !ok {
			return nil, bad("want an array")
		}
		in := func(x any, present bool, _ *policyView) bool {
			return present && slices.ContainsFunc(list, func(y any) bool { return jsonvalue.Equal(x, y) })
		}
		if op == "in" {
			return in, nil
		}
		return func(x any, present bool, pv *policyView) bool { return !in(x, present, pv) }, nil
	case "starts_with", "ends_with":
		s, ok := e.(string)
		if !ok {
			return nil, bad("want a string")
		}
		return func(x any, _ bool, _ *policyView) bool {
			v, ok := x.(string)
			if !ok {
				return false
			}
			if op == "starts_with" {
				return strings.HasPrefix(v, s)
			}
			return strings.HasSuffix(v, s)
		}, nil
	case "contains":
		return func(x any, _ bool, _ *policyView) bool {
			switch v := x.(type) {
			case string:
				s, ok := e.(string)
				return ok && strings.Contains(v, s)
			case []any:
				return slices.ContainsFunc(v, func(y any) bool { return jsonvalue.Equal(y, e) })
			}
			return false
		}, nil
	case "matches":
		s, ok := e.(string)
		if !ok {
			return nil, bad("want a regular expression string")
		}
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, bad(fmt.Sprintf("bad regular expression: %v", err))
		}
		return func(x any, _ bool, _ *policyView) bool {
			v, ok := x.(string)
			return ok && re.MatchString(v)
		}, nil
	case "max_length", "max_items":
		n, ok := nonNegInt(e)
		if !ok {
			return nil, bad("want a non-negative integer")
		}
		return func(x any, _ bool, _ *policyView) bool {
			if op == "max_length" {
				v, ok := x.(string)
				return ok && utf8.RuneCountInString(v) <= n
			}
			v, ok := x.([]any)
			return ok && len(v) <= n
		}, nil
	case "lt", "le", "gt", "ge":
		want, ok := number(e)
		if !ok {
			return nil, bad("want a number")
		}
		return func(x any, _ bool, _ *policyView) bool {
			v, ok := number(x)
			if !ok {
				return false
			}
			switch op {
			case "lt":
				return v < want
			case "le":
				return v <= want
			case "gt":
				return v > want
			}
			return v >= want
		}, nil
	case "exists":
		want, ok := e.(bool)
		if !ok {
			return nil, bad("want true or false")
		}
		return func(x any, present bool, _ *policyView) bool { return (present && x != nil) == want }, nil
	case "path_within":
		dirs, ok := stringList(e)
		if !ok {
			return nil, bad("want a directory or an array of directories")
		}
		for _, d := range dirs {
			if d == "" || strings.ContainsRune(d, 0) {
				return nil, bad("empty directory, or a NUL byte in one")
			}
		}
		return func(x any, _ bool, pv *policyView) bool {
			v, ok := x.(string)
			if !ok || v == "" {
				return false
			}
			p, err := resolvePath(v)
			if err != nil {
				pv.refuse(fmt.Sprintf("the path %q %v", v, err))
				return false
			}
			for _, d := range dirs {
				rd, err := resolvePath(d)
				if err != nil {
					pv.refuse(fmt.Sprintf("the directory %q of %s %v", d, at, err))
					return false
				}
				if within(p, rd) {
					return true
				}
			}
			return false
		}, nil
	case "url_host":
		hosts, ok := stringList(e)
		if !ok {
			return nil, bad("want a host or an array of hosts")
		}
		for i, h := range hosts {
			hosts[i] = strings.ToLower(h)
		}
		return func(x any, _ bool, _ *policyView) bool {
			v, ok := x.(string)
			if !ok {
				return false
			}
			h := urlHost(v)
			if h == "" {
				return false
			}
			for _, want := range hosts {
				if h == want || (strings.HasPrefix(want, "*.") && strings.HasSuffix(h, want[1:])) {
					return true
				}
			}
			return false
		}, nil
	case "not":
		inner, ok := e.(map[string]any)
		if !ok {
			return nil, bad("want a predicate object")
		}
		p, err := compilePred(inner, at)
		if err != nil {
			return nil, err
		}
		return func(x any, present bool, pv *policyView) bool { return !p(x, present, pv) }, nil
	}
	return nil, bad("unknown operator (want eq, ne, in, not_in, starts_with, ends_with, contains, matches, max_length, max_items, lt, le, gt, ge, exists, path_within, url_host or not)")
}

// Decide applies the rules to a call (see [Spec]).
func (p *Spec) Decide(_ context.Context, in *loop.PolicyInput) (loop.Decision, error) {
	if p.compiled == nil && len(p.Rules) > 0 {
		return loop.Decision{}, errors.New("policy spec was not compiled: call Compile (Parse does)")
	}
	view := &policyView{in: in, args: decodeArgs(in.Call.Arguments)}
	best := -1
	for i := range p.compiled {
		r := &p.compiled[i]
		if !r.matches(view) {
			continue
		}
		if best < 0 || rank(r.action) > rank(p.compiled[best].action) {
			best = i
		}
	}
	if view.refusal != "" {
		return loop.Decision{Verdict: loop.VerdictDeny, Reason: fmt.Sprintf("`%s` is refused by the tool policy: %s", in.Call.Name, view.refusal)}, nil
	}
	if best < 0 {
		v := p.Default
		if v == "" {
			v = loop.VerdictAllow
		}
		reason := ""
		if v != loop.VerdictAllow {
			reason = fmt.Sprintf("`%s` is not allowed by the tool policy (default %s)", in.Call.Name, v)
		}
		return loop.Decision{Verdict: v, Reason: reason}, nil
	}
	r := &p.compiled[best]
	reason := r.reason
	if reason == "" && r.action != loop.VerdictAllow {
		reason = fmt.Sprintf("`%s` is refused by the tool policy (rules[%d])", in.Call.Name, best)
		if r.action == loop.VerdictApprove {
			reason = fmt.Sprintf("`%s` requires approval under the tool policy (rules[%d])", in.Call.Name, best)
		}
	}
	return loop.Decision{Verdict: r.action, Reason: reason}, nil
}

func rank(v loop.Verdict) int {
	switch v {
	case loop.VerdictDeny:
		return 3
	case loop.VerdictApprove:
		return 2
	}
	return 1
}

func (r *compiledRule) matches(v *policyView) bool {
	if r.tool != "*" && r.tool != v.in.Call.Name {
		if ok, _ := path.Match(r.tool, v.in.Call.Name); !ok {
			return false
		}
	}
	for _, c := range r.conds {
		x, present := c.get(v)
		if !c.test(x, present, v) {
			return false
		}
	}
	return true
}

// Narrow returns a copy of p with more deny or approve rules. Narrowing is
// free: it can only refuse more.
func (p *Spec) Narrow(rules ...Rule) (*Spec, error) {
	for i, r := range rules {
		if r.Action != loop.VerdictDeny && r.Action != loop.VerdictApprove {
			return nil, &Error{Path: fmt.Sprintf("narrow[%d].action", i), Reason: "narrowing accepts only deny and approve rules (allowing more is Expand)"}
		}
	}
	q := &Spec{Version: p.Version, Default: p.Default, Rules: append(slices.Clone(rules), p.Rules...)}
	if err := q.Compile(); err != nil {
		return nil, err
	}
	return q, nil
}

// Expand returns a copy of p with more rules of any action and, when def is
// not "", a new default. Expanding can allow what was refused, so it needs
// a human's approval: without approved it returns ErrExpandNeedsApproval.
func (p *Spec) Expand(approved bool, def loop.Verdict, rules ...Rule) (*Spec, error) {
	if !approved {
		return nil, ErrExpandNeedsApproval
	}
	q := &Spec{Version: p.Version, Default: p.Default, Rules: append(slices.Clone(p.Rules), rules...)}
	if def != "" {
		q.Default = def
	}
	if err := q.Compile(); err != nil {
		return nil, err
	}
	return q, nil
}

func decodeObject(raw json.RawMessage, at string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &Error{Path: at, Reason: "invalid JSON: " + err.Error()}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Path: at, Reason: "want an object of conditions"}
	}
	return m, nil
}

func decodeArgs(raw json.RawMessage) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	return m
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func nonNegInt(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	if err != nil || i < 0 || i > 1<<31 {
		return 0, false
	}
	return int(i), true
}

func stringList(v any) ([]string, bool) {
	switch x := v.(type) {
	case string:
		return []string{x}, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, len(out) > 0
	}
	return nil, false
}

// urlHost returns the lower-cased host of an absolute URL, or "".
func urlHost(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
