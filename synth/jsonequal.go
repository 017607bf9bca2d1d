package synth

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"strconv"
	"strings"
)

// JSONEqual reports whether a and b are the same JSON value: objects with
// the same keys and equal values in any order, arrays equal element by
// element, numbers equal as numbers (1 and 1.0 are equal), strings, booleans
// and null equal to themselves. A boolean never equals a number. Invalid
// JSON equals nothing.
func JSONEqual(a, b json.RawMessage) bool {
	va, ok := decodeJSON(a)
	if !ok {
		return false
	}
	vb, ok := decodeJSON(b)
	if !ok {
		return false
	}
	return equalValues(va, vb)
}

func decodeJSON(raw json.RawMessage) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	return v, true
}

func equalValues(a, b any) bool {
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
			if !equalValues(x[i], y[i]) {
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
			if !ok || !equalValues(v, w) {
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
