package wasmbin

import "fmt"

// Error reports a module that is malformed (it cannot be decoded) or
// invalid (it decodes but breaks a validation rule).
type Error struct {
	// Offset is the byte of the binary where the problem was found.
	Offset int
	// Func is the index of the function (in the function index space)
	// whose body holds the problem, or -1.
	Func int
	// Malformed is set when the bytes do not decode.
	Malformed bool
	Msg       string
}

func (e *Error) Error() string {
	kind := "invalid"
	if e.Malformed {
		kind = "malformed"
	}
	if e.Func >= 0 {
		return fmt.Sprintf("%s module: function %d, at byte %#x: %s", kind, e.Func, e.Offset, e.Msg)
	}
	return fmt.Sprintf("%s module: at byte %#x: %s", kind, e.Offset, e.Msg)
}

// LimitError reports a module that declares more than a [Limits] field
// allows.
type LimitError struct {
	// Limit is the name of the Limits field, e.g. "FunctionBytes".
	Limit string
	// What says what went past it, e.g. "function 12 has 300000 bytes of code".
	What string
	// Max is the limit's value, Got what the module has (or the first
	// value found past the limit).
	Max, Got int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("module exceeds the %s limit of %d: %s", e.Limit, e.Max, e.What)
}
