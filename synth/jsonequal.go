package synth

import (
	"encoding/json"

	"github.com/autoagent-go/autoagent/internal/jsonvalue"
)

// JSONEqual reports whether a and b are the same JSON value: objects with
// the same keys and equal values in any order, arrays equal element by
// element, numbers equal exactly as numbers (1 and 1.0 are equal; large
// integers are not rounded), strings, booleans and null equal to
// themselves. A boolean never equals a number. Invalid JSON equals
// nothing.
func JSONEqual(a, b json.RawMessage) bool { return jsonvalue.EqualRaw(a, b) }
