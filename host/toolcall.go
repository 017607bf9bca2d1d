package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// maxToolCallRequest bounds a guest's tool_call request.
const maxToolCallRequest = 1 << 20

// toolCall implements tool_call: a guest calling a host tool named by a
// tools: grant, through the embedding application's dispatcher.
func (inst *instance) toolCall(reqOff uint64) uint64 {
	raw := inst.Read(reqOff, "tool_call", maxToolCallRequest)
	c, err := parseToolCallRequest(raw)
	if err != nil {
		inst.Crash(fmt.Sprintf("tool_call: the request is not JSON {\"name\",\"arguments\"}: %v", err))
	}
	// The action names the call in a refusal; it is made only for one.
	action := func() string { return fmt.Sprintf("call of host tool %q", c.Name) }
	if inst.describing {
		inst.Deny("tools", action(), hostcall.NoCapabilities)
	}
	granted := inst.l.anyTool
	for _, g := range inst.l.grants {
		if g.Kind == manifest.KindTools && g.Name == c.Name {
			granted = true
		}
	}
	if !granted {
		inst.Deny("tools", action(), fmt.Sprintf("the module has no tools:%s grant", c.Name))
	}
	dispatch := inst.l.h.opts.CallTool
	if dispatch == nil {
		inst.Deny("tools", action(), "this host has no tool dispatcher (Options.CallTool)")
	}
	if !inst.used["tools:"+c.Name] { // a lookup with a concatenated key allocates nothing
		inst.Use("tools:" + c.Name)
	}
	// The call's context says where in the call tree the host tool's own
	// sandboxed calls, if any, nest.
	res, err := dispatch(context.WithValue(inst.ctx, callNodeKey{}, &inst.node), tool.Call{Name: c.Name, Arguments: c.Arguments})
	if err != nil {
		if inst.ctx.Err() != nil {
			inst.TimeUp()
		}
		res = tool.Errorf("%v", err)
	}
	out, err := json.Marshal(res)
	if err != nil {
		inst.Crash("tool_call: " + err.Error())
	}
	return inst.Write(out)
}
