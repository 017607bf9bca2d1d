package scripted

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/autoagent-go/autoagent/llm"
)

// fileTurn is the JSON form of a Turn (see the package doc).
type fileTurn struct {
	Text         string           `json:"text"`
	Reasoning    string           `json:"reasoning"`
	ToolCalls    []fileCall       `json:"tool_calls"`
	Usage        *llm.Usage       `json:"usage"`
	FinishReason llm.FinishReason `json:"finish_reason"`
	Model        string           `json:"model"`
	Error        *fileError       `json:"error"`
	MidStream    bool             `json:"mid_stream"`
}

type fileCall struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments"`
	ArgumentsRaw *string         `json:"arguments_raw"`
}

type fileError struct {
	Status       int    `json:"status"`
	Code         string `json:"code"`
	Message      string `json:"message"`
	Retryable    bool   `json:"retryable"`
	RetryAfterMS int64  `json:"retry_after_ms"`
	RequestID    string `json:"request_id"`
}

// Load reads a script file (see the package doc for the format) and returns
// a provider playing it with opts.
func Load(path string, opts Options) (*Provider, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	defer f.Close()
	turns, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return NewWithOptions(opts, turns...), nil
}

// Parse reads a script: a JSON array of turns, an object {"turns": [...]},
// or JSONL with one turn per line. Errors name the turn, and the line for
// JSONL.
func Parse(r io.Reader) ([]Turn, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("scripted: reading script: %w", err)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("scripted: the script is empty: want a JSON array of turns, {\"turns\": [...]}, or one turn object per line")
	}
	switch trimmed[0] {
	case '[':
		var raw []json.RawMessage
		if err := json.Unmarshal(trimmed, &raw); err != nil {
			return nil, fmt.Errorf("scripted: script is not a valid JSON array: %w", err)
		}
		return decodeTurns(raw, nil)
	case '{':
		if json.Valid(trimmed) { // one object: {"turns": [...]}, or a single turn
			var probe map[string]json.RawMessage
			if err := json.Unmarshal(trimmed, &probe); err != nil {
				return nil, fmt.Errorf("scripted: %w", err)
			}
			if turns, ok := probe["turns"]; ok {
				if len(probe) != 1 {
					return nil, errors.New("scripted: a {\"turns\": [...]} script may hold no other key")
				}
				var raw []json.RawMessage
				if err := json.Unmarshal(turns, &raw); err != nil {
					return nil, errors.New("scripted: \"turns\" must be an array of turn objects")
				}
				return decodeTurns(raw, nil)
			}
			return decodeTurns([]json.RawMessage{trimmed}, nil)
		}
	}
	return parseLines(data)
}

func parseLines(data []byte) ([]Turn, error) {
	var raw []json.RawMessage
	var lines []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' || bytes.HasPrefix(line, []byte("//")) {
			continue
		}
		raw = append(raw, append(json.RawMessage(nil), line...))
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("scripted: reading script: %w", err)
	}
	if len(raw) == 0 {
		return nil, errors.New("scripted: the script has no turns")
	}
	return decodeTurns(raw, lines)
}

func decodeTurns(raw []json.RawMessage, lines []int) ([]Turn, error) {
	turns := make([]Turn, 0, len(raw))
	for i, r := range raw {
		where := fmt.Sprintf("turn %d", i+1)
		if lines != nil {
			where = fmt.Sprintf("line %d (turn %d)", lines[i], i+1)
		}
		t, err := decodeTurn(r)
		if err != nil {
			return nil, fmt.Errorf("scripted: %s: %w", where, err)
		}
		turns = append(turns, t)
	}
	return turns, nil
}

func decodeTurn(raw json.RawMessage) (Turn, error) {
	var ft fileTurn
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ft); err != nil {
		return Turn{}, fmt.Errorf("not a valid turn object: %w", err)
	}
	if dec.More() {
		return Turn{}, errors.New("more than one JSON value (JSONL wants one turn per line)")
	}
	t := Turn{
		Text:         ft.Text,
		Reasoning:    ft.Reasoning,
		Usage:        ft.Usage,
		FinishReason: ft.FinishReason,
		Model:        ft.Model,
		MidStream:    ft.MidStream,
	}
	for j, c := range ft.ToolCalls {
		if c.Name == "" {
			return Turn{}, fmt.Errorf("tool_calls[%d]: missing \"name\"", j)
		}
		args := c.Arguments
		switch {
		case c.ArgumentsRaw != nil && len(args) > 0:
			return Turn{}, fmt.Errorf("tool_calls[%d]: give \"arguments\" or \"arguments_raw\", not both", j)
		case c.ArgumentsRaw != nil:
			args = json.RawMessage(*c.ArgumentsRaw)
		case len(args) == 0 || string(args) == "null":
			args = json.RawMessage(`{}`)
		default:
			if t := bytes.TrimSpace(args); len(t) == 0 || t[0] != '{' {
				return Turn{}, fmt.Errorf("tool_calls[%d] (%s): \"arguments\" must be a JSON object (use \"arguments_raw\" for exact bytes)", j, c.Name)
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, args); err != nil {
				return Turn{}, fmt.Errorf("tool_calls[%d] (%s): %w", j, c.Name, err)
			}
			args = buf.Bytes()
		}
		t.ToolCalls = append(t.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: args})
	}
	if ft.Error != nil {
		e := ft.Error
		if e.Message == "" && e.Status == 0 && e.Code == "" {
			return Turn{}, errors.New("error: give at least one of \"status\", \"code\" or \"message\"")
		}
		t.Err = &llm.ProviderError{
			Provider:   "scripted",
			Status:     e.Status,
			Code:       e.Code,
			Message:    e.Message,
			Retryable:  e.Retryable,
			RetryAfter: time.Duration(e.RetryAfterMS) * time.Millisecond,
			RequestID:  e.RequestID,
		}
	} else if ft.MidStream {
		return Turn{}, errors.New("\"mid_stream\" needs an \"error\" to fail with")
	}
	return t, nil
}
