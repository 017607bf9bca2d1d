//go:build wasip1 && toolbridge

package main

import (
	"github.com/autoagent-go/autoagent/pdk/go/extism"
)

// toolRequests builds this instance's tool_call requests.
var toolRequests requests

// hostBridge calls a host tool through the host's tool_call function.
var hostBridge bridge = func(name, args string) ([]byte, error) {
	req, err := toolRequests.build(name, args)
	if err != nil {
		return nil, err
	}
	return extism.CallTool(req), nil
}
