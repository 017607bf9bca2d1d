package loop

import (
	"encoding/json"

	"github.com/autoagent-go/autoagent/internal/jsonvalue"
)

// canonicalJSON makes key order and spacing irrelevant when the loop guard,
// replay and early starts compare tool arguments. Text that is not one JSON
// value (trailing data included) stays as it is, so it equals only itself.
func canonicalJSON(b []byte) string {
	v, ok := jsonvalue.Decode(b)
	if !ok {
		return string(b)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(b)
	}
	return string(out)
}
