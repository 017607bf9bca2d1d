package synth

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/autoagent-go/autoagent/tool"
)

// outcome is what one case produced: the JSON value the tool returned, or
// the error it reported.
type outcome struct {
	value json.RawMessage
	err   string
}

func (o outcome) String() string {
	if o.err != "" {
		return "error: " + o.err
	}
	return string(o.value)
}

// runCase calls t with args. A tool failure is an outcome; the error is
// non-nil only when the call could not be attempted.
func runCase(ctx context.Context, t tool.Tool, args json.RawMessage) (outcome, error) {
	res, err := t.Call(ctx, tool.Call{Name: t.Spec().Name, Arguments: args})
	if err != nil {
		return outcome{}, err
	}
	if res.IsError {
		return outcome{err: res.Text()}, nil
	}
	text := strings.TrimSpace(res.Text())
	if !json.Valid([]byte(text)) {
		return outcome{err: "the result is not JSON: " + clip(text, 200)}, nil
	}
	return outcome{value: json.RawMessage(text)}, nil
}

// selfTest runs the first SelfTests tests the writer wrote. It returns how
// many passed, or a *RejectError naming the first failure.
func (b *Builder) selfTest(ctx context.Context, t *Tool, tests []SelfTest) (int, error) {
	if len(tests) > b.opts.SelfTests {
		tests = tests[:b.opts.SelfTests]
	}
	for i, st := range tests {
		args := st.Args
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		o, err := runCase(ctx, t, args)
		if err != nil {
			return i, err
		}
		n := i + 1
		switch {
		case o.err != "":
			return i, reject(StageSelfTest, "self-test %d failed: the tool reported an error for args %s: %s", n, clip(string(args), 300), clip(o.err, 1500))
		case len(st.Expect) > 0 && !JSONEqual(st.Expect, o.value):
			return i, reject(StageSelfTest, "self-test %d failed: args %s: expected %s, got %s", n, clip(string(args), 300), clip(string(st.Expect), 300), clip(string(o.value), 300))
		case st.ExpectContains != "" && !strings.Contains(string(o.value), st.ExpectContains):
			return i, reject(StageSelfTest, "self-test %d failed: args %s: %q not in %s", n, clip(string(args), 300), st.ExpectContains, clip(string(o.value), 300))
		}
	}
	return len(tests), nil
}

// clip shortens s for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:n], len(s))
}
