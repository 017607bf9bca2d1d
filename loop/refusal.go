package loop

import "strings"

// refusalPrefixes start every tool result the loop writes in place of a
// call it refused: the policy or a person, the loop guard, the trifecta
// guard, the tool-call cap, tool search, a pre-tool hook.
var refusalPrefixes = []string{"ToolPolicyDenied:", "RepeatedCall:", "EgressBlocked:", "ToolCallLimit:", "ToolNotOffered:", "ToolHookDenied:"}

// IsRefusal reports whether a tool result's content is one the loop wrote
// for a call it refused, not the tool's own answer (for trajectories and
// reports that tell the two apart).
func IsRefusal(content string) bool {
	for _, p := range refusalPrefixes {
		if strings.HasPrefix(content, p) {
			return true
		}
	}
	return false
}
