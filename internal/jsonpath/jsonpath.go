// Package jsonpath parses the small subset of RFC 9535 JSON paths that
// model providers send and evaluation cases write: "$" followed by
// ".name", "['name']", "[\"name\"]" or "[3]" steps.
//
//	steps, err := jsonpath.Parse(`$.order.items[0]['unit price']`)
//	// steps: key "order", key "items", index 0, key "unit price"
//
// Gemini's streamed arguments (providers/gemini) and eval's json_path
// matcher read paths with it, so a path means the same to both.
package jsonpath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxIndex bounds the array index a path may name: a larger one is
// refused rather than allocated by whoever follows the path.
const MaxIndex = 1 << 16

// Step is one step of a path: an object member (IsKey) or an array element.
type Step struct {
	Key   string
	IsKey bool
	Index int
}

// Parse reads a path. A path it cannot read is refused whole, with what is
// wrong.
func Parse(p string) ([]Step, error) {
	rest, ok := strings.CutPrefix(p, "$")
	if !ok {
		return nil, errors.New(`a path starts with "$"`)
	}
	var steps []Step
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return nil, errors.New("an empty key")
			}
			steps = append(steps, Step{Key: rest[:end], IsKey: true})
			rest = rest[end:]
		case '[':
			if len(rest) > 1 && (rest[1] == '\'' || rest[1] == '"') {
				k, after, ok := quotedName(rest[1:])
				if !ok || !strings.HasPrefix(after, "]") {
					return nil, errors.New("an unclosed quoted key")
				}
				steps = append(steps, Step{Key: k, IsKey: true})
				rest = after[1:]
				continue
			}
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, errors.New("an unclosed [")
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil || i < 0 || i > MaxIndex {
				return nil, fmt.Errorf("index %q is not a number from 0 to %d", rest[1:end], MaxIndex)
			}
			steps = append(steps, Step{Index: i})
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("unexpected %q", rest[0])
		}
	}
	return steps, nil
}

// quotedName reads a quoted member name at the start of s ('name' or
// "name", with backslash escapes) and returns it and the rest of s.
func quotedName(s string) (name, rest string, ok bool) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == q:
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}
