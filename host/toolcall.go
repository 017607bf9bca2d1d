package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// toolCall implements tool_call: a guest calling a host tool named by a
// tools: grant, through the embedding application's dispatcher.
// maxToolCallRequest bounds a guest's tool_call request.
const maxToolCallRequest = 1 << 20

func (inst *instance) toolCall(reqOff uint64) uint64 {
	raw := inst.read(reqOff, "tool_call", maxToolCallRequest)
	var c struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		inst.fail(&TrapError{Reason: fmt.Sprintf("tool_call: the request is not JSON {\"name\",\"arguments\"}: %v", err)})
	}
	action := fmt.Sprintf("call of host tool %q", c.Name)
	if inst.describing {
		inst.deny(&DeniedError{Kind: "tools", Action: action, Reason: noCapabilities})
	}
	granted := false
	for _, g := range inst.l.grants {
		if g.Kind == manifest.KindTools && g.Name == c.Name {
			granted = true
		}
	}
	if !granted {
		inst.deny(&DeniedError{Kind: "tools", Action: action, Reason: fmt.Sprintf("the module has no tools:%s grant", c.Name)})
	}
	dispatch := inst.l.h.opts.CallTool
	if dispatch == nil {
		inst.deny(&DeniedError{Kind: "tools", Action: action, Reason: "this host has no tool dispatcher (Options.CallTool)"})
	}
	inst.use("tools:" + c.Name)
	// The call's context says where in the call tree the host tool's own
	// sandboxed calls, if any, nest.
	res, err := dispatch(context.WithValue(inst.ctx, callNodeKey{}, &inst.node), tool.Call{Name: c.Name, Arguments: c.Arguments})
	if err != nil {
		if inst.ctx.Err() != nil {
			inst.fail(timeLimitErr(inst.limits.Timeout))
		}
		res = tool.Errorf("%v", err)
	}
	out, err := json.Marshal(res)
	if err != nil {
		inst.fail(&TrapError{Reason: "tool_call: " + err.Error()})
	}
	return inst.write(out)
}
