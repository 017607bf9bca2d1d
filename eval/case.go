package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/autoagent-go/autoagent/internal/jsonpath"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
)

// Case is one thing the agent must do: a prompt (after optional prior
// messages) and what must hold of the run.
type Case struct {
	ID       string        `json:"id"`
	Prompt   string        `json:"prompt"`
	Messages []llm.Message `json:"messages,omitempty"`
	Expect   Expect        `json:"expect"`
	// Scripts are for suites against the scripted provider: run r of the
	// case plays Scripts[r mod len(Scripts)], so runs of one case can
	// differ (paths relative to the case file). The agent factory decides
	// what to do with them; autoagent eval uses them with --provider
	// scripted.
	Scripts []string `json:"scripts,omitempty"`
	// Check, when set (Go only), must also hold: nil means it does.
	Check func(res *loop.Result) error `json:"-"`
	// Recording, when set, makes every run of the case an offline replay
	// of it (no provider, no tool runs): see [FromRecording].
	Recording *loop.Recording `json:"-"`
}

// Expect are the declarative matchers of a case; all that are set must
// hold.
type Expect struct {
	OutputEquals     *string                    `json:"output_equals,omitempty"`
	OutputContains   stringList                 `json:"output_contains,omitempty"`
	OutputRegex      string                     `json:"output_regex,omitempty"`
	StructuredEquals json.RawMessage            `json:"structured_equals,omitempty"`
	JSONPath         map[string]json.RawMessage `json:"json_path,omitempty"`
	ToolCalled       toolExpects                `json:"tool_called,omitempty"`
	ToolNotCalled    stringList                 `json:"tool_not_called,omitempty"`
	ToolOrder        []string                   `json:"tool_order,omitempty"`
	MaxSteps         int                        `json:"max_steps,omitempty"`
	MaxTokens        int64                      `json:"max_tokens,omitempty"`
	StopReason       loop.StopReason            `json:"stop_reason,omitempty"`

	regex *regexp.Regexp
}

// stringList is a string or a list of them.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*l = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("want a string or a list of strings")
	}
	*l = many
	return nil
}

// ToolExpect is a tool the run must call, with arguments that hold at
// least Args (a subset: every key given, equal).
type ToolExpect struct {
	Name string                     `json:"name"`
	Args map[string]json.RawMessage `json:"args,omitempty"`
}

// toolExpects is a name, an object, or a list of either.
type toolExpects []ToolExpect

func (l *toolExpects) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	var items []json.RawMessage
	if len(b) > 0 && b[0] == '[' {
		if err := json.Unmarshal(b, &items); err != nil {
			return err
		}
	} else {
		items = []json.RawMessage{b}
	}
	for _, it := range items {
		var name string
		if json.Unmarshal(it, &name) == nil {
			*l = append(*l, ToolExpect{Name: name})
			continue
		}
		var te ToolExpect
		dec := json.NewDecoder(bytes.NewReader(it))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&te); err != nil || te.Name == "" {
			return errors.New(`want a tool name or {"name": ..., "args": {...}}`)
		}
		*l = append(*l, te)
	}
	return nil
}

// CaseError is a case file's problem, naming the file and line.
type CaseError struct {
	File string
	Line int
	Err  error
}

func (e *CaseError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *CaseError) Unwrap() error { return e.Err }

// LoadCases reads a case file: JSONL, one case object per line (blank
// lines and lines starting with # skipped). Strict: an unknown key, a bad
// value, a missing id or prompt, or an id given twice is an error naming
// the line.
func LoadCases(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cases, err := ReadCases(f, path)
	for i := range cases {
		for j, s := range cases[i].Scripts {
			if !filepath.IsAbs(s) {
				cases[i].Scripts[j] = filepath.Join(filepath.Dir(path), s)
			}
		}
	}
	return cases, err
}

// ReadCases is LoadCases on r; name is the file's name in errors.
func ReadCases(r io.Reader, name string) ([]Case, error) {
	var cases []Case
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		bad := func(format string, args ...any) error {
			return &CaseError{File: name, Line: line, Err: fmt.Errorf(format, args...)}
		}
		var c Case
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, bad("%s", strings.TrimPrefix(err.Error(), "json: "))
		}
		switch {
		case c.ID == "":
			return nil, bad("a case needs an \"id\"")
		case c.Prompt == "" && len(c.Messages) == 0:
			return nil, bad("case %q needs a \"prompt\"", c.ID)
		case seen[c.ID] > 0:
			return nil, bad("case %q is also on line %d", c.ID, seen[c.ID])
		case slices.Contains(c.Scripts, ""):
			return nil, bad("case %q: a script path is empty", c.ID)
		}
		seen[c.ID] = line
		if c.Expect.OutputRegex != "" {
			re, err := regexp.Compile(c.Expect.OutputRegex)
			if err != nil {
				return nil, bad("case %q: output_regex: %v", c.ID, err)
			}
			c.Expect.regex = re
		}
		for p := range c.Expect.JSONPath {
			if _, err := jsonpath.Parse(p); err != nil {
				return nil, bad("case %q: json_path %q: %v", c.ID, p, err)
			}
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cases, nil
}
