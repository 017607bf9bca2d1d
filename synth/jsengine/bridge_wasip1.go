//go:build wasip1 && toolbridge

package main

import "encoding/json"

//go:wasmimport extism:host/user tool_call
func toolCall(req uint64) uint64

// hostBridge calls a host tool through the host's tool_call function.
var hostBridge bridge = func(name string, args []byte) ([]byte, error) {
	req, err := json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{name, args})
	if err != nil {
		return nil, err
	}
	off := writeBlock(req)
	res := toolCall(off)
	free(off)
	out := readBlock(res)
	free(res)
	return out, nil
}
