package codemode

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/autoagent-go/autoagent/internal/schemaref"
	"github.com/autoagent-go/autoagent/llm"
)

// Declarations returns the TypeScript-style declarations of the tools a
// program may call: one object, tools, with a method per tool taking its
// arguments (typed from its input schema) and giving a promise of its
// result (typed from its output schema, any without one), descriptions as
// doc comments.
//
//	declare const tools: {
//	  /** Fetch an order by id. */
//	  get_order(args: {
//	    /** The order's number. */
//	    id: number;
//	  }): Promise<{ id: number; refund: number }>;
//	};
//
// The types are a guide for the model, not a check: the tool validates its
// arguments as it would a direct call's. A schema too deep or too large is
// cut short with any.
func Declarations(specs []llm.ToolSpec) string {
	var b strings.Builder
	b.WriteString("declare const tools: {\n")
	for _, sp := range specs {
		d := &declarer{budget: maxTypeNodes}
		if sp.Description != "" {
			writeDoc(&b, "  ", sp.Description)
		}
		var in, out map[string]any
		_ = json.Unmarshal(sp.InputSchema, &in)
		d.root = in
		args := "{}"
		if in != nil {
			args = d.typeOf(in, "  ", 0)
		}
		ret := "any"
		if len(sp.OutputSchema) > 0 && json.Unmarshal(sp.OutputSchema, &out) == nil && out != nil {
			d.root, d.budget = out, maxTypeNodes
			ret = d.typeOf(out, "  ", 0)
		}
		opt := ""
		if !hasRequired(in) {
			opt = "?"
		}
		fmt.Fprintf(&b, "  %s(args%s: %s): Promise<%s>;\n", propertyKey(sp.Name), opt, args, ret)
	}
	b.WriteString("};\n")
	return b.String()
}

// maxTypeDepth and maxTypeNodes bound one schema's type: deeper or larger
// parts are written as any, so no schema makes the declarations huge.
const (
	maxTypeDepth = 6
	maxTypeNodes = 200
)

type declarer struct {
	root   map[string]any
	budget int
}

// typeOf writes the TypeScript type of schema s, indented by ind for the
// lines of an object type.
func (d *declarer) typeOf(s map[string]any, ind string, depth int) string {
	d.budget--
	if s == nil || depth > maxTypeDepth || d.budget < 0 {
		return "any"
	}
	if ref, ok := s["$ref"].(string); ok {
		if t := d.resolve(ref); t != nil {
			return d.typeOf(t, ind, depth+1)
		}
		return "any"
	}
	if c, ok := s["const"]; ok {
		return literal(c)
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		var parts []string
		for _, v := range e {
			parts = append(parts, literal(v))
		}
		return strings.Join(parts, " | ")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return d.union(alts, " | ", ind, depth)
		}
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 {
		return d.union(all, " & ", ind, depth)
	}
	switch t := s["type"].(type) {
	case string:
		return d.typeNamed(t, s, ind, depth)
	case []any:
		var parts []string
		for _, x := range t {
			if name, ok := x.(string); ok {
				parts = append(parts, d.typeNamed(name, s, ind, depth))
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, " | ")
		}
	}
	if _, ok := s["properties"]; ok {
		return d.object(s, ind, depth)
	}
	return "any"
}

func (d *declarer) union(alts []any, sep, ind string, depth int) string {
	var parts []string
	for _, a := range alts {
		m, _ := a.(map[string]any)
		t := d.typeOf(m, ind, depth+1)
		if strings.Contains(t, " | ") || strings.Contains(t, " & ") {
			t = "(" + t + ")"
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, sep)
}

func (d *declarer) typeNamed(name string, s map[string]any, ind string, depth int) string {
	switch name {
	case "string":
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "array":
		item, _ := s["items"].(map[string]any)
		t := d.typeOf(item, ind, depth+1)
		if strings.ContainsAny(t, "|&") {
			t = "(" + t + ")"
		}
		return t + "[]"
	case "object":
		return d.object(s, ind, depth)
	}
	return "any"
}

// object writes an object type: its properties, one a line with their
// doc comments, required ones without "?", then an index signature for
// additionalProperties given a schema.
func (d *declarer) object(s map[string]any, ind string, depth int) string {
	props, _ := s["properties"].(map[string]any)
	extra, _ := s["additionalProperties"].(map[string]any)
	if len(props) == 0 {
		if extra != nil {
			return "{ [key: string]: " + d.typeOf(extra, ind, depth+1) + " }"
		}
		return "{ [key: string]: any }"
	}
	required := map[string]bool{}
	if r, ok := s["required"].([]any); ok {
		for _, x := range r {
			if n, ok := x.(string); ok {
				required[n] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	// Required first, then by name: a stable order for the prompt cache.
	slices.SortFunc(names, func(a, b string) int {
		if required[a] != required[b] {
			if required[a] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	inner := ind + "  "
	var b strings.Builder
	b.WriteString("{\n")
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		if desc, ok := p["description"].(string); ok && desc != "" {
			writeDoc(&b, inner, desc)
		}
		opt := "?"
		if required[n] {
			opt = ""
		}
		fmt.Fprintf(&b, "%s%s%s: %s;\n", inner, propertyKey(n), opt, d.typeOf(p, inner, depth+1))
	}
	if extra != nil {
		fmt.Fprintf(&b, "%s[key: string]: any;\n", inner)
	}
	b.WriteString(ind + "}")
	return b.String()
}

// resolve follows a local reference (#/$defs/NAME, #/definitions/NAME,
// #); nil for any other.
func (d *declarer) resolve(ref string) map[string]any { return schemaref.Resolve(d.root, ref) }

func literal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "any"
	}
	return string(b)
}

func hasRequired(s map[string]any) bool {
	r, ok := s["required"].([]any)
	return ok && len(r) > 0
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// propertyKey is name as a property key: as it is when it is an
// identifier, quoted otherwise ("my-tool").
func propertyKey(name string) string {
	if identRE.MatchString(name) {
		return name
	}
	return strconv.Quote(name)
}

// writeDoc writes text as a doc comment; a "*/" in it cannot end the
// comment early.
func writeDoc(b *strings.Builder, ind, text string) {
	text = strings.ReplaceAll(strings.TrimSpace(text), "*/", "*\u200b/")
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		fmt.Fprintf(b, "%s/** %s */\n", ind, lines[0])
		return
	}
	fmt.Fprintf(b, "%s/**\n", ind)
	for _, l := range lines {
		fmt.Fprintf(b, "%s * %s\n", ind, strings.TrimRight(l, " \t"))
	}
	fmt.Fprintf(b, "%s */\n", ind)
}
