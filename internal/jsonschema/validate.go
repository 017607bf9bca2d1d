package jsonschema

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultSteps is Validate's budget when given 0: about a second of work
// on a slow machine, and room for a megabyte of ordinary data checked
// against an ordinary schema several times over.
const DefaultSteps = 1 << 22

// MaxDepth bounds how deeply schema applications nest (the value's depth
// times the schemas applied in place at each level), so a deep value
// cannot exhaust the stack.
const MaxDepth = 4096

// Error is a value that does not satisfy the schema: one failure, the
// first found.
type Error struct {
	// Field is where in the value, as a path of property names, "[]" for
	// an item and ".*" for any other property ("" for the value itself):
	// "items[].qty", "meta.*".
	Field string
	// Reason says what is wrong, in one bounded line.
	Reason string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

// CostError is a validation that would take more than its budget, or nest
// deeper than MaxDepth: the schema is too costly for the value (or the
// value too deep), whether or not it is valid.
type CostError struct {
	Steps int  // the budget spent
	Deep  bool // MaxDepth, not the budget
}

func (e *CostError) Error() string {
	if e.Deep {
		return fmt.Sprintf("checking the value against its schema nests more than %d levels deep", MaxDepth)
	}
	return fmt.Sprintf("checking the value against its schema takes more than %d steps", e.Steps)
}

// state is one validation's budget.
type state struct {
	steps, budget int
	depth         int
	// quiet is set while a failure's message would be thrown away (an
	// anyOf branch after the first, not, if, contains): failing then
	// costs no formatting.
	quiet bool
}

// abort unwinds a validation past its budget or depth.
type abort struct{ err *CostError }

func (st *state) charge(n int) {
	st.steps -= n
	if st.steps < 0 {
		panic(abort{&CostError{Steps: st.budget}})
	}
}

// Validate checks v (a decoded JSON value, numbers as float64: see
// Normalize) against the schema within a budget of steps (0:
// DefaultSteps). It returns nil, an *Error, or a *CostError.
func (s *Schema) Validate(v any, steps int) (err error) {
	if steps <= 0 {
		steps = DefaultSteps
	}
	st := &state{steps: steps, budget: steps}
	defer func() {
		if r := recover(); r != nil {
			a, ok := r.(abort)
			if !ok {
				panic(r)
			}
			err = a.err
		}
	}()
	if e := st.validate(s.root, v, "", nil); e != nil {
		return e
	}
	return nil
}

// evaluated is what a schema evaluated of the value (for unevaluated*):
// the properties and items some keyword applied to.
type evaluated struct {
	props     map[string]bool
	allProps  bool
	items     int // items [0, items) evaluated
	allItems  bool
	contained map[int]bool
}

func (e *evaluated) merge(o *evaluated) {
	if e == nil || o == nil {
		return
	}
	e.allProps = e.allProps || o.allProps
	e.allItems = e.allItems || o.allItems
	e.items = max(e.items, o.items)
	for k := range o.props {
		e.prop(k)
	}
	for i := range o.contained {
		if e.contained == nil {
			e.contained = map[int]bool{}
		}
		e.contained[i] = true
	}
}

func (e *evaluated) prop(name string) {
	if e.props == nil {
		e.props = map[string]bool{}
	}
	e.props[name] = true
}

// track returns a record for a subschema when its parent keeps one.
func track(parent *evaluated) *evaluated {
	if parent == nil {
		return nil
	}
	return &evaluated{}
}

// maxReason bounds the text of one reason.
const maxReason = 512

// errQuiet is every failure while the state is quiet.
var errQuiet = &Error{Reason: "(not reported)"}

func (st *state) fail(field, format string, args ...any) *Error {
	if st.quiet {
		return errQuiet
	}
	r := fmt.Sprintf(format, args...)
	if len(r) > maxReason {
		r = r[:maxReason] + "…"
	}
	return &Error{Field: field, Reason: r}
}

// check is validate with failures quiet: only whether v matches counts.
func (st *state) check(n *node, v any, field string, ev *evaluated) bool {
	was := st.quiet
	st.quiet = true
	e := st.validate(n, v, field, ev)
	st.quiet = was
	return e == nil
}

// branch checks one alternative of anyOf or oneOf: loudly until one has
// failed (its error, kept in *first, is the one reported), quietly after.
func (st *state) branch(n *node, v any, field string, ev *evaluated, first **Error) bool {
	if *first != nil {
		return st.check(n, v, field, ev)
	}
	e := st.validate(n, v, field, ev)
	*first = e
	return e == nil
}

// validate checks v against n; when ev is not nil it also records there
// what n evaluated (on success).
func (st *state) validate(n *node, v any, field string, ev *evaluated) *Error {
	if n == nil {
		return nil // the schema true
	}
	st.charge(1)
	st.depth++
	defer func() { st.depth-- }()
	if st.depth > MaxDepth {
		panic(abort{&CostError{Deep: true}})
	}
	if n.never {
		return st.fail(field, "no value is allowed here (the schema is false)")
	}
	var local *evaluated
	if ev != nil || n.hasUnevaluatedProperties || n.hasUnevaluatedItems {
		local = &evaluated{}
	}
	if n.hasRef {
		if e := st.validate(n.ref, v, field, local); e != nil {
			return e
		}
	}
	if n.types != 0 {
		if got := typeOf(v); n.types&got == 0 && !(got == tInteger && n.types&tNumber != 0) {
			if len(n.typeNames) == 1 {
				return st.fail(field, "type: %s has type %q, want %q", show(v), typeName(got), n.typeNames[0])
			}
			return st.fail(field, "type: %s has type %q, want one of %q", show(v), typeName(got), strings.Join(n.typeNames, ", "))
		}
	}
	if n.enum != nil {
		ok := false
		for _, e := range n.enum {
			if st.equal(e, v) {
				ok = true
				break
			}
		}
		if !ok {
			return st.fail(field, "enum: %s does not equal any of: %s", show(v), showList(n.enum))
		}
	}
	if n.hasConst && !st.equal(n.constV, v) {
		return st.fail(field, "const: %s does not equal %s", show(v), show(n.constV))
	}

	// Logic: before the keywords that evaluate items and properties, so
	// that unevaluated* sees what these evaluated.
	for _, s := range n.allOf {
		if e := st.validate(s, v, field, local); e != nil {
			return e
		}
	}
	if n.anyOf != nil {
		var first *Error
		matched := 0
		for _, s := range n.anyOf {
			sub := track(local)
			if st.branch(s, v, field, sub, &first) {
				matched++
				local.merge(sub)
				if local == nil {
					break // no annotations to collect: one match is enough
				}
			}
		}
		if matched == 0 {
			return st.fail(field, "anyOf: matches none of the %d alternatives; the first: %s", len(n.anyOf), first.Error())
		}
	}
	if n.oneOf != nil {
		var first *Error
		match := -1
		for i, s := range n.oneOf {
			sub := track(local)
			if !st.branch(s, v, field, sub, &first) {
				continue
			}
			if match >= 0 {
				return st.fail(field, "oneOf: matches alternatives %d and %d, want exactly one", match+1, i+1)
			}
			match = i
			local.merge(sub)
		}
		if match < 0 {
			return st.fail(field, "oneOf: matches none of the %d alternatives; the first: %s", len(n.oneOf), first.Error())
		}
	}
	if n.hasNot {
		if st.check(n.not, v, field, nil) {
			return st.fail(field, "not: %s matches the schema it must not match", show(v))
		}
	}
	if n.hasIf {
		sub := track(local)
		if st.check(n.ifS, v, field, sub) {
			local.merge(sub)
			if n.hasThen {
				if e := st.validate(n.thenS, v, field, local); e != nil {
					return e
				}
			}
		} else if n.hasElse {
			if e := st.validate(n.elseS, v, field, local); e != nil {
				return e
			}
		}
	}

	var e *Error
	switch x := v.(type) {
	case float64:
		e = st.number(n, x, field)
	case string:
		e = st.string(n, x, field)
	case []any:
		e = st.array(n, x, field, local)
	case map[string]any:
		e = st.object(n, x, field, local)
	}
	if e != nil {
		return e
	}
	ev.merge(local)
	return nil
}

func typeOf(v any) types {
	switch x := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBoolean
	case string:
		return tString
	case []any:
		return tArray
	case map[string]any:
		return tObject
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return tInteger
		}
		return tNumber
	}
	return 0
}

func typeName(t types) string {
	for _, n := range typeNames {
		if n.t == t {
			return n.name
		}
	}
	return "unknown"
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func (st *state) number(n *node, x float64, field string) *Error {
	switch {
	case n.minimum != nil && x < *n.minimum:
		return st.fail(field, "minimum: %s is less than %s", num(x), num(*n.minimum))
	case n.maximum != nil && x > *n.maximum:
		return st.fail(field, "maximum: %s is greater than %s", num(x), num(*n.maximum))
	case n.exclusiveMinimum != nil && x <= *n.exclusiveMinimum:
		return st.fail(field, "exclusiveMinimum: %s is less than or equal to %s", num(x), num(*n.exclusiveMinimum))
	case n.exclusiveMaximum != nil && x >= *n.exclusiveMaximum:
		return st.fail(field, "exclusiveMaximum: %s is greater than or equal to %s", num(x), num(*n.exclusiveMaximum))
	case n.multipleOf != nil:
		q := x / *n.multipleOf
		if math.IsInf(q, 0) || math.Abs(q-math.Round(q)) > 1e-9*math.Max(1, math.Abs(q)) {
			return st.fail(field, "multipleOf: %s is not a multiple of %s", num(x), num(*n.multipleOf))
		}
	}
	return nil
}

func (st *state) string(n *node, s, field string) *Error {
	if n.minLength >= 0 || n.maxLength >= 0 {
		st.charge(len(s)/64 + 1)
		c := utf8.RuneCountInString(s)
		if n.minLength >= 0 && c < n.minLength {
			return st.fail(field, "minLength: %s has %d characters, fewer than %d", show(s), c, n.minLength)
		}
		if n.maxLength >= 0 && c > n.maxLength {
			return st.fail(field, "maxLength: %s has %d characters, more than %d", show(s), c, n.maxLength)
		}
	}
	if p := n.pattern; p != nil && !st.match(p, s) {
		return st.fail(field, "pattern: %s does not match %q", show(s), short(p.src))
	}
	return nil
}

// match charges a match's worst case before running it: the string's
// length times the program's size.
func (st *state) match(p *pattern, s string) bool {
	st.charge(1 + len(s)*p.cost/64)
	return p.re.MatchString(s)
}

func (st *state) array(n *node, a []any, field string, local *evaluated) *Error {
	if len(a) < n.minItems {
		return st.fail(field, "minItems: %d items, fewer than %d", len(a), n.minItems)
	}
	if n.maxItems >= 0 && len(a) > n.maxItems {
		return st.fail(field, "maxItems: %d items, more than %d", len(a), n.maxItems)
	}
	item := field + "[]"
	for i, s := range n.prefixItems {
		if i >= len(a) {
			break
		}
		if e := st.validate(s, a[i], item, nil); e != nil {
			return e
		}
	}
	if local != nil {
		local.items = max(local.items, min(len(n.prefixItems), len(a)))
	}
	if n.hasItems && len(a) > len(n.prefixItems) {
		if n.items != nil && n.items.never {
			return st.fail(field, "items: %d items, more than the %d the schema allows", len(a), len(n.prefixItems))
		}
		for _, x := range a[len(n.prefixItems):] {
			if e := st.validate(n.items, x, item, nil); e != nil {
				return e
			}
		}
		if local != nil {
			local.allItems = true
		}
	}
	if n.hasContains {
		found := 0
		for i, x := range a {
			if st.check(n.contains, x, item, nil) {
				found++
				if local != nil {
					if local.contained == nil {
						local.contained = map[int]bool{}
					}
					local.contained[i] = true
				}
			}
		}
		if found < n.minContains {
			return st.fail(field, "contains: %d items match, fewer than %d", found, n.minContains)
		}
		if n.maxContains >= 0 && found > n.maxContains {
			return st.fail(field, "maxContains: %d items match, more than %d", found, n.maxContains)
		}
	}
	if n.uniqueItems && len(a) > 1 {
		seen := make(map[string]int, len(a))
		var b strings.Builder
		for i, x := range a {
			b.Reset()
			st.canon(&b, x)
			if j, dup := seen[b.String()]; dup {
				return st.fail(field, "uniqueItems: items %d and %d are equal", j, i)
			}
			seen[b.String()] = i
		}
	}
	if n.hasUnevaluatedItems && local != nil && !local.allItems {
		for i := local.items; i < len(a); i++ {
			if local.contained[i] {
				continue
			}
			if n.unevaluatedItems != nil && n.unevaluatedItems.never {
				return st.fail(field, "unevaluatedItems: item %d is not allowed by the schema", i)
			}
			if e := st.validate(n.unevaluatedItems, a[i], item, nil); e != nil {
				return e
			}
		}
		local.allItems = true
	}
	return nil
}

func (st *state) object(n *node, o map[string]any, field string, local *evaluated) *Error {
	if len(o) < n.minProperties {
		return st.fail(field, "minProperties: %d properties, fewer than %d", len(o), n.minProperties)
	}
	if n.maxProperties >= 0 && len(o) > n.maxProperties {
		return st.fail(field, "maxProperties: %d properties, more than %d", len(o), n.maxProperties)
	}
	names := make([]string, 0, len(o))
	for k := range o {
		names = append(names, k)
	}
	slices.Sort(names)
	st.charge(len(names))
	var unknown []string
	for _, k := range names {
		x := o[k]
		known := false
		if s, ok := n.properties[k]; ok {
			known = true
			if e := st.validate(s, x, join(field, k), nil); e != nil {
				return e
			}
		}
		for _, pp := range n.patternProperties {
			if st.match(pp.p, k) {
				known = true
				if e := st.validate(pp.s, x, field+".*", nil); e != nil {
					return e
				}
			}
		}
		if known {
			if local != nil {
				local.prop(k)
			}
			continue
		}
		if n.hasAdditionalProperties {
			if n.additionalProperties != nil && n.additionalProperties.never {
				unknown = append(unknown, k)
				continue
			}
			if e := st.validate(n.additionalProperties, x, field+".*", nil); e != nil {
				return e
			}
			if local != nil {
				local.prop(k)
			}
		}
	}
	for _, r := range n.required {
		if _, ok := o[r]; !ok {
			return st.fail(join(field, r), "required property is missing")
		}
	}
	if len(unknown) > 0 {
		return st.fail(field, "unknown properties %s (not in the schema)", quoted(unknown))
	}
	if n.hasPropertyNames {
		for _, k := range names {
			if e := st.validate(n.propertyNames, k, field, nil); e != nil {
				return st.fail(field, "propertyNames: %q: %s", short(k), e.Reason)
			}
		}
	}
	for k, deps := range n.dependentRequired {
		if _, ok := o[k]; !ok {
			continue
		}
		for _, d := range deps {
			if _, ok := o[d]; !ok {
				return st.fail(join(field, d), "required property is missing (%q is present, which needs it)", short(k))
			}
		}
	}
	for k, s := range n.dependentSchemas {
		if _, ok := o[k]; ok {
			if e := st.validate(s, o, field, local); e != nil {
				return e
			}
		}
	}
	if n.hasUnevaluatedProperties && local != nil && !local.allProps {
		var extra []string
		for _, k := range names {
			if local.props[k] {
				continue
			}
			if n.unevaluatedProperties != nil && n.unevaluatedProperties.never {
				extra = append(extra, k)
				continue
			}
			if e := st.validate(n.unevaluatedProperties, o[k], field+".*", nil); e != nil {
				return e
			}
		}
		if len(extra) > 0 {
			return st.fail(field, "unknown properties %s (not in the schema)", quoted(extra))
		}
		local.allProps = true
	}
	return nil
}

func join(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

// equal compares two JSON values, charging each node it visits.
func (st *state) equal(a, b any) bool {
	st.charge(1)
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !st.equal(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !st.equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		st.charge(len(x) / 64)
		return ok && x == y
	}
	return a == b
}

// canon writes a value in a canonical form (object members sorted), for
// uniqueItems, charging each node.
func (st *state) canon(b *strings.Builder, v any) {
	st.charge(1)
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for _, k := range keys {
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			st.canon(b, x[k])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for _, e := range x {
			st.canon(b, e)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case string:
		st.charge(len(x) / 64)
		b.WriteString(strconv.Quote(x))
	case float64:
		b.WriteString(num(x))
	default:
		fmt.Fprint(b, x)
	}
}

// maxShown bounds a value as a message shows it.
const maxShown = 64

// show writes a value short: strings as they are (cut), numbers as JSON
// writes them, arrays and objects by their size.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return short(x)
	case float64:
		return num(x)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		return fmt.Sprintf("an array of %d items", len(x))
	case map[string]any:
		return fmt.Sprintf("an object of %d properties", len(x))
	}
	return "a value"
}

func short(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func showList(l []any) string {
	parts := make([]string, 0, min(len(l), 10)+1)
	for i, e := range l {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(l)-10))
			break
		}
		parts = append(parts, show(e))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func quoted(names []string) string {
	parts := make([]string, 0, min(len(names), 10)+1)
	for i, n := range names {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(names)-10))
			break
		}
		parts = append(parts, strconv.Quote(short(n)))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
