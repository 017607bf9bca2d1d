package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
)

// Judge reports whether res (and runErr, the run's error) meets c: nil
// when every matcher holds, else the first one that does not.
func (c *Case) Judge(res *loop.Result, runErr error) error {
	e := &c.Expect
	if res == nil {
		return fmt.Errorf("the run failed: %v", runErr)
	}
	want := e.StopReason
	if want == "" {
		want = loop.StopDone
	}
	if res.StopReason != want {
		return fmt.Errorf("stop_reason %q, want %q (%v)", res.StopReason, want, runErr)
	}
	out := res.Output
	// The most common failures build their reason without fmt: a suite
	// of thousands of runs judges each one.
	if e.OutputEquals != nil && strings.TrimSpace(out) != strings.TrimSpace(*e.OutputEquals) {
		return errors.New("output " + strconv.Quote(out) + ", want " + strconv.Quote(*e.OutputEquals))
	}
	for _, s := range e.OutputContains {
		if !strings.Contains(out, s) {
			return errors.New("output does not contain " + strconv.Quote(s))
		}
	}
	if e.OutputRegex != "" {
		re := e.regex
		if re == nil {
			var err error
			if re, err = regexp.Compile(e.OutputRegex); err != nil {
				return fmt.Errorf("output_regex: %v", err)
			}
		}
		if !re.MatchString(out) {
			return fmt.Errorf("output does not match %s", e.OutputRegex)
		}
	}
	if len(e.StructuredEquals) > 0 || len(e.JSONPath) > 0 {
		doc := res.Structured
		if len(doc) == 0 {
			doc = json.RawMessage(strings.TrimSpace(out))
		}
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			return fmt.Errorf("the answer is not JSON: %v", err)
		}
		if len(e.StructuredEquals) > 0 && !sameJSON(doc, e.StructuredEquals) {
			return fmt.Errorf("structured answer %s, want %s", doc, e.StructuredEquals)
		}
		for _, p := range sortedKeys(e.JSONPath) {
			got, err := lookup(v, p)
			if err != nil {
				return fmt.Errorf("json_path %s: %v", p, err)
			}
			gb, _ := json.Marshal(got)
			if !sameJSON(gb, e.JSONPath[p]) {
				return fmt.Errorf("json_path %s is %s, want %s", p, gb, e.JSONPath[p])
			}
		}
	}
	calls := ToolCalls(res.Messages)
	for _, te := range e.ToolCalled {
		if !slices.ContainsFunc(calls, func(c llm.ToolCall) bool { return c.Name == te.Name && argsHold(c.Arguments, te.Args) }) {
			if len(te.Args) > 0 {
				return fmt.Errorf("no call of %s with arguments %s", te.Name, mustJSON(te.Args))
			}
			return fmt.Errorf("%s was not called", te.Name)
		}
	}
	for _, name := range e.ToolNotCalled {
		if slices.ContainsFunc(calls, func(c llm.ToolCall) bool { return c.Name == name }) {
			return fmt.Errorf("%s was called", name)
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
			return fmt.Errorf("tool_order %v not followed (calls %v)", e.ToolOrder, names(calls))
		}
	}
	if e.MaxSteps > 0 && res.Steps > e.MaxSteps {
		return fmt.Errorf("%d steps, more than %d", res.Steps, e.MaxSteps)
	}
	if e.MaxTokens > 0 {
		if !res.UsageReported {
			return errors.New("max_tokens: the provider reported no usage")
		}
		if n := res.Usage.InputTokens + res.Usage.OutputTokens; n > e.MaxTokens {
			return fmt.Errorf("%d tokens, more than %d", n, e.MaxTokens)
		}
	}
	if c.Check != nil {
		if err := c.Check(res); err != nil {
			return err
		}
	}
	return nil
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
		if !ok || !sameJSON(g, v) {
			return false
		}
	}
	return true
}

func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// pathStep is one step of a JSON path: a key, or an index.
type pathStep struct {
	key   string
	index int // -1 for a key
}

// parsePath reads "$.a.b[0].c" (keys and indexes; nothing else).
func parsePath(p string) ([]pathStep, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, errors.New(`a path starts with "$"`)
	}
	var steps []pathStep
	rest := p[1:]
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			n := strings.IndexAny(rest, ".[")
			if n < 0 {
				n = len(rest)
			}
			if n == 0 {
				return nil, errors.New("an empty key")
			}
			steps = append(steps, pathStep{key: rest[:n], index: -1})
			rest = rest[n:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, errors.New("an unclosed [")
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil || i < 0 {
				return nil, fmt.Errorf("index %q is not a number", rest[1:end])
			}
			steps = append(steps, pathStep{index: i})
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("unexpected %q", rest[0])
		}
	}
	return steps, nil
}

// lookup follows path in v.
func lookup(v any, path string) (any, error) {
	steps, err := parsePath(path)
	if err != nil {
		return nil, err
	}
	for _, s := range steps {
		switch {
		case s.index < 0:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%q: not an object", s.key)
			}
			if v, ok = m[s.key]; !ok {
				return nil, fmt.Errorf("no key %q", s.key)
			}
		default:
			a, ok := v.([]any)
			if !ok || s.index >= len(a) {
				return nil, fmt.Errorf("no element %d", s.index)
			}
			v = a[s.index]
		}
	}
	return v, nil
}
