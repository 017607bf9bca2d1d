package pdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ArgumentError reports arguments that do not fit a tool's input schema.
// Its text is what the model reads, so it names the offending field.
type ArgumentError struct {
	// Field is the path of the offending value ("" for the arguments
	// themselves), such as "text", "filter.limit" or "items[2]".
	Field string
	// Reason says what is wrong.
	Reason string
}

func (e *ArgumentError) Error() string {
	if e.Field == "" {
		return "invalid arguments: " + e.Reason
	}
	return "invalid arguments: " + e.Field + ": " + e.Reason
}

// validate checks args, a valid JSON document, against s in one pass: the
// first offending property in document order is reported, then the first
// missing required property in schema order. Every language's PDK follows
// the same order and wording (pdk/conformance/SPEC.md), so a tool's errors
// do not depend on the language it was written in. It scans the bytes
// itself: encoding/json's token stream costs twenty times more, which a
// guest pays on every call.
func validate(args []byte, s *schema) error {
	v := validator{doc: args}
	i, err := v.value(v.ws(0), s, "")
	if err != nil {
		return err
	}
	if v.ws(i) != len(args) {
		return &ArgumentError{Reason: "more than one JSON value"}
	}
	return nil
}

// validator walks a document already known to be valid JSON.
type validator struct {
	doc []byte
}

func (v *validator) ws(i int) int {
	for i < len(v.doc) && (v.doc[i] == ' ' || v.doc[i] == '\t' || v.doc[i] == '\n' || v.doc[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string token at i.
func (v *validator) stringEnd(i int) int {
	for i++; i < len(v.doc); i++ {
		switch v.doc[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(v.doc)
}

// skip returns the index after the value at i.
func (v *validator) skip(i int) int {
	depth := 0
	for {
		switch c := v.doc[i]; c {
		case '"':
			i = v.stringEnd(i)
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
		case ',', ':', ' ', '\t', '\n', '\r':
			i++
		default:
			for i < len(v.doc) && bytes.IndexByte([]byte(",:]} \t\n\r"), v.doc[i]) < 0 {
				i++
			}
		}
		if depth == 0 {
			return i
		}
	}
}

// member returns where the value of the object at i's last member named
// key starts, or -1 when it has none; ok is false when the value at i is
// not an object. A key is compared as decoded.
func (v *validator) member(i int, key string) (at int, ok bool) {
	if v.doc[i] != '{' {
		return -1, false
	}
	at = -1
	for i = v.ws(i + 1); v.doc[i] == '"'; {
		end := v.stringEnd(i)
		tok := v.doc[i+1 : end-1]
		var match bool
		if bytes.IndexByte(tok, '\\') < 0 && utf8.Valid(tok) {
			match = string(tok) == key
		} else {
			match = v.str(i, end) == key
		}
		value := v.ws(v.ws(end) + 1) // past the colon
		if match {
			at = value
		}
		if i = v.ws(v.skip(value)); v.doc[i] == ',' {
			i = v.ws(i + 1)
		}
	}
	return at, true
}

// str decodes the string token doc[i:end].
func (v *validator) str(i, end int) string {
	tok := v.doc[i:end]
	if bytes.IndexByte(tok, '\\') < 0 && utf8.Valid(tok) {
		return string(tok[1 : len(tok)-1])
	}
	var out string
	_ = json.Unmarshal(tok, &out) // valid JSON: cannot fail
	return out
}

func (v *validator) typeAt(i int) string {
	switch v.doc[i] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// value checks the value at i against s and returns the index after it.
func (v *validator) value(i int, s *schema, path string) (int, error) {
	if s.typ == "" {
		return v.skip(i), nil
	}
	got := v.typeAt(i)
	if got == "null" && s.nullable {
		return i + 4, nil
	}
	end := i
	var num float64
	if got == "number" {
		end = v.skip(i)
		num, _ = strconv.ParseFloat(string(v.doc[i:end]), 64)
		if num == math.Trunc(num) && !math.IsInf(num, 0) {
			got = "integer"
		}
	}
	want := s.typ
	if got != want && !(want == "number" && got == "integer") {
		if got == "integer" {
			got = "number"
		}
		return 0, &ArgumentError{Field: path, Reason: "want " + want + ", got " + got}
	}
	switch want {
	case "object":
		return v.object(i, s, path)
	case "array":
		i = v.ws(i + 1)
		for n := 0; v.doc[i] != ']'; n++ {
			next, err := v.value(i, s.items, path+"["+strconv.Itoa(n)+"]")
			if err != nil {
				return 0, err
			}
			if i = v.ws(next); v.doc[i] == ',' {
				i = v.ws(i + 1)
			}
		}
		return i + 1, nil
	case "integer", "number":
		if s.min != nil && num < *s.min {
			return 0, &ArgumentError{Field: path, Reason: "must be at least " + formatNumber(*s.min)}
		}
		if s.max != nil && num > *s.max {
			return 0, &ArgumentError{Field: path, Reason: "must be at most " + formatNumber(*s.max)}
		}
		if s.enum != nil && !inEnum(s.enum, num) {
			return 0, &ArgumentError{Field: path, Reason: "must be one of " + enumList(s.enum)}
		}
		return end, nil
	case "string":
		end = v.stringEnd(i)
		if s.enum != nil && !inEnum(s.enum, v.str(i, end)) {
			return 0, &ArgumentError{Field: path, Reason: "must be one of " + enumList(s.enum)}
		}
		return end, nil
	}
	return v.skip(i), nil // boolean
}

func (v *validator) object(i int, s *schema, path string) (int, error) {
	var seen map[string]bool
	if len(s.required) > 0 {
		seen = make(map[string]bool, len(s.required))
	}
	i = v.ws(i + 1)
	for v.doc[i] != '}' {
		kend := v.stringEnd(i)
		key := v.str(i, kend)
		if seen != nil {
			seen[key] = true
		}
		i = v.ws(v.ws(kend) + 1) // past ':'
		ps := s.values
		if ps == nil {
			for _, p := range s.props {
				if p.name == key {
					ps = p.s
					break
				}
			}
		}
		if ps == nil {
			if s.closed {
				return 0, &ArgumentError{Field: joinPath(path, key), Reason: "unknown property (not in the schema)"}
			}
			ps = &schema{}
		}
		next, err := v.value(i, ps, joinPath(path, key))
		if err != nil {
			return 0, err
		}
		if i = v.ws(next); v.doc[i] == ',' {
			i = v.ws(i + 1)
		}
	}
	for _, r := range s.required {
		if !seen[r] {
			return 0, &ArgumentError{Field: joinPath(path, r), Reason: "required property is missing"}
		}
	}
	return i + 1, nil
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func inEnum(enum []any, v any) bool {
	for _, e := range enum {
		if e == v {
			return true
		}
	}
	return false
}

func enumList(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		if f, ok := e.(float64); ok {
			parts[i] = formatNumber(f)
		} else {
			parts[i] = strconv.Quote(fmt.Sprint(e))
		}
	}
	return strings.Join(parts, ", ")
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// errNotObject is the call-envelope error: the input is not the
// {"params":{"name","arguments"}} object the ABI specifies.
var errNotObject = errors.New(`invalid call: input must be {"params":{"name":"<tool>","arguments":{...}}}`)
