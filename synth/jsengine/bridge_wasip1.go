//go:build wasip1 && toolbridge

package main

import (
	"encoding/json"

	"github.com/autoagent-go/autoagent/pdk/go/extism"
)

// hostBridge calls a host tool through the host's tool_call function.
// The request is put together here rather than by json.Marshal, which
// would check and compact the arguments again: they are JSON.stringify's
// output, or the host's own input, already valid.
var hostBridge bridge = func(name string, args []byte) ([]byte, error) {
	quoted, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	req := make([]byte, 0, len(`{"name":,"arguments":}`)+len(quoted)+len(args))
	req = append(req, `{"name":`...)
	req = append(req, quoted...)
	req = append(req, `,"arguments":`...)
	req = append(req, args...)
	req = append(req, '}')
	return extism.CallTool(req), nil
}
