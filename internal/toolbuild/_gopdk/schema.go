package pdk

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// schema is a JSON Schema derived from a Go type, kept as a tree so that
// arguments can be validated against it and so that it encodes with a
// stable key order (the describe document is byte-for-byte reproducible).
type schema struct {
	// typ is the JSON type; "" accepts any value (an interface field).
	typ         string
	nullable    bool
	description string
	enum        []any // strings or float64s
	min, max    *float64
	items       *schema    // arrays
	props       []property // objects from structs, in field order
	closed      bool       // objects from structs refuse unknown properties
	values      *schema    // objects from maps: the schema of each value
	required    []string   // in field order
}

type property struct {
	name string
	s    *schema
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// deriveSchema returns the schema of t, following the host's tool.New: json
// tags name properties, fields without omitempty or omitzero are required,
// the `jsonschema` tag is the description and the `enum` tag lists allowed
// values.
func deriveSchema(t reflect.Type) (*schema, error) {
	return derive(t, map[reflect.Type]bool{})
}

func derive(t reflect.Type, seen map[reflect.Type]bool) (*schema, error) {
	s := &schema{}
	for t.Kind() == reflect.Pointer {
		s.nullable = true
		t = t.Elem()
	}
	if t.Name() != "" {
		if seen[t] {
			return nil, fmt.Errorf("type %s refers to itself (a recursive type has no finite schema)", t)
		}
		seen[t] = true
		defer delete(seen, t)
	}
	if t.Kind() != reflect.String && reflect.PointerTo(t).Implements(textUnmarshaler) {
		s.typ = "string" // time.Time, net.IP and friends arrive as text
		return s, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		s.typ = "boolean"
	case reflect.String:
		s.typ = "string"
	case reflect.Int, reflect.Int64:
		s.typ = "integer"
	case reflect.Int8:
		s.typ, s.min, s.max = "integer", ptr(math.MinInt8), ptr(math.MaxInt8)
	case reflect.Int16:
		s.typ, s.min, s.max = "integer", ptr(math.MinInt16), ptr(math.MaxInt16)
	case reflect.Int32:
		s.typ, s.min, s.max = "integer", ptr(math.MinInt32), ptr(math.MaxInt32)
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		s.typ, s.min = "integer", ptr(0)
	case reflect.Uint8:
		s.typ, s.min, s.max = "integer", ptr(0), ptr(math.MaxUint8)
	case reflect.Uint16:
		s.typ, s.min, s.max = "integer", ptr(0), ptr(math.MaxUint16)
	case reflect.Uint32:
		s.typ, s.min, s.max = "integer", ptr(0), ptr(math.MaxUint32)
	case reflect.Float32, reflect.Float64:
		s.typ = "number"
	case reflect.Interface:
		// any JSON value
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			s.typ = "string" // []byte is base64 text in encoding/json
			return s, nil
		}
		s.typ = "array"
		s.nullable = s.nullable || t.Kind() == reflect.Slice
		items, err := derive(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		s.items = items
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map key type %s is not a string", t.Key())
		}
		s.typ = "object"
		values, err := derive(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		s.values = values
	case reflect.Struct:
		s.typ, s.closed = "object", true
		for _, f := range reflect.VisibleFields(t) {
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				continue // its fields are promoted and visited next
			}
			name, optional, skip := jsonField(f)
			if skip {
				continue
			}
			ps, err := derive(f.Type, seen)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			ps.description = f.Tag.Get("jsonschema")
			if tag, ok := f.Tag.Lookup("enum"); ok {
				target := ps
				if ps.typ == "array" {
					target = ps.items
				}
				if target.enum, err = enumValues(tag, target.typ); err != nil {
					return nil, fmt.Errorf("field %s: %w", f.Name, err)
				}
			}
			s.props = append(s.props, property{name, ps})
			if !optional {
				s.required = append(s.required, name)
			}
		}
	default:
		return nil, fmt.Errorf("%s values cannot be sent as JSON", t)
	}
	return s, nil
}

func ptr(f float64) *float64 { return &f }

// jsonField returns the JSON name of f as encoding/json sees it.
func jsonField(f reflect.StructField) (name string, optional, skip bool) {
	if !f.IsExported() {
		return "", false, true
	}
	tag, hasTag := f.Tag.Lookup("json")
	name, opts, found := strings.Cut(tag, ",")
	if hasTag && name == "-" && !found {
		return "", false, true
	}
	if name == "" {
		name = f.Name
	}
	for _, o := range strings.Split(opts, ",") {
		if o == "omitempty" || o == "omitzero" {
			optional = true
		}
	}
	return name, optional, false
}

func enumValues(tag, typ string) ([]any, error) {
	if strings.TrimSpace(tag) == "" {
		return nil, errors.New("empty enum tag")
	}
	var out []any
	for _, raw := range strings.Split(tag, ",") {
		v := strings.TrimSpace(raw)
		switch typ {
		case "string":
			out = append(out, v)
		case "integer", "number":
			n, err := strconv.ParseFloat(v, 64)
			if err != nil || (typ == "integer" && n != math.Trunc(n)) {
				return nil, fmt.Errorf("enum value %q is not a %s", v, typ)
			}
			out = append(out, n)
		default:
			return nil, fmt.Errorf("enum tag on a %s field (want string or number)", typ)
		}
	}
	return out, nil
}

// MarshalJSON writes the schema with a fixed key order.
func (s *schema) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	field := func(key string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := marshal(key)
		b.Write(k)
		b.WriteByte(':')
		e, err := marshal(v)
		if err != nil {
			return err
		}
		b.Write(e)
		return nil
	}
	var err error
	add := func(key string, v any) {
		if err == nil {
			err = field(key, v)
		}
	}
	switch {
	case s.typ == "":
	case s.nullable:
		add("type", []string{"null", s.typ})
	default:
		add("type", s.typ)
	}
	if s.description != "" {
		add("description", s.description)
	}
	if s.enum != nil {
		add("enum", s.enum)
	}
	if s.min != nil {
		add("minimum", *s.min)
	}
	if s.max != nil {
		add("maximum", *s.max)
	}
	if s.items != nil {
		add("items", s.items)
	}
	if s.typ == "object" && s.values == nil {
		var pb bytes.Buffer
		pb.WriteByte('{')
		for i, p := range s.props {
			if i > 0 {
				pb.WriteByte(',')
			}
			k, _ := marshal(p.name)
			pb.Write(k)
			pb.WriteByte(':')
			v, perr := marshal(p.s)
			if perr != nil {
				return nil, perr
			}
			pb.Write(v)
		}
		pb.WriteByte('}')
		add("properties", json.RawMessage(pb.Bytes()))
		if len(s.required) > 0 {
			add("required", s.required)
		}
	}
	if s.values != nil {
		add("additionalProperties", s.values)
	} else if s.closed {
		add("additionalProperties", false)
	}
	if err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
