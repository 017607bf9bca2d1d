package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	schema "github.com/autoagent-go/autoagent/internal/jsonschema"
)

// A schema's $ref makes it a graph rather than a tree, and a validator
// that follows references with no bound (jsonschema-go did) never ends: {"$ref":"#"} applies
// the root to the same value again and again until the goroutine's stack
// passes Go's limit, a fatal error no recover catches, and forty levels of
// {"allOf":[{"$ref":next},{"$ref":next}]} take 2^40 steps to validate {}.
// Schemas come from modules no person approved, MCP servers and models, so
// checkRefs refuses both before the schema is used: a cycle of references
// and in-place keywords (allOf, anyOf, oneOf, not, if/then/else,
// dependentSchemas), which applies a schema to the very value it is
// validating, and a schema whose in-place expansion counts more than
// MaxSchemaObjects subschemas (what a schema without references may
// hold). A cycle that goes through properties, items or another keyword
// that descends into the value is fine: the value is finite.

// inPlace are the keywords whose subschemas apply to the value itself;
// descending those whose subschemas apply to a part of it.
var (
	inPlaceOne   = []string{"not", "if", "then", "else"}
	inPlaceList  = []string{"allOf", "anyOf", "oneOf"}
	inPlaceMap   = []string{"dependentSchemas", "dependencies"}
	descendOne   = []string{"additionalProperties", "propertyNames", "items", "contains", "additionalItems", "unevaluatedItems", "unevaluatedProperties"}
	descendList  = []string{"prefixItems", "items"}
	descendMap   = []string{"properties", "patternProperties"}
	refKeywords  = []string{"$dynamicRef", "$recursiveRef"}
	schemaBudget = MaxSchemaObjects
)

// checkRefs checks the references of the schema document raw (already
// bounded in size and depth). A document without "$ref" is a tree and
// needs no check.
func checkRefs(raw []byte) error {
	if !bytes.Contains(raw, []byte(`"$ref"`)) && !bytes.Contains(raw, []byte(`"$dynamicRef"`)) && !bytes.Contains(raw, []byte(`"$recursiveRef"`)) {
		return nil
	}
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil // the schema decoder reports it
	}
	g := &refGraph{root: root, cost: map[uintptr]int{}, visiting: map[uintptr]bool{}, seen: map[uintptr]bool{}}
	return g.walk(root, "#")
}

type refGraph struct {
	root     any
	cost     map[uintptr]int  // in-place expansion of a schema, memoised
	visiting map[uintptr]bool // on the current in-place path
	seen     map[uintptr]bool // walked
}

func key(m map[string]any) uintptr { return reflect.ValueOf(m).Pointer() }

// walk checks the schema at s and every schema reachable from it.
func (g *refGraph) walk(s any, at string) error {
	m, ok := s.(map[string]any)
	if !ok || g.seen[key(m)] {
		return nil
	}
	g.seen[key(m)] = true
	if _, ok := m["$id"]; ok && at != "#" {
		return fmt.Errorf("the schema at %s has its own $id: references within a nested resource are not supported", at)
	}
	if n, err := g.expansion(m, at); err != nil {
		return err
	} else if n > schemaBudget {
		return fmt.Errorf("the schema at %s expands, through $ref, to more than %d subschemas", at, schemaBudget)
	}
	for _, c := range children(m, at, true) {
		if err := g.walk(c.s, c.at); err != nil {
			return err
		}
	}
	if target, to, err := g.ref(m, at); err != nil {
		return err
	} else if target != nil {
		return g.walk(target, to)
	}
	return nil
}

// expansion is 1 for m, plus the expansion of each subschema applied in
// place (references followed), plus 1 for each that descends.
func (g *refGraph) expansion(m map[string]any, at string) (int, error) {
	k := key(m)
	if n, ok := g.cost[k]; ok {
		return n, nil
	}
	if g.visiting[k] {
		return 0, fmt.Errorf("the schema at %s applies itself to the value it validates (a cycle of $ref and in-place keywords), so validating never ends", at)
	}
	g.visiting[k] = true
	defer delete(g.visiting, k)
	n := 1 + len(children(m, at, true))
	add := func(s any, where string) error {
		c, ok := s.(map[string]any)
		if !ok {
			return nil
		}
		e, err := g.expansion(c, where)
		n = min(n+e, schemaBudget+1)
		return err
	}
	for _, c := range children(m, at, false) {
		if err := add(c.s, c.at); err != nil {
			return 0, err
		}
	}
	target, to, err := g.ref(m, at)
	if err != nil {
		return 0, err
	}
	if err := add(target, to); err != nil {
		return 0, err
	}
	g.cost[k] = n
	return n, nil
}

type located struct {
	s  any
	at string
}

// children returns m's subschemas that descend (descend true) or apply in
// place.
func children(m map[string]any, at string, descend bool) []located {
	one, list, mp := inPlaceOne, inPlaceList, inPlaceMap
	if descend {
		one, list, mp = descendOne, descendList, descendMap
	}
	var out []located
	for _, k := range one {
		if c, ok := m[k].(map[string]any); ok {
			out = append(out, located{c, at + "/" + k})
		}
	}
	for _, k := range list {
		if l, ok := m[k].([]any); ok {
			for i, c := range l {
				out = append(out, located{c, at + "/" + k + "/" + strconv.Itoa(i)})
			}
		}
	}
	for _, k := range mp {
		if o, ok := m[k].(map[string]any); ok {
			for name, c := range o {
				out = append(out, located{c, at + "/" + k + "/" + name})
			}
		}
	}
	return out
}

// ref resolves m's $ref, when it has one, within the document: only JSON
// pointers into the document itself ("#", "#/$defs/x") are followed, and
// references of other kinds are refused.
func (g *refGraph) ref(m map[string]any, at string) (any, string, error) {
	for _, k := range refKeywords {
		if _, ok := m[k]; ok {
			return nil, "", fmt.Errorf("the schema at %s uses %s, which is not supported", at, k)
		}
	}
	r, ok := m["$ref"]
	if !ok {
		return nil, "", nil
	}
	s, ok := r.(string)
	if !ok || (s != "#" && !strings.HasPrefix(s, "#/")) {
		return nil, "", fmt.Errorf("the schema at %s refers to %v: only references into the document itself (\"#\", \"#/$defs/name\") are supported", at, r)
	}
	cur, _, ok := schema.Lookup(g.root, s)
	if !ok {
		return nil, "", fmt.Errorf("the schema at %s refers to %s, which the document does not hold", at, s)
	}
	return cur, s, nil
}
