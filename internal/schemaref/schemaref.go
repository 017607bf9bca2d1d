// Package schemaref resolves a JSON Schema's local references ("#",
// "#/$defs/NAME", any JSON pointer into the document) in a schema decoded
// into maps, for the code that reads schemas without validating with them
// (the Gemini adapter's translation, code mode's declarations).
//
//	var root map[string]any
//	_ = json.Unmarshal(schema, &root)
//	def := schemaref.Resolve(root, "#/$defs/Order") // nil when absent
package schemaref

import "strings"

// Resolve returns the subschema ref points to in root, or nil when it is
// not a local reference (remote ones are never fetched), does not lead to
// an object, or leads nowhere. Pointer tokens are unescaped (~1 is "/",
// ~0 is "~").
func Resolve(root map[string]any, ref string) map[string]any {
	if ref == "#" {
		return root
	}
	ptr, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil
	}
	var cur any = root
	for _, tok := range strings.Split(ptr, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	m, _ := cur.(map[string]any)
	return m
}
