package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	pdk "github.com/autoagent-go/autoagent/pdk/go"
)

// QueryInput is the json_query arguments.
type QueryInput struct {
	JSON  string `json:"json" jsonschema:"the JSON document, as text"`
	Query string `json:"query" jsonschema:"the path to extract, e.g. .items[0].name or .users[*].email; empty or . returns the whole document"`
}

// segment is one step of a path: a key, an index, or a wildcard.
type segment struct {
	key      string
	index    int
	isIndex  bool
	wildcard bool
}

func parsePath(q string) ([]segment, error) {
	var out []segment
	q = strings.TrimSpace(q)
	for i := 0; i < len(q); {
		switch {
		case q[i] == '.' && i+1 < len(q) && q[i+1] == '*':
			out = append(out, segment{wildcard: true})
			i += 2
		case q[i] == '.':
			j := i + 1
			for j < len(q) && q[j] != '.' && q[j] != '[' {
				j++
			}
			if j > i+1 {
				out = append(out, segment{key: q[i+1 : j]})
			}
			i = j
		case q[i] == '[':
			end := strings.IndexByte(q[i:], ']')
			if q[i+1:min(i+2, len(q))] == `"` {
				// A quoted key may hold ']': find the closing quote first.
				var key string
				dec := json.NewDecoder(strings.NewReader(q[i+1:]))
				if err := dec.Decode(&key); err != nil {
					return nil, fmt.Errorf("query %q: bad quoted key at %d: %v", q, i, err)
				}
				j := i + 1 + int(dec.InputOffset())
				if j >= len(q) || q[j] != ']' {
					return nil, fmt.Errorf("query %q: missing ] after the quoted key at %d", q, i)
				}
				out = append(out, segment{key: key})
				i = j + 1
				continue
			}
			if end < 0 {
				return nil, fmt.Errorf("query %q: [ at %d is not closed", q, i)
			}
			inner := strings.TrimSpace(q[i+1 : i+end])
			if inner == "*" {
				out = append(out, segment{wildcard: true})
			} else {
				n, err := strconv.Atoi(inner)
				if err != nil {
					return nil, fmt.Errorf("query %q: [%s] is not an index, * or a quoted key", q, inner)
				}
				out = append(out, segment{index: n, isIndex: true})
			}
			i += end + 1
		default:
			return nil, fmt.Errorf("query %q: unexpected %q at %d (segments start with . or [)", q, q[i], i)
		}
	}
	return out, nil
}

// apply walks v along path; after a wildcard the result is a list.
func apply(v any, path []segment, where string) (any, error) {
	if len(path) == 0 {
		return v, nil
	}
	s := path[0]
	switch {
	case s.wildcard:
		var items []any
		switch x := v.(type) {
		case []any:
			items = x
		case map[string]any:
			keys := sortedKeys(x)
			for _, k := range keys {
				items = append(items, x[k])
			}
		default:
			return nil, fmt.Errorf("%s is %s, not an array or object, so [*] does not apply", where, kind(v))
		}
		out := make([]any, 0, len(items))
		for i, item := range items {
			r, err := apply(item, path[1:], fmt.Sprintf("%s[%d]", where, i))
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	case s.isIndex:
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%s is %s, not an array, so [%d] does not apply", where, kind(v), s.index)
		}
		i := s.index
		if i < 0 {
			i += len(arr)
		}
		if i < 0 || i >= len(arr) {
			return nil, fmt.Errorf("%s has %d elements: index %d is out of range", where, len(arr), s.index)
		}
		return apply(arr[i], path[1:], fmt.Sprintf("%s[%d]", where, s.index))
	default:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is %s, not an object, so .%s does not apply", where, kind(v), s.key)
		}
		val, ok := obj[s.key]
		if !ok {
			return nil, fmt.Errorf("%s has no key %q (keys: %s)", where, s.key, strings.Join(sortedKeys(obj), ", "))
		}
		return apply(val, path[1:], where+"."+s.key)
	}
}

func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

func jsonQuery(_ context.Context, in QueryInput) (pdk.Result, error) {
	dec := json.NewDecoder(strings.NewReader(in.JSON))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return pdk.Result{}, fmt.Errorf("json is not valid JSON: %v", err)
	}
	if dec.More() {
		return pdk.Result{}, fmt.Errorf("json holds more than one JSON value")
	}
	path, err := parsePath(in.Query)
	if err != nil {
		return pdk.Result{}, err
	}
	v, err := apply(doc, path, "the document")
	if err != nil {
		return pdk.Result{}, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return pdk.Result{}, err
	}
	return pdk.Text(string(b)), nil
}
