//go:build wasip1 && toolbridge

package main

import (
	"encoding/json"

	"github.com/autoagent-go/autoagent/pdk/go/extism"
)

// hostBridge calls a host tool through the host's tool_call function.
var hostBridge bridge = func(name string, args []byte) ([]byte, error) {
	req, err := json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{name, args})
	if err != nil {
		return nil, err
	}
	return extism.CallTool(req), nil
}
