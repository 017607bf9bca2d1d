package jsonschema

import "github.com/autoagent-go/autoagent/internal/jsonvalue"

// Accepts reports whether doc, a JSON document, is one value the schema
// accepts, without decoding it: it walks the document's tokens with the
// host's scanner against the compiled schema. It answers for the common
// shapes of tool schemas (types, properties, required,
// additionalProperties, items, item and length bounds, integer bounds,
// string enums); false means "not known": the caller runs Validate, which
// decides and explains. So Accepts never accepts what Validate refuses,
// and a document it cannot decide costs one more scan.
//
// It stops (false) at anything whose answer needs the decoded value: a
// key or a checked string with escapes or non-ASCII bytes, a checked
// number that is not a plain integer of up to 15 digits, an unknown
// property a schema refuses, a failure of any check (whose message only
// Validate writes), or more than half of Validate's default budget.
func (s *Schema) Accepts(doc []byte) bool {
	if !s.plain {
		return false
	}
	a := accepter{doc: doc, s: jsonvalue.NewScanner(doc), steps: DefaultSteps / 2}
	if !a.value(s.root, 0) {
		return false
	}
	a.s.WS()
	return a.s.Pos() == len(doc)
}

// plainNode reports whether Accepts can decide values against n and
// every schema under it: n uses only the keywords Accepts checks.
func plainNode(n *node, depth int) bool {
	if n == nil {
		return true
	}
	if depth > 64 || n.never || n.hasRef || n.hasConst || n.allOf != nil || n.anyOf != nil || n.oneOf != nil ||
		n.hasNot || n.hasIf || n.hasThen || n.hasElse || n.multipleOf != nil || n.pattern != nil ||
		n.prefixItems != nil || n.hasContains || n.uniqueItems || n.hasUnevaluatedItems ||
		n.patternProperties != nil || n.hasPropertyNames || n.dependentRequired != nil || n.dependentSchemas != nil ||
		n.hasUnevaluatedProperties || n.minProperties > 0 || n.maxProperties >= 0 || len(n.required) > 64 {
		return false
	}
	for _, e := range n.enum {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	for _, p := range n.properties {
		if !plainNode(p, depth+1) {
			return false
		}
	}
	// additionalProperties false is a never node: Accepts stops at an
	// unknown property instead.
	if n.hasAdditionalProperties && (n.additionalProperties == nil || !n.additionalProperties.never) &&
		!plainNode(n.additionalProperties, depth+1) {
		return false
	}
	if n.hasItems && !plainNode(n.items, depth+1) {
		return false
	}
	return true
}

// accepter is one Accepts walk.
type accepter struct {
	doc   []byte
	s     jsonvalue.Scanner
	steps int // at least what Validate would charge, counted down
}

// value reads one value and reports whether n accepts it.
func (a *accepter) value(n *node, depth int) bool {
	if n == nil {
		return a.s.Value()
	}
	if a.steps--; a.steps < 0 || depth > MaxDepth/2 {
		return false
	}
	switch a.s.Peek() {
	case '{':
		return a.is(n, tObject) && n.enum == nil && a.object(n, depth)
	case '[':
		return a.is(n, tArray) && n.enum == nil && a.array(n, depth)
	case '"':
		return a.is(n, tString) && a.str(n)
	case 't':
		return a.is(n, tBoolean) && n.enum == nil && a.s.Lit("true")
	case 'f':
		return a.is(n, tBoolean) && n.enum == nil && a.s.Lit("false")
	case 'n':
		return a.is(n, tNull) && n.enum == nil && a.s.Lit("null")
	}
	return n.enum == nil && a.number(n)
}

func (a *accepter) is(n *node, t types) bool { return n.types == 0 || n.types&t != 0 }

// number reads a number: any number where n allows every number and
// bounds none, else a plain integer checked as Validate checks it.
func (a *accepter) number(n *node) bool {
	start := a.s.Pos()
	if !a.s.Num() {
		return false
	}
	if n.types != 0 && n.types&(tNumber|tInteger) == 0 {
		return false
	}
	onlyInteger := n.types != 0 && n.types&tNumber == 0
	bounded := n.minimum != nil || n.maximum != nil || n.exclusiveMinimum != nil || n.exclusiveMaximum != nil
	if !onlyInteger && !bounded {
		return true
	}
	i, ok := plainInt(a.doc[start:a.s.Pos()])
	if !ok {
		return false
	}
	x := float64(i)
	return (n.minimum == nil || x >= *n.minimum) && (n.maximum == nil || x <= *n.maximum) &&
		(n.exclusiveMinimum == nil || x > *n.exclusiveMinimum) && (n.exclusiveMaximum == nil || x < *n.exclusiveMaximum)
}

// plainInt parses -?[0-9]{1,15}, which a float64 holds exactly.
func plainInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var i int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		i = i*10 + int64(c-'0')
	}
	if neg {
		i = -i
	}
	return i, true
}

// str reads a string; its length and enum are checked only when it is
// verbatim (its bytes are its characters).
func (a *accepter) str(n *node) bool {
	raw, verbatim, ok := a.s.Str()
	if !ok {
		return false
	}
	if n.minLength >= 0 || n.maxLength >= 0 {
		if a.steps -= len(raw)/64 + 1; !verbatim || a.steps < 0 {
			return false
		}
		if len(raw) < n.minLength || n.maxLength >= 0 && len(raw) > n.maxLength {
			return false
		}
	}
	if n.enum != nil {
		if a.steps -= len(n.enum); !verbatim || a.steps < 0 {
			return false
		}
		for _, e := range n.enum {
			if e.(string) == string(raw) {
				return true
			}
		}
		return false
	}
	return true
}

// object reads an object, each property checked against its schema, the
// required ones counted.
func (a *accepter) object(n *node, depth int) bool {
	var present uint64 // bit i: n.required[i] was seen
	ok := a.s.Object(func(key []byte, verbatim bool) bool {
		if a.steps -= 1 + len(n.required); !verbatim || a.steps < 0 {
			return false
		}
		for i, r := range n.required {
			if r == string(key) {
				present |= 1 << i
			}
		}
		if p, known := n.properties[string(key)]; known {
			return a.value(p, depth+1)
		}
		if !n.hasAdditionalProperties {
			return a.s.Value()
		}
		if n.additionalProperties != nil && n.additionalProperties.never {
			return false
		}
		return a.value(n.additionalProperties, depth+1)
	})
	return ok && present == 1<<len(n.required)-1
}

// array reads an array, each item checked against items, and counts them.
func (a *accepter) array(n *node, depth int) bool {
	count := 0
	ok := a.s.Array(func(int) bool {
		count++
		if n.hasItems {
			return a.value(n.items, depth+1)
		}
		return a.s.Value()
	})
	return ok && count >= n.minItems && (n.maxItems < 0 || count <= n.maxItems)
}
