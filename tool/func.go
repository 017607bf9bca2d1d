package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"

	"github.com/autoagent-go/autoagent/llm"
)

// nameRE is the tool-name grammar every provider accepts.
var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ValidName reports whether name is a tool name every provider accepts:
// 1 to 64 ASCII letters, digits, '_' or '-'.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// New returns a tool named name that decodes its arguments into In, calls
// fn, and encodes Out for the model.
//
// The input schema is derived from In (a struct, or a pointer to one), and
// arguments are validated against it before fn runs. Out is sent as text
// when it is a string, passed through when it is a [Result], and otherwise
// encoded as JSON (and as structured content when it is an object). An
// error returned by fn, or a panic inside it, becomes an error result the
// model sees; the process never crashes.
//
// New returns an error, and never panics, when the name is invalid or the
// schema cannot be derived.
func New[In, Out any](name, description string, fn func(context.Context, In) (Out, error)) (Tool, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("tool: invalid name %q: want 1-64 letters, digits, '_' or '-'", name)
	}
	if fn == nil {
		return nil, fmt.Errorf("tool %s: nil function", name)
	}
	in := reflect.TypeFor[In]()
	base := in
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() != reflect.Struct && base.Kind() != reflect.Map {
		return nil, fmt.Errorf("tool %s: argument type %s must be a struct (or a map with string keys)", name, in)
	}
	s, err := inferSchema(in)
	if err != nil {
		return nil, fmt.Errorf("tool %s: deriving input schema: %w", name, err)
	}
	s.Type, s.Types = "object", nil // a pointer type would allow null
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("tool %s: encoding input schema: %w", name, err)
	}
	compiled, err := CompileSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", name, err)
	}
	spec := llm.ToolSpec{Name: name, Description: description, InputSchema: raw}
	out := reflect.TypeFor[Out]()
	for out.Kind() == reflect.Pointer {
		out = out.Elem()
	}
	if out.Kind() == reflect.Struct && out != reflect.TypeFor[Result]() {
		os, err := inferSchema(out)
		if err != nil {
			return nil, fmt.Errorf("tool %s: deriving output schema: %w", name, err)
		}
		os.Type, os.Types = "object", nil
		if spec.OutputSchema, err = json.Marshal(os); err != nil {
			return nil, fmt.Errorf("tool %s: encoding output schema: %w", name, err)
		}
	}
	return &funcTool[In, Out]{spec: spec, schema: compiled, fn: fn}, nil
}

// Must returns t, panicking if err is not nil. It is meant for package-level
// tool variables whose construction cannot fail at run time.
func Must(t Tool, err error) Tool {
	if err != nil {
		panic(err)
	}
	return t
}

type funcTool[In, Out any] struct {
	spec   llm.ToolSpec
	schema *Schema
	fn     func(context.Context, In) (Out, error)
}

func (t *funcTool[In, Out]) Spec() llm.ToolSpec { return t.spec }

func (t *funcTool[In, Out]) Call(ctx context.Context, c Call) (res Result, err error) {
	if verr := t.schema.Validate(c.Arguments); verr != nil {
		return Errorf("%s", verr.Error()), nil
	}
	var in In
	if len(c.Arguments) > 0 {
		if uerr := json.Unmarshal(c.Arguments, &in); uerr != nil {
			return Errorf("invalid arguments: %v", uerr), nil
		}
	}
	defer recoverInto(t.spec.Name, &res, &err)
	out, ferr := t.fn(ctx, in)
	if ferr != nil {
		return Errorf("%v", ferr), nil
	}
	switch v := any(out).(type) {
	case string:
		return Text(v), nil
	case Result:
		return v, nil
	case *Result:
		if v == nil {
			return Text(""), nil
		}
		return *v, nil
	}
	r, jerr := JSON(out)
	if jerr != nil {
		return Errorf("%v", jerr), nil
	}
	return r, nil
}

// recoverInto turns a panic into an error result naming the tool.
func recoverInto(name string, res *Result, err *error) {
	if p := recover(); p != nil {
		*res = Errorf("tool %s panicked: %v", name, p)
		*err = nil
	}
}

// NewFromSpec returns a tool with a hand-written spec whose arguments are
// validated against spec.InputSchema before fn runs. Use it when the schema
// cannot be derived from a Go type (proxies, dynamic tools).
func NewFromSpec(spec llm.ToolSpec, fn func(context.Context, Call) (Result, error)) (Tool, error) {
	if !ValidName(spec.Name) {
		return nil, fmt.Errorf("tool: invalid name %q: want 1-64 letters, digits, '_' or '-'", spec.Name)
	}
	if fn == nil {
		return nil, fmt.Errorf("tool %s: nil function", spec.Name)
	}
	compiled, err := CompileSchema(spec.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", spec.Name, err)
	}
	spec.InputSchema = compiled.JSON()
	return &specTool{spec: spec, schema: compiled, fn: fn}, nil
}

type specTool struct {
	spec   llm.ToolSpec
	schema *Schema
	fn     func(context.Context, Call) (Result, error)
}

func (t *specTool) Spec() llm.ToolSpec { return t.spec }

func (t *specTool) Call(ctx context.Context, c Call) (res Result, err error) {
	if verr := t.schema.Validate(c.Arguments); verr != nil {
		return Errorf("%s", verr.Error()), nil
	}
	defer recoverInto(t.spec.Name, &res, &err)
	return t.fn(ctx, c)
}
