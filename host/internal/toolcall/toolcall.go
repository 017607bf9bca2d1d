// Package toolcall is tool_call: a guest calling a host tool named by a
// tools: grant, through the embedding application's dispatcher.
package toolcall

import (
	"encoding/json"
	"fmt"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
	"github.com/autoagent-go/autoagent/tool"
)

// Call is the guest call as tool_call sees it.
type Call interface {
	hostcall.Call
	// ToolGranted reports whether the module may call the host tool
	// name (a tools:NAME grant, or tools:*).
	ToolGranted(name string) bool
	// CanDispatch reports whether the host has a tool dispatcher.
	CanDispatch() bool
	// Dispatch calls a host tool through the dispatcher, under the
	// call's context and at the call's place in the call tree.
	Dispatch(c tool.Call) (tool.Result, error)
}

// MaxRequest bounds a guest's tool_call request.
const MaxRequest = 1 << 20

// Funcs is tool_call, of extism:host/user.
var Funcs = []hostcall.Func[Call]{
	{Name: "tool_call", Params: hostcall.Sig(hostcall.I64), Results: hostcall.Sig(hostcall.I64), Grant: "tools",
		Fn: func(c Call, s []uint64) { s[0] = call(c, s[0]) }},
}

func call(c Call, reqOff uint64) uint64 {
	raw := c.Read(reqOff, "tool_call", MaxRequest)
	req, err := parseRequest(raw)
	if err != nil {
		c.Crash(fmt.Sprintf("tool_call: the request is not JSON {\"name\",\"arguments\"}: %v", err))
	}
	// The action names the call in a refusal; it is made only for one.
	action := func() string { return fmt.Sprintf("call of host tool %q", req.Name) }
	if c.Describing() {
		c.Deny("tools", action(), hostcall.NoCapabilities)
	}
	if !c.ToolGranted(req.Name) {
		c.Deny("tools", action(), fmt.Sprintf("the module has no tools:%s grant", req.Name))
	}
	if !c.CanDispatch() {
		c.Deny("tools", action(), "this host has no tool dispatcher (Options.CallTool)")
	}
	c.Use("tools:" + req.Name)
	res, err := c.Dispatch(tool.Call{Name: req.Name, Arguments: req.Arguments})
	if err != nil {
		if c.Context().Err() != nil {
			c.TimeUp()
		}
		res = tool.Errorf("%v", err)
	}
	out, err := json.Marshal(reply{Result: res, Refusal: res.Refusal})
	if err != nil {
		c.Crash("tool_call: " + err.Error())
	}
	return c.Write(out)
}

// reply is what a guest's tool_call returns: the result's JSON (MCP's
// content, structuredContent, isError) and, when the agent loop refused
// the call, the refusal's kind. The kind is a field the host alone writes
// (tool.Result.Refusal has no JSON form of its own, and a result's own
// fields sit one level down, in structuredContent), so a tool's text or
// structured content cannot claim it.
type reply struct {
	tool.Result
	Refusal string `json:"refusal,omitempty"`
}
