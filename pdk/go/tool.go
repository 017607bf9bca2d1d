package pdk

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
)

// Tool is one tool a module offers. Create it with [NewTool] and make it
// visible to the host with [Register].
type Tool struct {
	name        string
	description string
	input       *schema
	output      *schema
	annotations *Annotations
	run         func(ctx context.Context, args []byte) Result
	err         error // reported by describe, so a mistake shows before any call
}

// Annotations are hints about a tool's behaviour, passed to the host and
// on to MCP clients. False fields are left out, so MCP's defaults apply.
type Annotations struct {
	// Title is a human-readable name.
	Title string `json:"title,omitempty"`
	// ReadOnly: the tool does not change its environment.
	ReadOnly bool `json:"readOnlyHint,omitempty"`
	// Destructive: the tool may delete or overwrite data.
	Destructive bool `json:"destructiveHint,omitempty"`
	// Idempotent: calling again with the same arguments changes nothing more.
	Idempotent bool `json:"idempotentHint,omitempty"`
	// OpenWorld: the tool reaches outside systems (the web, other services).
	OpenWorld bool `json:"openWorldHint,omitempty"`
}

// validName reports whether name is a tool name every provider accepts:
// 1 to 64 ASCII letters, digits, '_' or '-'. (No regexp: the package would
// add a quarter of a megabyte to every module.)
func validName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// NewTool returns a tool named name that decodes its arguments into In,
// calls fn, and encodes Out for the model. It has the signature of the
// host's tool.New, so a Go function tool moves into a sandboxed module
// unchanged.
//
// In must be a struct (or a pointer to one) or a map with string keys;
// arguments are validated against the schema derived from it before fn
// runs. Out is sent as text when it is a string, as is when it is a
// [Result], and otherwise as JSON (and as structured content when it
// encodes to an object). An error from fn, or a panic in it, becomes an
// error result.
//
// The context is never cancelled from inside the module: the host enforces
// time limits by ending the instance.
//
// NewTool never panics: a bad name or a type without a schema is reported
// by describe, naming the tool.
func NewTool[In, Out any](name, description string, fn func(context.Context, In) (Out, error)) *Tool {
	t := &Tool{name: name, description: description}
	if !validName(name) {
		t.err = fmt.Errorf("pdk: invalid tool name %q: want 1-64 letters, digits, '_' or '-'", name)
		return t
	}
	if fn == nil {
		t.err = fmt.Errorf("pdk: tool %s: nil function", name)
		return t
	}
	in := reflect.TypeFor[In]()
	base := in
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() != reflect.Struct && base.Kind() != reflect.Map {
		t.err = fmt.Errorf("pdk: tool %s: argument type %s must be a struct (or a map with string keys)", name, in)
		return t
	}
	s, err := deriveSchema(base)
	if err != nil {
		t.err = fmt.Errorf("pdk: tool %s: deriving input schema: %w", name, err)
		return t
	}
	t.input = s
	out := reflect.TypeFor[Out]()
	for out.Kind() == reflect.Pointer {
		out = out.Elem()
	}
	if out.Kind() == reflect.Struct && out != reflect.TypeFor[Result]() {
		os, err := deriveSchema(out)
		if err != nil {
			t.err = fmt.Errorf("pdk: tool %s: deriving output schema: %w", name, err)
			return t
		}
		t.output = os
	}
	warmTypes[In, Out]()
	t.run = func(ctx context.Context, args []byte) Result {
		if err := validate(args, t.input); err != nil {
			return Errorf("%s", err.Error())
		}
		var v In
		if err := json.Unmarshal(args, &v); err != nil {
			return Errorf("invalid arguments: %v", err)
		}
		o, err := fn(ctx, v)
		if err != nil {
			return Errorf("%s", err.Error())
		}
		switch r := any(o).(type) {
		case string:
			return Text(r)
		case Result:
			return r
		case *Result:
			if r == nil {
				return Text("")
			}
			return *r
		}
		r, err := JSON(o)
		if err != nil {
			return Errorf("%s", err.Error())
		}
		return r
	}
	return t
}

// WithAnnotations sets the tool's behaviour hints and returns the tool.
func (t *Tool) WithAnnotations(a Annotations) *Tool {
	t.annotations = &a
	return t
}

// Name returns the tool's name.
func (t *Tool) Name() string { return t.name }
