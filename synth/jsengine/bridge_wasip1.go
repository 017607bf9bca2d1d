//go:build wasip1 && toolbridge

package main

import (
	"github.com/autoagent-go/autoagent/pdk/go/extism"
)

// toolRequests builds this instance's tool_call requests.
var toolRequests requests

// toolResults holds the last tool_call result: every caller of the bridge
// is done with a result (decoded, or copied into strings) before its next
// call, so one buffer serves the instance's calls.
var toolResults []byte

// hostBridge calls a host tool through the host's tool_call function.
var hostBridge bridge = func(name string, args []byte) ([]byte, error) {
	req, err := toolRequests.build(name, args)
	if err != nil {
		return nil, err
	}
	toolResults = extism.CallToolInto(req, toolResults)
	return toolResults, nil
}
