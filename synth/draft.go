package synth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Draft is a tool as the writer model wrote it: its spec, its source and
// the tests it wrote for itself.
type Draft struct {
	Spec
	Source    string     `json:"source"`
	SelfTests []SelfTest `json:"self_tests,omitempty"`
}

// SelfTest is a test the writer model wrote for its own tool: the tool is
// called with Args and must return Expect (JSON equality) and/or a result
// whose JSON text contains ExpectContains.
type SelfTest struct {
	Args           json.RawMessage `json:"args"`
	Expect         json.RawMessage `json:"expect,omitempty"`
	ExpectContains string          `json:"expect_contains,omitempty"`
}

// draftSchema is the structured-output schema of the writer's answer. It
// is not strict: input_schema and the expected values are free-form JSON.
var draftSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "snake_case tool name"},
    "description": {"type": "string", "description": "what the tool does, for the model that will call it"},
    "input_schema": {"type": "object", "description": "JSON Schema of the arguments object"},
    "capabilities": {"type": "array", "items": {"type": "string"}, "description": "grants the tool needs; usually none"},
    "source": {"type": "string", "description": "the complete source code"},
    "self_tests": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "args": {"type": "object"},
          "expect": {"description": "the exact JSON value run must return"},
          "expect_contains": {"type": "string"}
        },
        "required": ["args"]
      }
    }
  },
  "required": ["name", "description", "input_schema", "source", "self_tests"]
}`)

// parseDraft reads the writer's answer tolerantly: strict JSON, else the
// JSON inside a ``` fence, else the first balanced {...} of the text.
func parseDraft(text string) (*Draft, error) {
	raw, err := extractJSON(text)
	if err != nil {
		return nil, err
	}
	var d Draft
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("the answer is not the expected JSON object: %v", err)
	}
	if strings.TrimSpace(d.Source) == "" {
		return nil, errors.New(`the answer has no "source"`)
	}
	return &d, nil
}

func extractJSON(text string) ([]byte, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, errors.New("the answer is empty")
	}
	if json.Valid([]byte(t)) {
		return []byte(t), nil
	}
	if strings.HasPrefix(t, "```") {
		body := t[3:]
		if i := strings.IndexByte(body, '\n'); i >= 0 {
			body = body[i+1:]
		}
		body = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(body), "```"))
		if json.Valid([]byte(body)) {
			return []byte(body), nil
		}
	}
	if obj, ok := firstObject(t); ok {
		return obj, nil
	}
	if strings.Contains(t, "{") {
		return nil, errors.New("the answer is not valid JSON")
	}
	return nil, errors.New("the answer contains no JSON object")
}

// firstObject returns the first balanced, valid {...} of s, reading
// strings and escapes once inside the object (quotes in the prose before it
// do not count).
func firstObject(s string) ([]byte, bool) {
	for start := strings.IndexByte(s, '{'); start >= 0; {
		depth, inStr, esc := 0, false, false
		for i := start; i < len(s); i++ {
			c := s[i]
			switch {
			case inStr && esc:
				esc = false
			case inStr && c == '\\':
				esc = true
			case inStr && c == '"':
				inStr = false
			case inStr:
			case c == '"':
				inStr = true
			case c == '{':
				depth++
			case c == '}':
				depth--
				if depth == 0 {
					if b := []byte(s[start : i+1]); json.Valid(b) {
						return b, true
					}
					i = len(s)
				}
			}
		}
		next := strings.IndexByte(s[start+1:], '{')
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return nil, false
}

// rawIsObject reports whether raw is a JSON object.
func rawIsObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}
