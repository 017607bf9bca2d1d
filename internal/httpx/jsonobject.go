package httpx

import (
	"bytes"
	"encoding/json"
)

// JSONObject returns args, trimmed, when they are a JSON object, and {}
// otherwise. Anthropic's tool_use input and Gemini's functionCall args
// accept nothing but an object, while a model may have produced invalid
// arguments (which the tool already refused); sending {} in their place
// keeps the rest of the history acceptable.
func JSONObject(args json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return json.RawMessage(`{}`)
	}
	return t
}
