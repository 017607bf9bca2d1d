package toolcall

import (
	"encoding/json"
	"slices"
)

// request is a tool_call request.
type request struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// parseRequest reads a tool_call request as json.Unmarshal reads
// it into a request. The form the engines and PDKs write,
// {"name":"NAME","arguments":VALUE} with a name of plain ASCII and no
// space, is read directly, with only the arguments checked by json.Valid:
// a program's every nested call crosses here, and decoding by reflection
// was a tenth of the crossing. Any other form goes to json.Unmarshal.
func parseRequest(raw []byte) (request, error) {
	const head, mid = `{"name":"`, `","arguments":`
	if len(raw) > len(head)+len(mid)+1 && string(raw[:len(head)]) == head && raw[len(raw)-1] == '}' {
		rest := raw[len(head):]
		n := 0
		for n < len(rest) && rest[n] != '"' && rest[n] != '\\' && rest[n] >= 0x20 && rest[n] < 0x7f {
			n++
		}
		if n < len(rest) && rest[n] == '"' && len(rest[n:]) > len(mid) && string(rest[n:n+len(mid)]) == mid {
			args := rest[n+len(mid) : len(rest)-1]
			if len(args) > 0 && !isJSONSpace(args[0]) && !isJSONSpace(args[len(args)-1]) && json.Valid(args) {
				return request{Name: string(rest[:n]), Arguments: slices.Clone(args)}, nil
			}
		}
	}
	var c request
	err := json.Unmarshal(raw, &c)
	return c, err
}

// isJSONSpace reports whether b is white space to JSON.
func isJSONSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
