package main

import (
	"errors"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// argsEncoder encodes a tool call's arguments as the runtime's original
// JSON.stringify (no replacer, no indent) does, in Go: the same text, the
// same exceptions, and the same code of the program run in the same order
// (getters, toJSON, proxy traps), step for step as goja's stringify takes
// them. A program's every call encodes its arguments; calling
// JSON.stringify from Go (a holder object, the call, the string made Go's)
// cost a fifth of a nested call inside the sandbox.
//
// The steps Go cannot take through goja's API take the original built-ins
// that are JSON.stringify's own steps: Object.keys lists a proxy's keys,
// and keys as JavaScript strings (Go's strings lose lone surrogates);
// Array.isArray sees through proxies; Reflect.get reads a key Go cannot
// name, and a BigInt's toJSON with the BigInt as receiver. They are
// taken before the program runs, so a program replacing them changes
// nothing here.
type argsEncoder struct {
	vm                        *goja.Runtime
	keys, isArray, reflectGet goja.Callable
	stringProto               *goja.Object
	buf                       []byte
	stack                     []*goja.Object
	busy                      bool // encoding: a call made meanwhile takes another encoder
}

var (
	errNoBuiltins = errors.New("jsengine: the runtime lacks Object.keys, Array.isArray, Reflect.get or String.prototype")
	// errForeign: a value made in Go (a wrapped Go value), which no
	// program can make and this engine never hands one.
	errForeign = errors.New("jsengine: the arguments hold a Go value")
)

var (
	proxyType  = reflect.TypeOf(goja.Proxy{})
	bigIntType = reflect.TypeOf((*big.Int)(nil))
)

// newArgsEncoder takes the built-ins it uses; call it before any program
// code runs.
func newArgsEncoder(vm *goja.Runtime) (*argsEncoder, error) {
	get := func(obj, name string) goja.Callable {
		o := vm.Get(obj)
		if o == nil {
			return nil
		}
		f, _ := goja.AssertFunction(o.ToObject(vm).Get(name))
		return f
	}
	e := &argsEncoder{vm: vm, keys: get("Object", "keys"), isArray: get("Array", "isArray"), reflectGet: get("Reflect", "get")}
	if s := vm.Get("String"); s != nil {
		e.stringProto, _ = s.ToObject(vm).Get("prototype").(*goja.Object)
	}
	if e.keys == nil || e.isArray == nil || e.reflectGet == nil || e.stringProto == nil {
		return nil, errNoBuiltins
	}
	return e, nil
}

// encode returns the JSON text of v, or ok false when JSON.stringify would
// return undefined. What the program's code throws meanwhile is thrown
// (a panic, as goja's own functions throw); the text is valid until the
// next call.
func (e *argsEncoder) encode(v goja.Value) (text []byte, ok bool) {
	return e.encodeWith(v, nil)
}

// encodeWith is encode; keys, when not nil, are the own enumerable keys
// of v in order, v being an object literal's fresh object that no code
// has seen (see literalCalls): they are not listed again.
func (e *argsEncoder) encodeWith(v goja.Value, keys []string) (text []byte, ok bool) {
	if e.busy {
		// A getter or toJSON of the arguments called a tool: its
		// arguments get a buffer and a stack of their own.
		inner := &argsEncoder{vm: e.vm, keys: e.keys, isArray: e.isArray, reflectGet: e.reflectGet, stringProto: e.stringProto}
		return inner.encodeWith(v, keys)
	}
	e.busy = true
	defer func() { e.busy = false }()
	e.buf, e.stack = e.buf[:0], e.stack[:0]
	if o, isObject := v.(*goja.Object); isObject && keys != nil {
		ok = e.literal(o, keys)
	} else {
		ok = e.str(jsonKey{}, v)
	}
	if !ok {
		return nil, false
	}
	return e.buf, true
}

// literal writes the object literal o whose keys are keys. Only a toJSON
// could change what stringify sees of it before its keys are listed
// (its getter or call gets o); with none on its prototype chain (Get
// finds no such property: nil, where a getter's or a data property's
// value, undefined included, is not), no code of the program has seen o,
// whose own enumerable keys are then the literal's, and whose members
// are data properties. Otherwise it is encoded as any value, from the
// toJSON read on.
func (e *argsEncoder) literal(o *goja.Object, keys []string) bool {
	toJSON := o.Get("toJSON")
	if toJSON != nil {
		return e.strToJSON(jsonKey{}, o, toJSON)
	}
	e.stack = append(e.stack, o)
	e.buf = append(e.buf, '{')
	empty := true
	for _, k := range keys {
		empty = e.member(jsonKey{name: k}, o.Get(k), empty)
	}
	e.buf = append(e.buf, '}')
	e.stack = e.stack[:len(e.stack)-1]
	return true
}

// jsonKey is the key a value was read under: a Go string, or the
// JavaScript string when Go's would lose a lone surrogate. It is made a
// value only for a toJSON to take.
type jsonKey struct {
	name string
	val  goja.Value
}

func (e *argsEncoder) keyValue(k jsonKey) goja.Value {
	if k.val != nil {
		return k.val
	}
	return e.vm.ToValue(k.name)
}

// str is SerializeJSONProperty for the value v, read from its holder
// under key: what JSON.stringify does once it has read the value.
func (e *argsEncoder) str(key jsonKey, v goja.Value) bool {
	if v == nil {
		v = goja.Undefined()
	}
	if o, ok := v.(*goja.Object); ok {
		return e.strToJSON(key, o, o.Get("toJSON"))
	}
	if v.ExportType() == bigIntType {
		// A BigInt's toJSON is read from BigInt.prototype, with the
		// BigInt itself as receiver.
		if f, ok := goja.AssertFunction(e.call(e.reflectGet, goja.Undefined(), v.ToObject(e.vm), e.vm.ToValue("toJSON"), v)); ok {
			v = e.call(f, v, e.keyValue(key))
		}
	}
	return e.serialize(v)
}

// strToJSON is str for the object o once its toJSON (toJSON, nil when
// there is none) was read.
func (e *argsEncoder) strToJSON(key jsonKey, o *goja.Object, toJSON goja.Value) bool {
	var v goja.Value = o
	if f, ok := goja.AssertFunction(toJSON); ok {
		v = e.call(f, o, e.keyValue(key))
	}
	return e.serialize(v)
}

// serialize is the rest of SerializeJSONProperty, once toJSON has had
// its say: v is the value to write.
func (e *argsEncoder) serialize(v goja.Value) bool {
	if o, ok := v.(*goja.Object); ok {
		// A primitive's wrapper (new Number(1), Object(1n)) exports as
		// its primitive does (a symbol as a string), and no other
		// object does; a string's wrapper is told by its class, which
		// it shares only with String.prototype (to goja an object).
		switch t := o.ExportType(); {
		case t != proxyType && o.ClassName() == "String" && !o.SameAs(e.stringProto):
			v = o.ToString()
		case t.Kind() == reflect.String:
			v = goja.Undefined() // a symbol's wrapper: its symbol has no JSON
		case t == bigIntType || t.Kind() == reflect.Bool:
			v = e.vm.ToValue(o.Export())
		case t.Kind() == reflect.Int64 || t.Kind() == reflect.Float64:
			v = o.ToNumber()
		}
	}
	switch {
	case v == nil || goja.IsUndefined(v):
		return false
	case goja.IsNull(v):
		e.buf = append(e.buf, "null"...)
		return true
	}
	if o, ok := v.(*goja.Object); ok {
		return e.object(o)
	}
	if _, ok := v.(*goja.Symbol); ok {
		return false
	}
	switch v.ExportType().Kind() {
	case reflect.Bool:
		e.buf = strconv.AppendBool(e.buf, v.ToBoolean())
	case reflect.String:
		e.quoteString(v)
	case reflect.Int64:
		// An integer's text, as its String gives it, without making it.
		e.buf = strconv.AppendInt(e.buf, v.ToInteger(), 10)
	case reflect.Float64:
		if f := v.ToFloat(); math.IsNaN(f) || math.IsInf(f, 0) {
			e.buf = append(e.buf, "null"...)
		} else {
			e.buf = append(e.buf, v.String()...)
		}
	default:
		if v.ExportType() == bigIntType {
			panic(e.vm.NewTypeError("Do not know how to serialize a BigInt"))
		}
		panic(e.vm.NewGoError(errForeign))
	}
	return true
}

// object writes an object: raw JSON, an array, any other object; a
// function (or a cycle) as JSON.stringify does.
func (e *argsEncoder) object(o *goja.Object) bool {
	proxy := o.ExportType() == proxyType
	if !proxy && o.ClassName() == "RawJSON" {
		e.buf = append(e.buf, o.Get("rawJSON").String()...)
		return true
	}
	for _, s := range e.stack {
		if s.SameAs(o) {
			panic(e.vm.NewTypeError("Converting circular structure to JSON"))
		}
	}
	if _, ok := goja.AssertFunction(o); ok {
		return false
	}
	e.stack = append(e.stack, o)
	defer func() { e.stack = e.stack[:len(e.stack)-1] }()
	array := !proxy && o.ClassName() == "Array"
	if proxy {
		array = e.call(e.isArray, goja.Undefined(), o).ToBoolean()
	}
	if array {
		e.array(o)
	} else {
		e.members(o, proxy)
	}
	return true
}

func (e *argsEncoder) array(o *goja.Object) {
	n := toLength(o.Get("length"))
	e.buf = append(e.buf, '[')
	for i := int64(0); i < n; i++ {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		k := strconv.FormatInt(i, 10)
		if !e.str(jsonKey{name: k}, o.Get(k)) {
			e.buf = append(e.buf, "null"...)
		}
	}
	e.buf = append(e.buf, ']')
}

// members writes an object's own enumerable string-keyed members.
func (e *argsEncoder) members(o *goja.Object, proxy bool) {
	e.buf = append(e.buf, '{')
	empty := true
	// Keys lists what Object.keys lists (a proxy's traps included); a
	// proxy's keys are listed once, by Object.keys, lest a lone
	// surrogate among them make them listed twice.
	if !proxy {
		if keys := o.Keys(); !anyReplaced(keys) {
			for _, k := range keys {
				empty = e.member(jsonKey{name: k}, o.Get(k), empty)
			}
			e.buf = append(e.buf, '}')
			return
		}
	}
	// Object.keys gives the keys as JavaScript strings, lone surrogates
	// kept; Reflect.get reads a key whose Go string lost one.
	list := e.call(e.keys, goja.Undefined(), o).(*goja.Object)
	n := toLength(list.Get("length"))
	for i := int64(0); i < n; i++ {
		key := list.Get(strconv.FormatInt(i, 10))
		k := jsonKey{name: key.String()}
		var v goja.Value
		if strings.ContainsRune(k.name, utf8.RuneError) {
			k.val = key
			v = e.call(e.reflectGet, goja.Undefined(), o, key)
		} else {
			v = o.Get(k.name)
		}
		empty = e.member(k, v, empty)
	}
	e.buf = append(e.buf, '}')
}

// member writes one member, or nothing when its value has no JSON; it
// returns whether the object is still empty.
func (e *argsEncoder) member(k jsonKey, v goja.Value, empty bool) bool {
	mark := len(e.buf)
	if !empty {
		e.buf = append(e.buf, ',')
	}
	e.quote(k)
	e.buf = append(e.buf, ':')
	if e.str(k, v) {
		return false
	}
	e.buf = e.buf[:mark]
	return empty
}

// anyReplaced tells whether a key's Go string may have lost a lone
// surrogate (turned into U+FFFD).
func anyReplaced(keys []string) bool {
	for _, k := range keys {
		if strings.ContainsRune(k, utf8.RuneError) {
			return true
		}
	}
	return false
}

// call calls f, throwing what it throws.
func (e *argsEncoder) call(f goja.Callable, this goja.Value, args ...goja.Value) goja.Value {
	v, err := f(this, args...)
	if err != nil {
		panic(err)
	}
	return v
}

// toLength is ToLength, as JSON.stringify applies it to an array's length.
func toLength(v goja.Value) int64 {
	if v == nil {
		return 0
	}
	return max(v.ToInteger(), 0)
}

// quote writes a key as a JSON string (see quoteString).
func (e *argsEncoder) quote(k jsonKey) {
	if k.val != nil {
		e.quoteString(k.val)
		return
	}
	e.buf = append(e.buf, '"')
	for _, r := range k.name {
		e.quoteRune(r)
	}
	e.buf = append(e.buf, '"')
}

// quoteString writes s as a JSON string as JSON.stringify does: '"' and
// '\\' escaped, the control characters as \b \t \n \f \r or \u00XX, a
// lone surrogate as \uDXXX, everything else as it is.
func (e *argsEncoder) quoteString(v goja.Value) {
	s := v.String()
	if js, ok := v.(goja.String); ok && strings.ContainsRune(s, utf8.RuneError) {
		// Go's string of it may have lost a lone surrogate: read the
		// UTF-16 code units.
		e.buf = append(e.buf, '"')
		e.quoteUnits(js)
		e.buf = append(e.buf, '"')
		return
	}
	e.quote(jsonKey{name: s})
}

func (e *argsEncoder) quoteUnits(s goja.String) {
	n := s.Length()
	for i := 0; i < n; i++ {
		c := rune(s.CharAt(i))
		if utf16.IsSurrogate(c) && c < 0xdc00 && i+1 < n {
			if d := rune(s.CharAt(i + 1)); d >= 0xdc00 && d <= 0xdfff {
				e.quoteRune(utf16.DecodeRune(c, d))
				i++
				continue
			}
		}
		e.quoteRune(c)
	}
}

const hexDigits = "0123456789abcdef"

func (e *argsEncoder) quoteRune(r rune) {
	switch r {
	case '"', '\\':
		e.buf = append(e.buf, '\\', byte(r))
	case '\b':
		e.buf = append(e.buf, '\\', 'b')
	case '\t':
		e.buf = append(e.buf, '\\', 't')
	case '\n':
		e.buf = append(e.buf, '\\', 'n')
	case '\f':
		e.buf = append(e.buf, '\\', 'f')
	case '\r':
		e.buf = append(e.buf, '\\', 'r')
	default:
		switch {
		case r < 0x20:
			e.buf = append(e.buf, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xf])
		case utf16.IsSurrogate(r):
			e.buf = append(e.buf, '\\', 'u', hexDigits[r>>12], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		default:
			e.buf = utf8.AppendRune(e.buf, r)
		}
	}
}
