package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// maxJSONDepth bounds the nesting of a JSON value decodeJSON accepts, as
// encoding/json bounds its own: a hostile tool's result cannot make the
// decoder recurse without end.
const maxJSONDepth = 10000

// decodeJSON makes the JavaScript value of the JSON text data, as
// JSON.parse would (without a reviver): objects with Object.prototype
// whose members are own data properties, "__proto__" included (it never
// sets the prototype, and no setter a program put on Object.prototype
// runs); arrays; numbers as float64; strings decoded as encoding/json
// decodes them (invalid UTF-8 and lone surrogates become U+FFFD, as in
// goja's JSON.parse). Invalid JSON, trailing text included, is an error.
//
// It exists for speed: a program's every tool call decodes its result,
// and goja's JSON.parse walks encoding/json's token stream, which
// allocates an interface value per token — the largest part of a call's
// cost once compiled to WebAssembly.
func decodeJSON(vm *goja.Runtime, data []byte) (goja.Value, error) {
	return decodeJSONNames(vm, nil, data)
}

// decodeJSONNames is decodeJSON keeping the member names it makes in
// names (nil keeps none), and taking them from there: a program calls the
// same few tools again and again, whose results have the same members, so
// each name is made once, not once per result.
func decodeJSONNames(vm *goja.Runtime, names memberNames, data []byte) (goja.Value, error) {
	d := jsonDecoder{vm: vm, data: data, names: names}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.i != len(d.data) {
		return nil, d.fail("unexpected text after the value")
	}
	return v, nil
}

type jsonDecoder struct {
	vm    *goja.Runtime
	data  []byte
	i     int
	names memberNames
}

// memberNames are member names decodeJSONNames made, by their text; a
// string is immutable, so one serves every object that has the member.
// It is bounded (maxMemberNames names of at most maxMemberName bytes):
// a tool whose results have ever new members costs what it did without.
type memberNames map[string]string

const (
	maxMemberNames = 512
	maxMemberName  = 64
)

func (d *jsonDecoder) fail(what string) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", d.i, what)
}

// The scanning loops keep the position and the data in locals: compiled
// to WebAssembly, a loop over d.i and d.data reads both from memory and
// writes d.i back at every byte, and the bytes of a tool's result are
// most of what a nested call's scan costs inside the sandbox.

func (d *jsonDecoder) space() {
	i, data := d.i, d.data
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	d.i = i
}

// stringRun returns the index of the first byte from i on that ends a
// string's plain run (a quote, a backslash or a control character), or
// len(data), and whether the run held a byte of 0x80 or more.
func stringRun(data []byte, i int) (int, bool) {
	var high byte
	for ; i < len(data); i++ {
		c := data[i]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		high |= c
	}
	return i, high >= 0x80
}

func (d *jsonDecoder) value(depth int) (goja.Value, error) {
	if d.i >= len(d.data) {
		return nil, d.fail("unexpected end")
	}
	switch c := d.data[d.i]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		return d.vm.ToValue(s), nil
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	default:
		for _, lit := range [...]struct {
			text string
			v    goja.Value
		}{{"true", d.vm.ToValue(true)}, {"false", d.vm.ToValue(false)}, {"null", goja.Null()}} {
			if len(d.data)-d.i >= len(lit.text) && string(d.data[d.i:d.i+len(lit.text)]) == lit.text {
				d.i += len(lit.text)
				return lit.v, nil
			}
		}
		return nil, d.fail(fmt.Sprintf("unexpected %q", c))
	}
}

func (d *jsonDecoder) object(depth int) (goja.Value, error) {
	if depth > maxJSONDepth {
		return nil, d.fail("nested too deeply")
	}
	d.i++ // {
	o := d.vm.NewObject()
	d.space()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return o, nil
	}
	for {
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return nil, d.fail("want a member's name in double quotes")
		}
		key, err := d.name()
		if err != nil {
			return nil, err
		}
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return nil, d.fail("want ':' after a member's name")
		}
		d.i++
		d.space()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		// Defined, not set: an own data property as JSON.parse makes it,
		// whatever the name ("__proto__") or Object.prototype holds.
		if err := o.DefineDataProperty(key, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			return nil, err
		}
		d.space()
		if d.i >= len(d.data) {
			return nil, d.fail("unexpected end in an object")
		}
		switch d.data[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return o, nil
		default:
			return nil, d.fail("want ',' or '}' in an object")
		}
	}
}

func (d *jsonDecoder) array(depth int) (goja.Value, error) {
	if depth > maxJSONDepth {
		return nil, d.fail("nested too deeply")
	}
	d.i++ // [
	var items []any
	d.space()
	if d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
		return d.vm.NewArray(), nil
	}
	for {
		d.space()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		items = append(items, v)
		d.space()
		if d.i >= len(d.data) {
			return nil, d.fail("unexpected end in an array")
		}
		switch d.data[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			return d.vm.NewArray(items...), nil
		default:
			return nil, d.fail("want ',' or ']' in an array")
		}
	}
}

// str reads a string at d.i. One without escapes in valid UTF-8 is taken
// as it is; any other is decoded by encoding/json, so escapes, invalid
// UTF-8 and surrogates mean exactly what they mean to goja's JSON.parse.
func (d *jsonDecoder) str() (string, error) {
	start := d.i
	span, plain, err := d.strSpan()
	if err != nil {
		return "", err
	}
	if plain {
		return string(span[1 : len(span)-1]), nil
	}
	var s string
	if err := json.Unmarshal(span, &s); err != nil {
		d.i = start
		return "", d.fail("invalid string: " + err.Error())
	}
	return s, nil
}

// name reads a member's name at d.i, as str does; a plain name is taken
// from d.names, or made and kept there.
func (d *jsonDecoder) name() (string, error) {
	if d.names == nil {
		return d.str()
	}
	start := d.i
	span, plain, err := d.strSpan()
	if err != nil {
		return "", err
	}
	if !plain {
		d.i = start
		return d.str()
	}
	text := span[1 : len(span)-1]
	if s, ok := d.names[string(text)]; ok {
		return s, nil
	}
	s := string(text)
	if len(d.names) < maxMemberNames && len(s) <= maxMemberName {
		d.names[s] = s
	}
	return s, nil
}

// strSpan moves past the string at d.i and returns its text, quotes
// included, and whether it is plain: no escapes, valid UTF-8.
func (d *jsonDecoder) strSpan() ([]byte, bool, error) {
	start := d.i
	i := start + 1 // past the opening quote
	plain, ascii := true, true
	for {
		j, high := stringRun(d.data, i)
		ascii = ascii && !high
		if j >= len(d.data) {
			d.i = j
			return nil, false, d.fail("unterminated string")
		}
		switch d.data[j] {
		case '"':
			d.i = j + 1
			span := d.data[start:d.i]
			return span, plain && (ascii || utf8.Valid(span)), nil
		case '\\':
			plain = false
			i = j + 2
		default:
			d.i = j
			return nil, false, d.fail("control character in a string")
		}
	}
}

// number reads a number at d.i as a float64, as JSON.parse gives every
// number.
func (d *jsonDecoder) number() (goja.Value, error) {
	text, err := d.numberText()
	if err != nil {
		return nil, err
	}
	if n, ok := smallInt(text); ok {
		return d.vm.ToValue(n), nil
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, d.fail(err.Error())
	}
	// Out of range is ±Inf, as JSON.parse("1e999") is Infinity.
	return d.vm.ToValue(f), nil
}

// smallInt reads text as an integer of at most 15 digits (every one is
// a float64 exactly, and goja makes the same value of the integer as of
// the float), the common case that need not go through ParseFloat; not
// "-0", which is the float -0.
func smallInt(text []byte) (int64, bool) {
	digits := text
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || string(text) == "-0" {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if text[0] == '-' {
		n = -n
	}
	return n, true
}

// numberText moves past the number at d.i in JSON's grammar (no leading
// zeros, no '+', no bare '.') and returns its text.
func (d *jsonDecoder) numberText() ([]byte, error) {
	start := d.i
	if d.data[d.i] == '-' {
		d.i++
	}
	digits := func() int {
		n := 0
		for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.i < len(d.data) && d.data[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		return nil, d.fail("want a digit")
	}
	if d.i < len(d.data) && d.data[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return nil, d.fail("want a digit after '.'")
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, d.fail("want a digit in the exponent")
		}
	}
	return d.data[start:d.i], nil
}

// toolResult is what a program needs of a tool's MCP result: its
// structured content and content as JSON text (nil when absent), whether
// it is an error, and the kind of the run's refusal the host wrote in its
// place (the reply's "refusal", which the host alone writes).
type toolResult struct {
	structured, content []byte
	isError             bool
	refusal             string
}

// scanResult finds the members of a tool's MCP result a program reads,
// without decoding the rest: a result with structured content carries the
// same JSON again as text, and decoding that costs more than the call's
// crossing. The whole text must be one valid JSON object.
func scanResult(raw []byte) (toolResult, error) {
	var r toolResult
	d := jsonDecoder{data: raw}
	d.space()
	if d.i >= len(d.data) || d.data[d.i] != '{' {
		return r, d.fail("the result is not a JSON object")
	}
	d.i++
	d.space()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
	} else {
		for {
			d.space()
			if d.i >= len(d.data) || d.data[d.i] != '"' {
				return r, d.fail("want a member's name in double quotes")
			}
			key, err := d.memberName()
			if err != nil {
				return r, err
			}
			d.space()
			if d.i >= len(d.data) || d.data[d.i] != ':' {
				return r, d.fail("want ':' after a member's name")
			}
			d.i++
			d.space()
			start := d.i
			if err := d.skip(0); err != nil {
				return r, err
			}
			v := d.data[start:d.i]
			switch {
			case string(key) == "structuredContent":
				r.structured = v
			case string(key) == "content":
				r.content = v
			case string(key) == "isError":
				switch string(v) {
				case "true":
					r.isError = true
				case "false", "null":
					r.isError = false
				default:
					var b bool
					return r, fmt.Errorf("isError: %v", json.Unmarshal(v, &b))
				}
			case string(key) == "refusal":
				// Read into a variable of its own: the address of one
				// of r's would move r to the heap on every call.
				var refusal string
				if err := json.Unmarshal(v, &refusal); err != nil && string(v) != "null" {
					return r, fmt.Errorf("refusal: %v", err)
				}
				r.refusal = refusal
			}
			d.space()
			if d.i >= len(d.data) {
				return r, d.fail("unexpected end in an object")
			}
			if d.data[d.i] == '}' {
				d.i++
				break
			}
			if d.data[d.i] != ',' {
				return r, d.fail("want ',' or '}' in an object")
			}
			d.i++
		}
	}
	d.space()
	if d.i != len(d.data) {
		return r, d.fail("unexpected text after the value")
	}
	return r, nil
}

// memberName reads a member's name at d.i, as str does, as bytes: a
// plain name is the text between its quotes, not copied (valid until the
// data changes).
func (d *jsonDecoder) memberName() ([]byte, error) {
	start := d.i
	span, plain, err := d.strSpan()
	if err != nil {
		return nil, err
	}
	if plain {
		return span[1 : len(span)-1], nil
	}
	d.i = start
	s, err := d.str()
	return []byte(s), err
}

// skip moves past the valid JSON value at d.i, decoding nothing but the
// strings it must check.
func (d *jsonDecoder) skip(depth int) error {
	if d.i >= len(d.data) {
		return d.fail("unexpected end")
	}
	switch c := d.data[d.i]; {
	case c == '{' || c == '[':
		if depth >= maxJSONDepth {
			return d.fail("nested too deeply")
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		d.i++
		d.space()
		if d.i < len(d.data) && d.data[d.i] == end {
			d.i++
			return nil
		}
		for {
			d.space()
			if c == '{' {
				if d.i >= len(d.data) || d.data[d.i] != '"' {
					return d.fail("want a member's name in double quotes")
				}
				if err := d.skipString(); err != nil {
					return err
				}
				d.space()
				if d.i >= len(d.data) || d.data[d.i] != ':' {
					return d.fail("want ':' after a member's name")
				}
				d.i++
				d.space()
			}
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			d.space()
			if d.i >= len(d.data) {
				return d.fail("unexpected end")
			}
			if d.data[d.i] == end {
				d.i++
				return nil
			}
			if d.data[d.i] != ',' {
				return d.fail(fmt.Sprintf("want ',' or '%c'", end))
			}
			d.i++
		}
	case c == '"':
		return d.skipString()
	case c == '-' || c >= '0' && c <= '9':
		_, err := d.numberText()
		return err
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if len(d.data)-d.i >= len(lit) && string(d.data[d.i:d.i+len(lit)]) == lit {
				d.i += len(lit)
				return nil
			}
		}
		return d.fail(fmt.Sprintf("unexpected %q", c))
	}
}

// skipString moves past the string at d.i, checking its escapes by
// hand: nothing is decoded (invalid UTF-8 is not an error in JSON as
// encoding/json reads it; it becomes U+FFFD when decoded).
func (d *jsonDecoder) skipString() error {
	d.i++ // "
	for d.i < len(d.data) {
		d.i, _ = stringRun(d.data, d.i)
		if d.i >= len(d.data) {
			break
		}
		switch c := d.data[d.i]; {
		case c == '"':
			d.i++
			return nil
		case c == '\\':
			d.i++
			if d.i >= len(d.data) {
				return d.fail("unterminated string")
			}
			switch d.data[d.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i++
			case 'u':
				d.i++
				for k := 0; k < 4; k++ {
					if d.i >= len(d.data) || !isHex(d.data[d.i]) {
						return d.fail("want four hex digits after \\u")
					}
					d.i++
				}
			default:
				return d.fail(fmt.Sprintf("invalid escape \\%c", d.data[d.i]))
			}
		case c < 0x20:
			return d.fail("control character in a string")
		default:
			d.i++
		}
	}
	return d.fail("unterminated string")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// contentText joins the text of the "text" items of an MCP content array
// (the JSON text content; null or absent is no text).
func contentText(content []byte) (string, error) {
	if len(content) == 0 || string(content) == "null" {
		return "", nil
	}
	d := jsonDecoder{data: content}
	if d.data[0] != '[' {
		return "", d.fail("the content is not an array")
	}
	d.i++
	// The text of the first text item, and the join of them all once
	// there is a second: most results have one, which is then the
	// string decoded, not a copy of it.
	var first string
	var b []byte
	texts := 0
	d.space()
	if d.i < len(d.data) && d.data[d.i] == ']' {
		return "", nil
	}
	for {
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != '{' {
			return "", d.fail("a content item is not an object")
		}
		d.i++
		var isText bool
		var text string
		d.space()
		if d.i < len(d.data) && d.data[d.i] == '}' {
			d.i++
		} else {
			for {
				d.space()
				if d.i >= len(d.data) || d.data[d.i] != '"' {
					return "", d.fail("want a member's name in double quotes")
				}
				key, err := d.memberName()
				if err != nil {
					return "", err
				}
				d.space()
				if d.i >= len(d.data) || d.data[d.i] != ':' {
					return "", d.fail("want ':' after a member's name")
				}
				d.i++
				d.space()
				isType := string(key) == "type"
				if (isType || string(key) == "text") && d.i < len(d.data) && d.data[d.i] == '"' {
					if isType {
						// Compared in place when plain; the last
						// type given counts, as encoding/json reads it.
						start := d.i
						span, plain, err := d.strSpan()
						if err != nil {
							return "", err
						}
						if plain {
							isText = string(span) == `"text"`
						} else {
							d.i = start
							t, err := d.str()
							if err != nil {
								return "", err
							}
							isText = t == "text"
						}
					} else if text, err = d.str(); err != nil {
						return "", err
					}
				} else if err := d.skip(1); err != nil {
					return "", err
				}
				d.space()
				if d.i >= len(d.data) {
					return "", d.fail("unexpected end in a content item")
				}
				if d.data[d.i] == '}' {
					d.i++
					break
				}
				if d.data[d.i] != ',' {
					return "", d.fail("want ',' or '}' in a content item")
				}
				d.i++
			}
		}
		if isText {
			switch texts++; texts {
			case 1:
				first = text
			case 2:
				b = append(append(b, first...), text...)
			default:
				b = append(b, text...)
			}
		}
		d.space()
		if d.i >= len(d.data) {
			return "", d.fail("unexpected end in the content")
		}
		if d.data[d.i] == ']' {
			if texts < 2 {
				return first, nil
			}
			return string(b), nil
		}
		if d.data[d.i] != ',' {
			return "", d.fail("want ',' or ']' in the content")
		}
		d.i++
	}
}
