package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/autoagent-go/autoagent/internal/schemaref"
)

// Gemini's functionDeclarations.parameters (and responseSchema) take an
// OpenAPI 3.0 subset, not JSON Schema: no $ref, no additionalProperties, no
// type unions, string-only enums, items required on arrays. The server
// answers 400 to anything else, so tool schemas (typically generated with
// additionalProperties:false and "type":["null","string"] unions) are
// translated here, keeping every constraint Gemini can express.

// sanitizeSchema translates the JSON Schema raw into a Gemini Schema. It
// returns nil for an empty schema or an object without properties, for
// which Gemini wants the parameters left out.
func sanitizeSchema(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %v", err)
	}
	rootObj, ok := root.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema is a %T, not a JSON object", root)
	}
	s := &sanitizer{root: rootObj}
	out := s.convert(rootObj, 0)
	if isEmptyObject(out) {
		return nil, nil
	}
	return out, nil
}

// maxSchemaDepth bounds recursion through nested schemas and $ref chains; a
// deeper schema is cut off as a plain object rather than looping forever.
const maxSchemaDepth = 32

type sanitizer struct {
	root  map[string]any
	stack []string // $refs being expanded, to cut cycles
}

func (s *sanitizer) convert(v any, depth int) map[string]any {
	node, ok := v.(map[string]any)
	if !ok {
		// true, false or garbage: a schema Gemini cannot express, so
		// no constraint at all.
		return map[string]any{}
	}
	if depth > maxSchemaDepth {
		return map[string]any{"type": "OBJECT"}
	}
	if ref, ok := node["$ref"].(string); ok {
		return s.resolve(ref, node, depth)
	}

	out := map[string]any{}
	for _, k := range []string{"description", "title", "pattern", "minimum", "maximum",
		"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"} {
		if val, ok := node[k]; ok {
			out[k] = val
		}
	}
	if n, _ := node["nullable"].(bool); n {
		out["nullable"] = true
	}

	// allOf members are merged into the node: Gemini has no allOf.
	if all, ok := node["allOf"].([]any); ok {
		merged := map[string]any{}
		for k, val := range node {
			if k != "allOf" {
				merged[k] = val
			}
		}
		for _, m := range all {
			mergeInto(merged, s.deref(m, depth))
		}
		return s.convert(merged, depth+1)
	}

	// Unions: "type": [...], anyOf and oneOf. A "null" member becomes
	// nullable; one remaining member is inlined, several become anyOf.
	var members []any
	switch t := node["type"].(type) {
	case string:
		s.setType(out, t)
	case []any:
		for _, m := range t {
			if name, ok := m.(string); ok {
				members = append(members, map[string]any{"type": name})
			}
		}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := node[key].([]any); ok {
			members = append(members, alts...)
		}
	}
	if len(members) > 0 {
		var alts []map[string]any
		for _, m := range members {
			c := s.convert(m, depth+1)
			if c["type"] == "NULL" {
				out["nullable"] = true
				continue
			}
			alts = append(alts, c)
		}
		// Keywords beside the union (properties, items, enum) apply to
		// every member, so they are added to a single inlined member.
		rest := map[string]any{}
		for k, val := range node {
			if k != "type" && k != "anyOf" && k != "oneOf" {
				rest[k] = val
			}
		}
		switch len(alts) {
		case 0:
		case 1:
			for k, val := range alts[0] {
				if _, set := out[k]; !set {
					out[k] = val
				}
			}
		default:
			list := make([]any, len(alts))
			for i, a := range alts {
				list[i] = a
			}
			out["anyOf"] = list
		}
		if len(alts) == 1 {
			s.addStructure(out, rest, depth)
		}
		return out
	}

	s.addStructure(out, node, depth)
	return out
}

// addStructure adds what depends on the type: enum and format, object
// properties and required, array items.
func (s *sanitizer) addStructure(out, node map[string]any, depth int) {
	if c, ok := node["const"]; ok {
		node = withKey(node, "enum", []any{c})
	}
	if enum, ok := node["enum"].([]any); ok && len(enum) > 0 {
		// A null member of an enum is Gemini's nullable.
		if i := slices.Index(enum, any(nil)); i >= 0 {
			enum = slices.Delete(slices.Clone(enum), i, i+1)
			out["nullable"] = true
		}
		strs := make([]any, 0, len(enum))
		for _, e := range enum {
			if str, ok := e.(string); ok {
				strs = append(strs, str)
			}
		}
		switch {
		case len(enum) == 0:
		case len(strs) == len(enum) && (out["type"] == nil || out["type"] == "STRING"):
			out["type"] = "STRING"
			out["enum"] = strs
		default:
			// Gemini enums are strings only; a numeric enum is kept as
			// guidance in the description instead of being lost.
			vals := make([]string, len(enum))
			for i, e := range enum {
				b, _ := json.Marshal(e)
				vals[i] = string(b)
			}
			note := "One of: " + strings.Join(vals, ", ") + "."
			if d, _ := out["description"].(string); d != "" {
				note = d + " " + note
			}
			out["description"] = note
		}
	}
	if f, ok := node["format"].(string); ok && formatAllowed(out["type"], f) {
		out["format"] = f
	}

	if props, ok := node["properties"].(map[string]any); ok {
		if out["type"] == nil {
			out["type"] = "OBJECT"
		}
		conv := map[string]any{}
		for name, p := range props {
			conv[name] = s.convert(p, depth+1)
		}
		if len(conv) > 0 {
			out["properties"] = conv
		}
		if req, ok := node["required"].([]any); ok {
			var keep []any
			for _, r := range req {
				if name, ok := r.(string); ok && conv[name] != nil {
					keep = append(keep, name)
				}
			}
			if len(keep) > 0 {
				out["required"] = keep
			}
		}
	}

	if out["type"] == "ARRAY" || node["items"] != nil {
		if out["type"] == nil {
			out["type"] = "ARRAY"
		}
		items := node["items"]
		if items == nil {
			if prefix, ok := node["prefixItems"].([]any); ok && len(prefix) > 0 {
				items = prefix[0]
			}
		}
		conv := s.convert(items, depth+1)
		if _, typed := conv["type"]; !typed && conv["anyOf"] == nil {
			// Gemini refuses an array without a typed items schema.
			conv["type"] = "STRING"
		}
		out["items"] = conv
	}
}

func (s *sanitizer) setType(out map[string]any, t string) {
	switch t {
	case "string", "number", "integer", "boolean", "array", "object", "null":
		out["type"] = strings.ToUpper(t)
	}
}

// resolve expands a local $ref ("#/$defs/X", "#/definitions/X", "#"),
// merging sibling keywords (a description beside the $ref) over it.
func (s *sanitizer) resolve(ref string, node map[string]any, depth int) map[string]any {
	if slices.Contains(s.stack, ref) {
		// A recursive type cannot be written out in full; the recursion
		// point accepts any object.
		out := map[string]any{"type": "OBJECT"}
		if d, ok := node["description"].(string); ok {
			out["description"] = d
		}
		return out
	}
	target := s.lookup(ref)
	if target == nil {
		out := map[string]any{}
		if d, ok := node["description"].(string); ok {
			out["description"] = d
		}
		return out
	}
	merged := map[string]any{}
	for k, val := range target {
		merged[k] = val
	}
	for k, val := range node {
		if k != "$ref" {
			merged[k] = val
		}
	}
	s.stack = append(s.stack, ref)
	defer func() { s.stack = s.stack[:len(s.stack)-1] }()
	return s.convert(merged, depth+1)
}

// deref returns the schema object a $ref points at, or v itself.
func (s *sanitizer) deref(v any, depth int) map[string]any {
	node, ok := v.(map[string]any)
	if !ok {
		return map[string]any{}
	}
	if ref, ok := node["$ref"].(string); ok && depth < maxSchemaDepth {
		if t := s.lookup(ref); t != nil && !slices.Contains(s.stack, ref) {
			return t
		}
	}
	return node
}

// lookup follows a local JSON pointer reference from the root.
func (s *sanitizer) lookup(ref string) map[string]any { return schemaref.Resolve(s.root, ref) }

// mergeInto merges an allOf member into dst: properties and required are
// unioned, other keywords are taken when dst lacks them.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		switch k {
		case "properties":
			props, _ := dst[k].(map[string]any)
			if props == nil {
				props = map[string]any{}
			}
			if sp, ok := v.(map[string]any); ok {
				for name, p := range sp {
					props[name] = p
				}
			}
			dst[k] = props
		case "required":
			have, _ := dst[k].([]any)
			if sr, ok := v.([]any); ok {
				dst[k] = append(slices.Clone(have), sr...)
			}
		default:
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
	}
}

// formatAllowed reports the formats Gemini accepts for a type; others are
// refused with a 400, so they are dropped.
func formatAllowed(typ any, f string) bool {
	switch typ {
	case "STRING":
		return f == "enum" || f == "date-time"
	case "INTEGER":
		return f == "int32" || f == "int64"
	case "NUMBER":
		return f == "float" || f == "double"
	}
	return false
}

func isEmptyObject(s map[string]any) bool {
	if len(s) == 0 {
		return true
	}
	if s["type"] != "OBJECT" {
		return false
	}
	props, _ := s["properties"].(map[string]any)
	return len(props) == 0
}

func withKey(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}
