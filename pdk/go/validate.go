package pdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
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

// validate checks args against s in one pass over the document: the first
// offending property in document order is reported, then the first missing
// required property in schema order. Every language's PDK follows the same
// order and wording (pdk/conformance/SPEC.md), so a tool's errors do not
// depend on the language it was written in.
func validate(args []byte, s *schema) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := checkValue(dec, s, ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err == nil {
		return &ArgumentError{Reason: "more than one JSON value"}
	}
	return nil
}

func checkValue(dec *json.Decoder, s *schema, path string) error {
	if s.typ == "" {
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return &ArgumentError{Field: path, Reason: "not valid JSON"}
		}
		return nil
	}
	tok, err := dec.Token()
	if err != nil {
		return &ArgumentError{Field: path, Reason: "not valid JSON"}
	}
	got := jsonType(tok)
	if got == "null" && s.nullable {
		return nil
	}
	want := s.typ
	if want == "integer" && got == "number" {
		n, _ := tok.(json.Number).Float64()
		if n == math.Trunc(n) && !math.IsInf(n, 0) {
			got = "integer"
		}
	}
	if got != want && !(want == "number" && got == "integer") {
		return &ArgumentError{Field: path, Reason: "want " + want + ", got " + got}
	}
	switch want {
	case "object":
		return checkObject(dec, s, path)
	case "array":
		for i := 0; dec.More(); i++ {
			if err := checkValue(dec, s.items, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ]
		return err
	case "integer", "number":
		n, _ := tok.(json.Number).Float64()
		if s.min != nil && n < *s.min {
			return &ArgumentError{Field: path, Reason: "must be at least " + formatNumber(*s.min)}
		}
		if s.max != nil && n > *s.max {
			return &ArgumentError{Field: path, Reason: "must be at most " + formatNumber(*s.max)}
		}
		if s.enum != nil && !inEnum(s.enum, n) {
			return &ArgumentError{Field: path, Reason: "must be one of " + enumList(s.enum)}
		}
	case "string":
		if s.enum != nil && !inEnum(s.enum, tok.(string)) {
			return &ArgumentError{Field: path, Reason: "must be one of " + enumList(s.enum)}
		}
	}
	return nil
}

func checkObject(dec *json.Decoder, s *schema, path string) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return &ArgumentError{Field: path, Reason: "not valid JSON"}
		}
		key := tok.(string)
		seen[key] = true
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
				return &ArgumentError{Field: joinPath(path, key), Reason: "unknown property (not in the schema)"}
			}
			ps = &schema{}
		}
		if err := checkValue(dec, ps, joinPath(path, key)); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return &ArgumentError{Field: path, Reason: "not valid JSON"}
	}
	for _, r := range s.required {
		if !seen[r] {
			return &ArgumentError{Field: joinPath(path, r), Reason: "required property is missing"}
		}
	}
	return nil
}

func jsonType(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "object"
		}
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
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
