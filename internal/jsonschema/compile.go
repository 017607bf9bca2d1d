// Package jsonschema validates JSON values against JSON Schema (2020-12,
// and draft-07's forms of items, additionalItems and dependencies) with
// bounded work: schemas come from modules no person approved, MCP servers
// and models, and a value to check from a guest or a model, so every
// validation has a step budget, every error is one short message, and
// patterns are bounded before they compile.
//
//	s, err := jsonschema.Compile(doc) // doc: the schema, decoded with numbers as float64
//	if err != nil { … }
//	err = s.Validate(value, 0) // 0: DefaultSteps
//	var verr *jsonschema.Error // Field "items[].qty", Reason `type: two has type "string", want "integer"`
//
// The caller bounds the document first (tool.CompileSchema: size, depth,
// subschemas, and references: no cycle applies a schema to the value it
// validates, and no expansion is exponential in place); Compile assumes
// that and bounds what it adds itself: each pattern's length and compiled
// size, and the schema's footprint ([Schema.Footprint]).
//
// Why not the jsonschema-go validator the project used before: it has no
// bound on its work (an anyOf of failing branches nested through $ref is
// exponential in the value's depth), it writes the value being checked
// into the error of every failed branch and joins them all (a 1 MiB
// value and 4 000 branches took 6 GB and the process), and it compiles
// every pattern however large. See RATIONALE.md "Why our own JSON Schema
// validator?".
package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
)

// Bounds of a pattern ("pattern", "patternProperties") Compile accepts.
const (
	// MaxPatternBytes bounds a pattern's text.
	MaxPatternBytes = 4096
	// MaxPatternInsts bounds its compiled program (regexp/syntax
	// instructions): matching costs up to this per byte of the string.
	MaxPatternInsts = 4096
	// MaxPatternRunes bounds the character ranges of all of a schema's
	// patterns together (\pL alone is some 1 300 ranges): what they hold
	// after compiling.
	MaxPatternRunes = 1 << 16
)

// Schema is a compiled schema. It is safe for concurrent use.
type Schema struct {
	root      *node
	footprint int
	plain     bool // Accepts can decide (plainNode)
}

// Footprint estimates the bytes the compiled schema holds, for a caller
// that bounds the sum over many schemas.
func (s *Schema) Footprint() int { return s.footprint }

// types is a set of JSON types.
type types uint8

const (
	tNull types = 1 << iota
	tBoolean
	tObject
	tArray
	tNumber
	tInteger
	tString
)

var typeNames = []struct {
	t    types
	name string
}{{tArray, "array"}, {tBoolean, "boolean"}, {tInteger, "integer"}, {tNull, "null"}, {tNumber, "number"}, {tObject, "object"}, {tString, "string"}}

// node is one compiled subschema. A nil *node is the schema true.
type node struct {
	path  string // JSON pointer of the schema in the document, for errors
	never bool   // the schema false

	types     types
	typeNames []string // as written, for messages
	enum      []any
	hasConst  bool
	constV    any

	minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf *float64

	minLength, maxLength int // -1: none
	pattern              *pattern

	prefixItems                     []*node
	items                           *node
	hasItems                        bool
	minItems, maxItems              int
	uniqueItems                     bool
	contains                        *node
	hasContains                     bool
	minContains, maxContains        int
	unevaluatedItems                *node
	hasUnevaluatedItems             bool
	properties                      map[string]*node
	patternProperties               []patternProperty
	additionalProperties            *node
	hasAdditionalProperties         bool
	required                        []string
	minProperties, maxProperties    int
	propertyNames                   *node
	hasPropertyNames                bool
	dependentRequired               map[string][]string
	dependentSchemas                map[string]*node
	unevaluatedProperties           *node
	hasUnevaluatedProperties        bool
	allOf, anyOf, oneOf             []*node
	not, ifS, thenS, elseS          *node
	hasNot, hasIf, hasThen, hasElse bool
	ref                             *node
	refTo                           string
	hasRef                          bool
}

type pattern struct {
	src  string
	re   *regexp.Regexp
	cost int // instructions: the work per byte of a match
}

type patternProperty struct {
	p *pattern
	s *node
}

// compiler builds the nodes of one document.
type compiler struct {
	root  any
	nodes map[string]*node // by JSON pointer, so $ref and recursion share them
	refs  []*node
	runes int
	size  int
}

// Compile compiles the schema doc (a decoded JSON document: maps, slices,
// strings, float64 or json.Number, bools, nil).
func Compile(doc any) (*Schema, error) {
	c := &compiler{root: doc, nodes: map[string]*node{}}
	root, err := c.compile(doc, "#")
	if err != nil {
		return nil, err
	}
	// References resolve once every node reachable by keywords exists; a
	// reference to a place no keyword reaches (inside $defs of an unknown
	// keyword, say) compiles it there.
	for i := 0; i < len(c.refs); i++ {
		n := c.refs[i]
		target, err := c.resolve(n.refTo, n.path)
		if err != nil {
			return nil, err
		}
		n.ref = target
	}
	return &Schema{root: root, footprint: c.size, plain: plainNode(root, 0)}, nil
}

func (c *compiler) resolve(ref, at string) (*node, error) {
	if ref != "#" && !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("%s: $ref %q: only references into the document itself are supported", at, ref)
	}
	cur, canonical, ok := Lookup(c.root, ref)
	if !ok {
		return nil, fmt.Errorf("%s: $ref %q: the document does not hold it", at, ref)
	}
	if n, ok := c.nodes[canonical]; ok {
		return n, nil
	}
	return c.compile(cur, canonical)
}

// Lookup follows a reference into the document root ("#", or a JSON
// pointer "#/$defs/name", its tokens percent- and ~-escaped) and returns
// the value there and the pointer in a canonical form; ok is false when
// the document does not hold it.
func Lookup(root any, ref string) (value any, canonical string, ok bool) {
	canonical, cur := "#", root
	if ref == "#" {
		return cur, canonical, true
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, "", false
	}
	for _, tok := range strings.Split(ref[2:], "/") {
		if t, err := url.PathUnescape(tok); err == nil {
			tok = t
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		canonical += "/" + escapeToken(tok)
		switch v := cur.(type) {
		case map[string]any:
			cur = v[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				cur = nil
			} else {
				cur = v[i]
			}
		default:
			cur = nil
		}
		if cur == nil {
			return nil, "", false
		}
	}
	return cur, canonical, true
}

func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// nodeSize is about what a node and its maps hold.
const nodeSize = 512

func (c *compiler) compile(s any, at string) (*node, error) {
	if n, ok := c.nodes[at]; ok {
		return n, nil
	}
	switch v := s.(type) {
	case bool:
		if v {
			return nil, nil
		}
		n := &node{path: at, never: true}
		c.nodes[at] = n
		return n, nil
	case map[string]any:
		n := &node{path: at, minLength: -1, maxLength: -1, maxItems: -1, maxContains: -1, minContains: 1, maxProperties: -1}
		c.nodes[at] = n
		c.size += nodeSize
		if err := c.fill(n, v, at); err != nil {
			return nil, err
		}
		return n, nil
	default:
		return nil, fmt.Errorf("%s: a schema must be an object or a boolean, not %s", at, kind(s))
	}
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a number"
}

// number reads a numeric keyword.
func number(v any, at string) (*float64, error) {
	switch x := v.(type) {
	case float64:
		return &x, nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("%s: %v is not a number", at, x)
		}
		return &f, nil
	}
	return nil, fmt.Errorf("%s: want a number, not %s", at, kind(v))
}

// count reads a non-negative integer keyword.
func count(v any, at string) (int, error) {
	f, err := number(v, at)
	if err != nil {
		return 0, err
	}
	if *f < 0 || *f != math.Trunc(*f) {
		return 0, fmt.Errorf("%s: want a non-negative integer, not %v", at, *f)
	}
	return int(min(*f, math.MaxInt32)), nil
}

// Normalize turns the json.Numbers of a decoded value into float64, as
// Validate expects instances and enum and const values.
func Normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return float64(i)
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = Normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = Normalize(e)
		}
	}
	return v
}

func (c *compiler) fill(n *node, m map[string]any, at string) error {
	sub := func(key string) (*node, error) { return c.compile(m[key], at+"/"+escapeToken(key)) }
	list := func(key string) ([]*node, error) {
		l, ok := m[key].([]any)
		if !ok {
			return nil, fmt.Errorf("%s/%s: want an array of schemas", at, key)
		}
		if len(l) == 0 {
			return nil, fmt.Errorf("%s/%s: an empty array", at, key)
		}
		out := make([]*node, len(l))
		for i, e := range l {
			s, err := c.compile(e, at+"/"+key+"/"+strconv.Itoa(i))
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	}
	schemaMap := func(key string) (map[string]*node, error) {
		o, ok := m[key].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s/%s: want an object of schemas", at, key)
		}
		out := make(map[string]*node, len(o))
		for name, e := range o {
			s, err := c.compile(e, at+"/"+key+"/"+escapeToken(name))
			if err != nil {
				return nil, err
			}
			out[name] = s
		}
		return out, nil
	}
	var err error
	// The keywords are read in a fixed order, so the first error a schema
	// with several is the same every time.
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m[k]
		where := at + "/" + escapeToken(k)
		switch k {
		case "type":
			switch t := v.(type) {
			case string:
				err = n.addType(t, where)
			case []any:
				for _, e := range t {
					s, ok := e.(string)
					if !ok {
						return fmt.Errorf("%s: want type names, not %s", where, kind(e))
					}
					if err = n.addType(s, where); err != nil {
						break
					}
				}
			default:
				err = fmt.Errorf("%s: want a type name or a list of them", where)
			}
		case "enum":
			l, ok := v.([]any)
			if !ok {
				return fmt.Errorf("%s: want an array", where)
			}
			n.enum = Normalize(l).([]any)
			if n.enum == nil {
				n.enum = []any{}
			}
		case "const":
			n.hasConst, n.constV = true, Normalize(v)
		case "minimum":
			n.minimum, err = number(v, where)
		case "maximum":
			n.maximum, err = number(v, where)
		case "exclusiveMinimum":
			n.exclusiveMinimum, err = number(v, where)
		case "exclusiveMaximum":
			n.exclusiveMaximum, err = number(v, where)
		case "multipleOf":
			if n.multipleOf, err = number(v, where); err == nil && *n.multipleOf <= 0 {
				err = fmt.Errorf("%s: want a number greater than 0", where)
			}
		case "minLength":
			n.minLength, err = count(v, where)
		case "maxLength":
			n.maxLength, err = count(v, where)
		case "pattern":
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("%s: want a string", where)
			}
			n.pattern, err = c.pattern(s, where)
		case "prefixItems":
			n.prefixItems, err = list(k)
		case "items":
			if _, tuple := v.([]any); tuple { // draft-07's tuple form
				n.prefixItems, err = list(k)
			} else {
				n.hasItems = true
				n.items, err = sub(k)
			}
		case "additionalItems": // draft-07: what follows a tuple
			if _, tuple := m["items"].([]any); tuple {
				n.hasItems = true
				n.items, err = sub(k)
			}
		case "minItems":
			n.minItems, err = count(v, where)
		case "maxItems":
			n.maxItems, err = count(v, where)
		case "uniqueItems":
			b, ok := v.(bool)
			if !ok {
				return fmt.Errorf("%s: want a boolean", where)
			}
			n.uniqueItems = b
		case "contains":
			n.hasContains = true
			n.contains, err = sub(k)
		case "minContains":
			n.minContains, err = count(v, where)
		case "maxContains":
			n.maxContains, err = count(v, where)
		case "unevaluatedItems":
			n.hasUnevaluatedItems = true
			n.unevaluatedItems, err = sub(k)
		case "properties":
			n.properties, err = schemaMap(k)
		case "patternProperties":
			o, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: want an object of schemas", where)
			}
			names := make([]string, 0, len(o))
			for name := range o {
				names = append(names, name)
			}
			slices.Sort(names)
			for _, name := range names {
				p, err := c.pattern(name, where+"/"+escapeToken(name))
				if err != nil {
					return err
				}
				s, err := c.compile(o[name], where+"/"+escapeToken(name))
				if err != nil {
					return err
				}
				n.patternProperties = append(n.patternProperties, patternProperty{p, s})
			}
		case "additionalProperties":
			n.hasAdditionalProperties = true
			n.additionalProperties, err = sub(k)
		case "required":
			n.required, err = stringList(v, where)
		case "minProperties":
			n.minProperties, err = count(v, where)
		case "maxProperties":
			n.maxProperties, err = count(v, where)
		case "propertyNames":
			n.hasPropertyNames = true
			n.propertyNames, err = sub(k)
		case "dependentRequired":
			o, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: want an object of arrays", where)
			}
			n.dependentRequired = map[string][]string{}
			for name, e := range o {
				if n.dependentRequired[name], err = stringList(e, where+"/"+escapeToken(name)); err != nil {
					return err
				}
			}
		case "dependentSchemas":
			n.dependentSchemas, err = schemaMap(k)
		case "dependencies": // draft-07: either form, by property
			o, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: want an object", where)
			}
			for name, e := range o {
				w := where + "/" + escapeToken(name)
				if l, ok := e.([]any); ok {
					if n.dependentRequired == nil {
						n.dependentRequired = map[string][]string{}
					}
					if n.dependentRequired[name], err = stringList(l, w); err != nil {
						return err
					}
					continue
				}
				s, err := c.compile(e, w)
				if err != nil {
					return err
				}
				if n.dependentSchemas == nil {
					n.dependentSchemas = map[string]*node{}
				}
				n.dependentSchemas[name] = s
			}
		case "unevaluatedProperties":
			n.hasUnevaluatedProperties = true
			n.unevaluatedProperties, err = sub(k)
		case "allOf":
			n.allOf, err = list(k)
		case "anyOf":
			n.anyOf, err = list(k)
		case "oneOf":
			n.oneOf, err = list(k)
		case "not":
			n.hasNot = true
			n.not, err = sub(k)
		case "if":
			n.hasIf = true
			n.ifS, err = sub(k)
		case "then":
			n.hasThen = true
			n.thenS, err = sub(k)
		case "else":
			n.hasElse = true
			n.elseS, err = sub(k)
		case "$ref":
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("%s: want a string", where)
			}
			n.hasRef, n.refTo = true, s
			c.refs = append(c.refs, n)
		case "$dynamicRef", "$recursiveRef":
			return fmt.Errorf("%s: %s is not supported", where, k)
		case "$defs", "definitions":
			// Compiled where a reference leads.
			if _, ok := v.(map[string]any); !ok {
				return fmt.Errorf("%s: want an object of schemas", where)
			}
		}
		// Everything else (title, description, default, examples, format,
		// $schema, $id, $comment, readOnly, …) is an annotation.
		if err != nil {
			return err
		}
	}
	return nil
}

func stringList(v any, at string) ([]string, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an array of strings", at)
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want an array of strings", at)
		}
		out[i] = s
	}
	return out, nil
}

func (n *node) addType(name, at string) error {
	for _, t := range typeNames {
		if t.name == name {
			n.types |= t.t
			n.typeNames = append(n.typeNames, name)
			return nil
		}
	}
	return fmt.Errorf("%s: unknown type %q", at, name)
}

// pattern bounds and compiles a pattern. Go's regexp matches in time
// linear in the string times the program, so bounding the program bounds
// a match; its parse and compilation are linear in the text.
func (c *compiler) pattern(src, at string) (*pattern, error) {
	if len(src) > MaxPatternBytes {
		return nil, fmt.Errorf("%s: a pattern of %d bytes, more than the %d allowed", at, len(src), MaxPatternBytes)
	}
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%s: pattern %q: %v", at, short(src), err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, fmt.Errorf("%s: pattern %q: %v", at, short(src), err)
	}
	if len(prog.Inst) > MaxPatternInsts {
		return nil, fmt.Errorf("%s: pattern %q compiles to %d instructions, more than the %d allowed", at, short(src), len(prog.Inst), MaxPatternInsts)
	}
	runes := 0
	for _, in := range prog.Inst {
		runes += len(in.Rune)
	}
	c.runes += runes
	if c.runes > MaxPatternRunes {
		return nil, fmt.Errorf("%s: the schema's patterns hold more than %d character ranges", at, MaxPatternRunes)
	}
	compiled, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("%s: pattern %q: %v", at, short(src), err)
	}
	// regexp keeps the program once or twice (onepass), each instruction
	// a few words and its runes.
	c.size += 2 * (64*len(prog.Inst) + 4*runes)
	return &pattern{src: src, re: compiled, cost: len(prog.Inst)}, nil
}
