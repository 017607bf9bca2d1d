package loop

import (
	"strconv"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
)

// callIDs keeps the tool-call ids of a run unique. Approvals, checkpoints,
// journals and tool results all refer to a call by id, so a provider that
// sends none (Gemini) or repeats one must not make two calls
// indistinguishable.
type callIDs struct {
	used map[string]struct{}
}

// seed records the ids already in msgs (a resumed or caller-supplied
// transcript).
func (c *callIDs) seed(msgs []llm.Message) {
	for _, m := range msgs {
		if m.Role != llm.RoleAssistant {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == llm.PartToolCall && p.ToolCall != nil {
				c.add(p.ToolCall.ID)
			}
		}
	}
}

func (c *callIDs) add(id string) {
	if c.used == nil {
		c.used = make(map[string]struct{})
	}
	c.used[id] = struct{}{}
}

func (c *callIDs) has(id string) bool {
	_, ok := c.used[id]
	return ok
}

// fix gives every tool call of msg a run-unique id, in place in a copy of
// the parts: an empty or already-used id, or one holding a "/" (the
// separator of the ids of calls tools make, "<call id>/<n>", which a model
// must not be able to name), becomes "call_<step>_<index>" (with a suffix
// if even that is taken), deterministic so replays and tests see the same
// ids. It returns msg unchanged when no id changed.
func (c *callIDs) fix(msg llm.Message, step int) llm.Message {
	copied := false
	idx := 0
	for i, p := range msg.Parts {
		if p.Type != llm.PartToolCall || p.ToolCall == nil {
			continue
		}
		idx++
		id := p.ToolCall.ID
		if id != "" && !c.has(id) && !strings.Contains(id, "/") {
			c.add(id)
			continue
		}
		base := "call_" + strconv.Itoa(step) + "_" + strconv.Itoa(idx)
		id = base
		for n := 2; c.has(id); n++ {
			id = base + "_" + strconv.Itoa(n)
		}
		c.add(id)
		if !copied {
			msg.Parts = append([]llm.Part(nil), msg.Parts...)
			copied = true
		}
		tc := *p.ToolCall
		tc.ID = id
		msg.Parts[i].ToolCall = &tc
	}
	return msg
}
