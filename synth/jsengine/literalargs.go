package main

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/unistring"
)

// In a program run without its awaits (see syncprogram.go), most tool
// calls are written tools.NAME({id: 7, ...}): the arguments an object
// literal whose keys the source spells out. Listing an object's keys is
// the dearest step of encoding it (goja's Keys makes an iterator, its
// closures and a copy of the key list per object, most of a call's
// argument cost inside the sandbox), and for such a literal the source
// already says what they are. So such a call is compiled as a call of a
// hidden parameter of the program's function, a function that calls the
// tool knowing the keys (argsEncoder.literal encodes the literal with
// them). No program can name the parameter: its name holds a NUL. See
// RATIONALE.md, "Why are a literal's keys taken from the source?".

// literalCall is a hidden parameter of the program's function, named
// member: tool, called with an object literal whose own enumerable keys
// are keys, in that order.
type literalCall struct {
	member, tool string
	keys         []string
}

// maxLiteralCalls bounds the hidden parameters of one program: each is a
// binding goja makes when it compiles the program, and a program of
// thousands of literals of different keys would cost more to compile
// than its calls save. Calls past it list their keys at run time.
const maxLiteralCalls = 256

// literalMemberMark joins the parts of a hidden parameter's name: no tool
// name holds it (a NUL), and no program can write it in a name.
const literalMemberMark = "\x00"

// literalCalls finds the tool calls of prog (a program eligible to run
// without its awaits, so tools is the global tools everywhere) whose one
// argument is an object literal with plain keys, and makes each a call of
// a hidden parameter of the program's function, added to the tree (the
// callee replaced by the parameter's name at its position; no other
// position changes). It returns the parameters, in the order added.
func literalCalls(prog *ast.Program, tools []string) []literalCall {
	root := rootFunction(prog)
	if root == nil || root.ParameterList == nil || len(root.ParameterList.List) != 0 || root.ParameterList.Rest != nil {
		return nil
	}
	params := root.ParameterList
	var calls []literalCall
	seen := map[string]bool{}
	walkCalls(reflect.ValueOf(root.Body), func(c *ast.CallExpression) {
		callee, ok := c.Callee.(*ast.DotExpression)
		if !ok || len(c.ArgumentList) != 1 {
			return
		}
		if obj, ok := callee.Left.(*ast.Identifier); !ok || obj.Name != "tools" {
			return
		}
		name := callee.Identifier.Name.String()
		if !slices.Contains(tools, name) || strings.Contains(name, literalMemberMark) {
			return
		}
		lit, ok := c.ArgumentList[0].(*ast.ObjectLiteral)
		if !ok {
			return
		}
		keys, ok := literalKeys(lit)
		if !ok {
			return
		}
		member := name + literalMemberMark + strings.Join(keys, literalMemberMark)
		if !seen[member] && len(calls) == maxLiteralCalls {
			return
		}
		id := unistring.NewFromString(member)
		c.Callee = &ast.Identifier{Name: id, Idx: callee.Idx0()}
		if !seen[member] {
			seen[member] = true
			calls = append(calls, literalCall{member: member, tool: name, keys: keys})
			params.List = append(params.List, &ast.Binding{Target: &ast.Identifier{Name: id, Idx: params.Closing}})
		}
	})
	return calls
}

// literalKeys returns the own enumerable keys of the object lit makes,
// in order, when the source alone says what they are: every member
// `key: value` or shorthand `key`, the key a name or a string, not
// computed; no spread, getter, setter or method; no key named
// __proto__ (`__proto__: v` sets the prototype), no key an array index
// (those are listed first, in numeric order), none given twice, none
// holding a NUL (the hidden member's separator) or U+FFFD.
func literalKeys(lit *ast.ObjectLiteral) ([]string, bool) {
	keys := make([]string, 0, len(lit.Value))
	for _, p := range lit.Value {
		var key string
		switch p := p.(type) {
		case *ast.PropertyShort:
			if p.Initializer != nil {
				return nil, false
			}
			key = p.Name.Name.String()
		case *ast.PropertyKeyed:
			if p.Kind != ast.PropertyKindValue || p.Computed {
				return nil, false
			}
			switch k := p.Key.(type) {
			case *ast.Identifier:
				key = k.Name.String()
			case *ast.StringLiteral:
				key = k.Value.String()
			default:
				return nil, false
			}
		default:
			return nil, false
		}
		// A key whose Go string lost a lone surrogate (U+FFFD) would
		// name another member.
		if key == "__proto__" || isArrayIndex(key) || strings.Contains(key, literalMemberMark) || strings.ContainsRune(key, utf8.RuneError) || slices.Contains(keys, key) {
			return nil, false
		}
		keys = append(keys, key)
	}
	return keys, true
}

// isArrayIndex tells whether key is an array index: the canonical text
// of an integer from 0 to 2^32-2.
func isArrayIndex(key string) bool {
	n, err := strconv.ParseUint(key, 10, 32)
	return err == nil && n < 1<<32-1 && strconv.FormatUint(n, 10) == key
}

var callType = reflect.TypeOf(ast.CallExpression{})

// walkCalls calls f with every call expression below v, inner ones
// first.
func walkCalls(v reflect.Value, f func(*ast.CallExpression)) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		walkCalls(v.Elem(), f)
		if v.Kind() == reflect.Pointer && v.Elem().Type() == callType {
			f(v.Interface().(*ast.CallExpression))
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkCalls(v.Index(i), f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkCalls(v.Field(i), f)
			}
		}
	}
}
