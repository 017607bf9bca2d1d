package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/autoagent-go/autoagent/internal/jsonpath"
	"github.com/autoagent-go/autoagent/internal/jsonvalue"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
)

// Judge reports whether res (and runErr, the run's error) meets c: nil
// when every matcher holds, else the first one that does not.
func (c *Case) Judge(res *loop.Result, runErr error) error {
	reason, err := c.judge(res, runErr)
	if reason != "" {
		return errors.New(reason)
	}
	return err
}

// judge is Judge with the most common failures' reasons as strings (one
// allocation each: RunK judges every run of a suite of thousands and
// keeps a failure's reason, not its error); the other failures are
// errors, a Check's own error as it returned it.
func (c *Case) judge(res *loop.Result, runErr error) (string, error) {
	e := &c.Expect
	if res == nil {
		return "", fmt.Errorf("the run failed: %v", runErr)
	}
	want := e.StopReason
	if want == "" {
		want = loop.StopDone
	}
	if res.StopReason != want {
		return "", fmt.Errorf("stop_reason %q, want %q (%v)", res.StopReason, want, runErr)
	}
	out := res.Output
	// The most common failures build their reason without fmt: a suite
	// of thousands of runs judges each one.
	if e.OutputEquals != nil && strings.TrimSpace(out) != strings.TrimSpace(*e.OutputEquals) {
		return quotedPair("output ", out, ", want ", *e.OutputEquals), nil
	}
	for _, s := range e.OutputContains {
		if !strings.Contains(out, s) {
			return "output does not contain " + strconv.Quote(s), nil
		}
	}
	if e.OutputRegex != "" {
		re := e.regex
		if re == nil {
			var err error
			if re, err = regexp.Compile(e.OutputRegex); err != nil {
				return "", fmt.Errorf("output_regex: %v", err)
			}
		}
		if !re.MatchString(out) {
			return "", fmt.Errorf("output does not match %s", e.OutputRegex)
		}
	}
	if len(e.StructuredEquals) > 0 || len(e.JSONPath) > 0 {
		doc := res.Structured
		if len(doc) == 0 {
			doc = json.RawMessage(strings.TrimSpace(out))
		}
		v, ok := jsonvalue.Decode(doc)
		if !ok {
			return "", errors.New("the answer is not JSON")
		}
		if len(e.StructuredEquals) > 0 && !jsonvalue.EqualRaw(doc, e.StructuredEquals) {
			return "", fmt.Errorf("structured answer %s, want %s", doc, e.StructuredEquals)
		}
		for _, p := range slices.Sorted(maps.Keys(e.JSONPath)) {
			got, err := lookup(v, p)
			if err != nil {
				return "", fmt.Errorf("json_path %s: %v", p, err)
			}
			want, _ := jsonvalue.Decode(e.JSONPath[p])
			if !jsonvalue.Equal(got, want) {
				gb, _ := json.Marshal(got)
				return "", fmt.Errorf("json_path %s is %s, want %s", p, gb, e.JSONPath[p])
			}
		}
	}
	calls := ToolCalls(res.Messages)
	for _, te := range e.ToolCalled {
		if !slices.ContainsFunc(calls, func(c llm.ToolCall) bool { return c.Name == te.Name && argsHold(c.Arguments, te.Args) }) {
			if len(te.Args) > 0 {
				return "", fmt.Errorf("no call of %s with arguments %s", te.Name, mustJSON(te.Args))
			}
			return "", fmt.Errorf("%s was not called", te.Name)
		}
	}
	for _, name := range e.ToolNotCalled {
		if slices.ContainsFunc(calls, func(c llm.ToolCall) bool { return c.Name == name }) {
			return "", fmt.Errorf("%s was called", name)
		}
	}
	if len(e.ToolOrder) > 0 {
		i := 0
		for _, c := range calls {
			if i < len(e.ToolOrder) && c.Name == e.ToolOrder[i] {
				i++
			}
		}
		if i < len(e.ToolOrder) {
			return "", fmt.Errorf("tool_order %v not followed (calls %v)", e.ToolOrder, names(calls))
		}
	}
	if e.MaxSteps > 0 && res.Steps > e.MaxSteps {
		return "", fmt.Errorf("%d steps, more than %d", res.Steps, e.MaxSteps)
	}
	if e.MaxTokens > 0 {
		if !res.UsageReported {
			return "", errors.New("max_tokens: the provider reported no usage")
		}
		if n := res.Usage.InputTokens + res.Usage.OutputTokens; n > e.MaxTokens {
			return "", fmt.Errorf("%d tokens, more than %d", n, e.MaxTokens)
		}
	}
	if c.Check != nil {
		if err := c.Check(res); err != nil {
			return "", err
		}
	}
	return "", nil
}

// quotedPair is a+quote(x)+b+quote(y) in one allocation.
func quotedPair(a, x, b, y string) string {
	var buf [128]byte
	q := strconv.AppendQuote(buf[:0], x)
	n := len(q)
	q = strconv.AppendQuote(q, y)
	var sb strings.Builder
	sb.Grow(len(a) + len(b) + len(q))
	sb.WriteString(a)
	sb.Write(q[:n])
	sb.WriteString(b)
	sb.Write(q[n:])
	return sb.String()
}

// ToolCalls returns the tool calls of a transcript, in order.
func ToolCalls(msgs []llm.Message) []llm.ToolCall {
	var out []llm.ToolCall
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			out = append(out, m.ToolCalls()...)
		}
	}
	return out
}

func names(calls []llm.ToolCall) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Name
	}
	return out
}

// argsHold reports whether every key of want is in args with an equal value.
func argsHold(args json.RawMessage, want map[string]json.RawMessage) bool {
	if len(want) == 0 {
		return true
	}
	var got map[string]json.RawMessage
	if json.Unmarshal(args, &got) != nil {
		return false
	}
	for k, v := range want {
		g, ok := got[k]
		if !ok || !jsonvalue.EqualRaw(g, v) {
			return false
		}
	}
	return true
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// lookup follows path in v.
func lookup(v any, path string) (any, error) {
	steps, err := jsonpath.Parse(path)
	if err != nil {
		return nil, err
	}
	for _, s := range steps {
		switch {
		case s.IsKey:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%q: not an object", s.Key)
			}
			if v, ok = m[s.Key]; !ok {
				return nil, fmt.Errorf("no key %q", s.Key)
			}
		default:
			a, ok := v.([]any)
			if !ok || s.Index >= len(a) {
				return nil, fmt.Errorf("no element %d", s.Index)
			}
			v = a[s.Index]
		}
	}
	return v, nil
}
