package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	schema "github.com/autoagent-go/autoagent/internal/jsonschema"
	"github.com/autoagent-go/autoagent/internal/jsonvalue"
)

// Schema is a compiled JSON Schema that validates tool arguments.
// It is safe for concurrent use.
type Schema struct {
	raw      json.RawMessage
	compiled *schema.Schema
}

// CompileSchema parses and resolves a JSON Schema document. An empty
// document means "any JSON object".
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	// Schemas come from modules, MCP servers and models: resolving one is
	// superlinear in its nesting, so a schema bomb is refused first.
	if len(raw) > MaxSchemaBytes {
		return nil, fmt.Errorf("tool: invalid input schema: %d bytes, more than the %d allowed", len(raw), MaxSchemaBytes)
	}
	if d, n := jsonShape(raw); d > MaxSchemaDepth {
		return nil, fmt.Errorf("tool: invalid input schema: nested %d deep, more than the %d allowed", d, MaxSchemaDepth)
	} else if n > MaxSchemaObjects {
		// Each subschema resolves to a structure of about a kilobyte: a
		// megabyte of empty ones held 357 MiB.
		return nil, fmt.Errorf("tool: invalid input schema: %d objects, more than the %d allowed", n, MaxSchemaObjects)
	}
	if err := checkRefs(raw); err != nil {
		return nil, fmt.Errorf("tool: invalid input schema: %w", err)
	}
	raw, err := normalizeTypes(raw)
	if err != nil {
		return nil, fmt.Errorf("tool: invalid input schema: %w", err)
	}
	doc, ok := jsonvalue.Decode(raw)
	if !ok {
		return nil, errors.New("tool: invalid input schema: not one JSON document")
	}
	c, err := schema.Compile(schema.Normalize(doc))
	if err != nil {
		return nil, fmt.Errorf("tool: invalid input schema: %w", err)
	}
	return &Schema{raw: raw, compiled: c}, nil
}

// Footprint estimates the bytes the compiled schema holds, for a caller
// that bounds the sum over many schemas (a module's describe document).
func (s *Schema) Footprint() int { return s.compiled.Footprint() + len(s.raw) }

// Bounds on a schema CompileSchema accepts: real tools' schemas are a few
// KiB and nest a dozen levels.
const (
	MaxSchemaBytes   = 256 << 10
	MaxSchemaDepth   = 64
	MaxSchemaObjects = 4096
)

// SchemaObjects counts the JSON objects of a schema document (its
// subschemas, roughly), as CompileSchema bounds them; callers that compile
// many schemas bound their sum.
func SchemaObjects(raw json.RawMessage) int {
	_, n := jsonShape(raw)
	return n
}

// jsonShape returns the deepest nesting of objects and arrays in b, and
// its number of objects (b need not be valid: the decoder reports that).
func jsonShape(b []byte) (deepest, objects int) {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if c == '{' {
				objects++
			}
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest, objects
}

// JSON returns the schema document.
func (s *Schema) JSON() json.RawMessage { return s.raw }

// ValidationError reports arguments that do not satisfy a tool's schema.
type ValidationError struct {
	// Field is the JSON path of the offending value ("" for the root),
	// such as "address.city" or "items[2]".
	Field string
	// Reason says what is wrong.
	Reason string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return "invalid arguments: " + e.Reason
	}
	return "invalid arguments: " + e.Field + ": " + e.Reason
}

// Validate checks args, a JSON document, against the schema. Empty args
// are treated as the empty object. The error is a *ValidationError.
//
// Validation has a budget of about four million steps (a subschema
// applied, a value compared, 64 bytes of a string measured, a byte matched
// against 64 instructions of a pattern): arguments past it are refused as
// too costly to check, valid or not, since schemas come from modules, MCP
// servers and models and validation runs outside every sandbox limit.
func (s *Schema) Validate(args json.RawMessage) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	// The common schemas and arguments are checked on the document's
	// tokens, without decoding it; anything else, a failure included, is
	// decided (and explained) on the decoded value.
	if s.compiled.Accepts(args) {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return &ValidationError{Reason: "arguments are not valid JSON: " + err.Error()}
	}
	if dec.More() {
		return &ValidationError{Reason: "arguments hold more than one JSON value"}
	}
	return s.validateValue(schema.Normalize(v))
}

// validateValue checks a decoded value (numbers as float64).
func (s *Schema) validateValue(v any) error {
	err := s.compiled.Validate(v, 0)
	var verr *schema.Error
	var cost *schema.CostError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &verr):
		return &ValidationError{Field: verr.Field, Reason: verr.Reason}
	case errors.As(err, &cost):
		return &ValidationError{Reason: cost.Error() + "; the schema is too costly for this value"}
	}
	return &ValidationError{Reason: err.Error()}
}

// inferSchema derives the JSON Schema of t, applying `enum` tags.
func inferSchema(t reflect.Type) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	if err := applyEnums(t, s); err != nil {
		return nil, err
	}
	return s, nil
}

// applyEnums walks t alongside its schema and sets Enum from `enum` tags.
func applyEnums(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return applyEnums(t.Elem(), s.Items)
	case reflect.Map:
		return applyEnums(t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			if !f.IsExported() || f.Anonymous {
				continue
			}
			name := jsonName(f)
			if name == "-" {
				continue
			}
			ps := s.Properties[name]
			if ps == nil {
				continue
			}
			if tag, ok := f.Tag.Lookup("enum"); ok {
				target, elem := ps, f.Type
				for elem.Kind() == reflect.Pointer {
					elem = elem.Elem()
				}
				if elem.Kind() == reflect.Slice || elem.Kind() == reflect.Array {
					target, elem = ps.Items, elem.Elem()
				}
				vals, err := enumValues(tag, elem)
				if err != nil {
					return fmt.Errorf("field %s.%s: %w", t, f.Name, err)
				}
				target.Enum = vals
			}
			if err := applyEnums(f.Type, ps); err != nil {
				return err
			}
		}
	}
	return nil
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return f.Name
	}
	return name
}

func enumValues(tag string, t reflect.Type) ([]any, error) {
	if strings.TrimSpace(tag) == "" {
		return nil, errors.New("empty enum tag")
	}
	var out []any
	for _, raw := range strings.Split(tag, ",") {
		v := strings.TrimSpace(raw)
		switch t.Kind() {
		case reflect.String:
			out = append(out, v)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("enum value %q is not an integer", v)
			}
			out = append(out, float64(n))
		case reflect.Float32, reflect.Float64:
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("enum value %q is not a number", v)
			}
			out = append(out, n)
		default:
			return nil, fmt.Errorf("enum tag on a %s field (want string or number)", t)
		}
	}
	return out, nil
}

// jsonTypes are the seven type names of JSON Schema.
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// normalizeTypes lower-cases type names written in another case ("OBJECT",
// as some generators and Gemini-style schemas do) and refuses unknown ones
// ("objekt"), which the validator would otherwise accept and then match
// nothing. The document is re-encoded only when a name changed.
func normalizeTypes(raw json.RawMessage) (json.RawMessage, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	changed := false
	var walk func(v any, path string) error
	fix := func(name, path string) (string, error) {
		for _, t := range jsonTypes {
			if strings.EqualFold(name, t) {
				if name != t {
					changed = true
				}
				return t, nil
			}
		}
		return "", fmt.Errorf("%s: unknown type %q (want one of %s)", path, name, strings.Join(jsonTypes, ", "))
	}
	walk = func(v any, path string) error {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				switch k {
				case "const", "default", "examples", "enum":
					continue // values, not schemas
				case "type":
					switch tv := e.(type) {
					case string:
						n, err := fix(tv, path+"/type")
						if err != nil {
							return err
						}
						x[k] = n
						continue
					case []any:
						for i, te := range tv {
							if ts, ok := te.(string); ok {
								n, err := fix(ts, fmt.Sprintf("%s/type/%d", path, i))
								if err != nil {
									return err
								}
								tv[i] = n
							}
						}
						continue
					}
				}
				if err := walk(e, path+"/"+k); err != nil {
					return err
				}
			}
		case []any:
			for i, e := range x {
				if err := walk(e, fmt.Sprintf("%s/%d", path, i)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(doc, ""); err != nil {
		return nil, err
	}
	if !changed {
		return raw, nil
	}
	return json.Marshal(doc)
}

// SchemaFor derives the JSON Schema of T as tool.New derives arguments'
// (jsonschema-go: descriptions from `jsonschema` tags, `enum` tags,
// required fields, additionalProperties false): the schema of a
// structured answer (loop.Agent.Structured), for example.
func SchemaFor[T any]() (json.RawMessage, error) {
	t := reflect.TypeFor[T]()
	s, err := inferSchema(t)
	if err != nil {
		return nil, fmt.Errorf("tool: the schema of %s: %w", t, err)
	}
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() == reflect.Struct {
		s.Type, s.Types = "object", nil
	}
	return json.Marshal(s)
}
