// Package jsonvalue compares JSON values by meaning rather than by bytes:
// objects with the same members in any order, arrays element by element,
// numbers exactly by value (1 == 1.0 == 1e0, while 2^53 and 2^53+1 stay
// different), and a boolean never equal to a number.
//
//	jsonvalue.EqualRaw([]byte(`{"a":1,"b":[2]}`), []byte(`{"b":[2.0],"a":1e0}`)) // true
//	jsonvalue.EqualRaw([]byte(`9007199254740993`), []byte(`9007199254740992`))   // false
//
// The loop's policies and guards and synth's example checks use it, so a
// value means the same thing to both.
//
// It also scans JSON in one pass, accepting exactly what encoding/json
// accepts ([Scanner], [Valid], [IsObject], [Unquote]): the host checks
// every call's arguments and decodes every module's result with it.
//
//	jsonvalue.IsObject([]byte(`{"q":"x"}`)) // true
//	jsonvalue.Valid([]byte(`[1,]`))         // false
package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"strconv"
	"strings"
)

// Decode decodes one JSON value with numbers kept as json.Number, the form
// Equal compares. It reports false for invalid JSON or trailing data.
func Decode(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	// Only the end of input may follow: dec.More alone would let a stray
	// closing ] or } through, as it reports the end of an array or object.
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

// EqualRaw reports whether a and b encode the same JSON value. Invalid JSON
// equals nothing, itself included.
func EqualRaw(a, b []byte) bool {
	va, ok := Decode(a)
	if !ok {
		return false
	}
	vb, ok := Decode(b)
	return ok && Equal(va, vb)
}

// Equal reports whether two decoded JSON values (as Decode returns them:
// nil, bool, string, json.Number, []any, map[string]any) are the same
// value.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && equalNumbers(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// equalNumbers compares exactly, so large integers are not rounded
// through float64. Numbers with huge exponents (which exact arithmetic
// would spend unbounded memory on) are compared as float64.
func equalNumbers(a, b json.Number) bool {
	if a == b {
		return true
	}
	if hugeExponent(a) || hugeExponent(b) {
		x, err1 := strconv.ParseFloat(string(a), 64)
		y, err2 := strconv.ParseFloat(string(b), 64)
		return (err1 == nil || errors.Is(err1, strconv.ErrRange)) && (err2 == nil || errors.Is(err2, strconv.ErrRange)) && x == y
	}
	x, ok1 := new(big.Rat).SetString(string(a))
	y, ok2 := new(big.Rat).SetString(string(b))
	return ok1 && ok2 && x.Cmp(y) == 0
}

func hugeExponent(n json.Number) bool {
	i := strings.IndexAny(string(n), "eE")
	if i < 0 {
		return false
	}
	e, err := strconv.Atoi(strings.TrimPrefix(string(n[i+1:]), "+"))
	return err != nil || e > 400 || e < -400
}
