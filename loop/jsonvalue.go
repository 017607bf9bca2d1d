package loop

import (
	"bytes"
	"encoding/json"
)

// JSON values compared by meaning rather than by bytes: the loop guard and
// replay compare tool arguments, policies compare argument values.

// canonicalJSON makes key order and spacing irrelevant to comparisons.
func canonicalJSON(b []byte) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return string(b)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(b)
	}
	return string(out)
}
